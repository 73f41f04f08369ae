package check

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/pmap"
	"github.com/policyrun/policyrun/policy"
)

type loopInfo struct {
	path *pathNode // the collection's path (its constant steps)
	x    policy.Expr
	line int
}

// stmts checks a statement list, changing st as the statements run.
func (c *checker) stmts(list []policy.Stmt, st *state) {
	// A block entered after the policy ended belongs to a statement that
	// was reported already (or follows one that was): one warning each.
	warned := st.dead
	for _, s := range list {
		if s == nil {
			continue
		}
		if st.dead && !warned {
			if _, bad := s.(*policy.BadStmt); !bad {
				d := diag.Warnf(s, CodeUnreachable, "unreachable statement")
				if c.fn != nil {
					why := "every branch above returns"
					if strings.HasPrefix(st.deadWhy, "return") {
						why = st.deadWhy
					}
					d = d.WithLabel("the function has already returned (%s)", why).
						WithHint("remove it, or make the return conditional with if")
				} else {
					d = d.WithLabel("the policy has already ended (%s)", st.deadWhy).
						WithHint("remove it, or make the drop or stop conditional with when")
				}
				c.report(d)
				warned = true
			}
		}
		c.stmt(s, st)
	}
}

func (c *checker) block(b *policy.Block, st *state) {
	if b == nil {
		return
	}
	c.openScope()
	c.stmts(b.Stmts, st)
	c.closeScope()
}

func (c *checker) stmt(s policy.Stmt, st *state) {
	if len(c.narrowed) > 0 {
		clear(c.narrowed)
	}
	if c.fn != nil && !c.funcStmt(s) {
		return
	}
	switch s := s.(type) {
	case *policy.ReturnStmt:
		c.ret(s, st)
	case *policy.SetStmt:
		c.set(s, st)
	case *policy.RemoveStmt:
		for _, t := range s.Targets {
			p, ok := c.editTarget(t, "remove", st)
			if !ok {
				continue
			}
			c.read(t, st)
			c.checkLoopEdit(p, t)
			c.write(st, p, nil, s.Pos(), true)
		}
	case *policy.RenameStmt:
		c.rename(s, st)
	case *policy.LiftStmt:
		c.lift(s, st)
	case *policy.SplitStmt:
		c.split(s, st)
	case *policy.DropStmt:
		c.end(s.Cond, st, "drop", s.Drop)
	case *policy.StopStmt:
		c.end(s.Cond, st, "stop", s.Stop)
	case *policy.IfStmt:
		c.ifStmt(s, st)
	case *policy.Block:
		c.block(s, st)
	case *policy.LetStmt:
		c.let(s, st)
	case *policy.ForStmt:
		c.forStmt(s, st)
	case *policy.StateStmt:
		c.stateStmt(s, st)
	}
}

// funcStmt reports a statement that a function body cannot hold: an edit
// (E0602), drop, stop or for (E0606). It returns whether s may be checked.
func (c *checker) funcStmt(s policy.Stmt) bool {
	var what string
	switch s := s.(type) {
	case *policy.SetStmt:
		if _, meta := policy.Unparen(s.Target).(*policy.MetaExpr); meta {
			c.impure(s, "sets metadata")
		} else {
			c.impure(s, "edits the record")
		}
		return false
	case *policy.RemoveStmt, *policy.RenameStmt, *policy.LiftStmt, *policy.SplitStmt:
		c.impure(s, "edits the record")
		return false
	case *policy.DropStmt:
		what = "drop"
	case *policy.StopStmt:
		what = "stop"
	case *policy.ForStmt:
		what = "for"
	case *policy.StateStmt:
		what = s.Kind.String()
	default:
		return true
	}
	c.report(diag.Errorf(span{s.Pos(), s.Pos().Advance(what)}, CodeFuncStmt, "%s in fn %s: a function body holds let, if and return", what, c.fn.fn.Name).
		WithHint("return a value, and let the policy %s with it", map[string]string{"drop": "drop", "stop": "stop", "for": "loop", "dedupe": "dedupe", "rate_limit": "rate_limit", "sample": "sample"}[what]))
	return false
}

func (c *checker) end(cond policy.Expr, st *state, what string, pos policy.Pos) {
	if cond == nil {
		if !st.dead {
			st.dead = true
			st.deadWhy = fmt.Sprintf("%s at line %d", what, pos.Line)
		}
		return
	}
	c.cond(cond, st, what+" when")
	// Below a conditional drop, its condition was false.
	*st = *c.narrow(cond, st, false).clone()
}

func (c *checker) ifStmt(s *policy.IfStmt, st *state) {
	c.cond(s.Cond, st, "if")
	then := c.narrow(s.Cond, st, true).clone()
	els := c.narrow(s.Cond, st, false).clone()
	c.block(s.Body, then)
	switch e := s.Else.(type) {
	case *policy.IfStmt:
		c.ifStmt(e, els)
	case *policy.Block:
		c.block(e, els)
	}
	*st = *merge(then, els)
}

func (c *checker) let(s *policy.LetStmt, st *state) {
	v := c.expr(s.Value, st)
	if s.Name == nil || s.Name.Name == "_" {
		return
	}
	if prev := c.scope.names[s.Name.Name]; prev != nil {
		c.report(diag.Errorf(s.Name, CodeRedeclared, "%s redeclared in this block", s.Name.Name).
			WithLabel("%s was first declared at line %d", s.Name.Name, prev.Decl.Pos().Line).
			WithHint("locals are immutable: choose another name, or use the first one"))
		return
	}
	c.declare(s.Name, LetVar, v)
}

func (c *checker) declare(id *policy.Ident, kind LocalKind, t *types.Type) *Local {
	c.locals++
	l := &Local{Name: id.Name, Kind: kind, Decl: id, Type: t, ID: c.locals}
	l.path = c.newPathNode(nil, seg{}, l)
	c.scope.names[id.Name] = l
	c.info.Defs[id] = l
	return l
}

// editTarget checks that e is a record field that statement what may
// edit, and returns its path.
func (c *checker) editTarget(e policy.Expr, what string, st *state) (path, bool) {
	p, ok := c.splitPath(e)
	switch {
	case ok && p.root && len(p.segs) > 0:
		return p, true
	case ok && p.local != nil && !isIdent(e):
		// (A bare name is a syntax error the parser reported: E0014.)
		c.report(diag.Errorf(e, CodeNotWritable, "cannot %s %s: locals are immutable", what, exprText(e)).
			WithLabel("%s is a local (declared at line %d)", p.local.Name, p.local.Decl.Pos().Line).
			WithHint("edit a record field such as .%s, or declare a new local with let", p.local.Name))
	case ok && p.meta != "":
		c.report(diag.Errorf(e, CodeNotWritable, "cannot %s %%%s: metadata can only be set", what, p.meta).
			WithHint("set %%%s = ... replaces it", p.meta))
	case ok && p.root:
		c.report(diag.Errorf(e, CodeNotWritable, "cannot %s the record itself", what).
			WithHint("name a field: .field"))
	case isIdent(e):
		// The parser reported a bare name (E0014); one diagnostic is enough.
	default:
		c.expr(e, st)
		c.report(diag.Errorf(e, CodeNotWritable, "cannot %s %s: it is not a record field", what, exprText(e)).
			WithHint("record fields are paths such as .a.b or .a[\"k\"]"))
	}
	return p, false
}

func isIdent(e policy.Expr) bool {
	_, ok := e.(*policy.Ident)
	return ok
}

// writable checks that every step of the record path p goes through a value
// that can hold it (a set creates missing parents, but cannot go through a
// scalar), typing dynamic indexes on the way.
func (c *checker) writable(p path, st *state) bool {
	t := st.root
	if f := st.fact(p.node(0)); f != nil {
		t = f
	}
	var xe policy.Expr = p.base
	for i, s := range p.segs {
		node := p.nodes[i]
		var it *types.Type
		if ie, ok := node.(*policy.IndexExpr); ok {
			it = c.expr(ie.Index, st)
			if it.IsInvalid() {
				return false
			}
		}
		base := types.NonOptional(t)
		switch base.Kind {
		case types.Bool, types.Int, types.Float, types.String, types.Bytes, types.Timestamp:
			c.report(diag.Errorf(node, CodeIntoScalar, "cannot write %s: %s is %s, not an object", exprText(node), exprText(xe), t).
				WithLabel("%s is %s%s", exprText(xe), t, c.declaredAt(xe)).
				WithHint("set %s itself, or remove it first", exprText(xe)))
			return false
		case types.Array:
			if s.kind == segField || s.kind == segDyn && types.NonOptional(it).Kind != types.Int && types.NonOptional(it).Kind != types.Any {
				c.report(diag.Errorf(node, CodeIndexType, "cannot write %s: %s is %s", exprText(node), exprText(xe), t).
					WithHint("%s", indexHint(base)))
				return false
			}
		case types.Map, types.Object:
			if s.kind == segInt || s.kind == segDyn && types.NonOptional(it).Kind != types.String && types.NonOptional(it).Kind != types.Any {
				c.report(diag.Errorf(node, CodeIndexType, "cannot write %s: %s is %s", exprText(node), exprText(xe), t).
					WithHint("%s", indexHint(base)))
				return false
			}
		}
		if it != nil && it.IsOptional() {
			c.report(c.optionalErr(node.(*policy.IndexExpr).Index, it, "a key"))
			return false
		}
		t = targetMember(t, s)
		if f := st.fact(p.node(i + 1)); f != nil {
			t = f
		}
		xe = node
	}
	return true
}

// targetMember is quietMember for the target of a write: a field a closed
// object lacks is absent (null), not unknown.
func targetMember(t *types.Type, s seg) *types.Type {
	if b := types.NonOptional(t); b.Kind == types.Object && !b.Open && s.kind == segField {
		if _, found := b.Field(s.name); !found {
			return types.NullType
		}
	}
	return quietMember(t, s)
}

// setRoot checks set . = E: the record becomes E, a map or an object
// (merge(., m), as_map(parse_json(.log)) ?? {}, .kubernetes), and from
// here on has E's type: after a map<any>, every field reads as any?. An
// OTLP record is a view of fixed keys and cannot be replaced (E0210).
func (c *checker) setRoot(s *policy.SetStmt, v *types.Type, st *state) {
	if v.IsInvalid() {
		return
	}
	if c.otlp {
		c.report(diag.Errorf(s.Target, CodeViewWrite, "cannot replace an OTLP record: it holds the fixed keys of the OTLP view").
			WithLabel("%s is %s", exprText(s.Value), v).
			WithHint("set the keys you mean, one by one: set .body = ..., set .attributes = ..."))
		return
	}
	b := types.NonOptional(v)
	if v.IsOptional() || b.Kind != types.Object && b.Kind != types.Map {
		d := diag.Errorf(s.Value, CodeNotWritable, "the record must be an object or a map, not %s", v).
			WithLabel("%s is %s", exprText(s.Value), v)
		x := exprText(s.Value)
		switch {
		case b.Kind == types.Any:
			d = d.WithHint("narrow it to a map: set . = as_map(%s) ?? {}", x)
		case v.Kind != types.Null && (b.Kind == types.Object || b.Kind == types.Map):
			d = d.WithHint("give a default for when it is absent: set . = %s ?? {}", x)
		default:
			d = d.WithHint("set a field instead: set .field = %s", x)
		}
		c.report(d)
		return
	}
	if s.Op == policy.QASSIGN {
		// The record is never absent: ?= could only mean never writing.
		c.report(diag.Errorf(span{s.OpPos, s.OpPos.Advance("?=")}, CodeNotWritable, "the record is never absent, so set . ?= would never write").
			WithHint("replace the record with set . = %s", exprText(s.Value)))
		return
	}
	st.root = v
	st.facts = pmap.Map[*pathNode, *types.Type]{}
	st.present = pmap.Map[*pathNode, bool]{}
	c.info.Types[s.Target] = v
}

// current is the type of the record path p now, for a write target.
func current(st *state, p path) *types.Type {
	return st.follow(st.root, p, targetMember)
}

func (c *checker) set(s *policy.SetStmt, st *state) {
	v := c.expr(s.Value, st)
	p, ok := c.splitPath(s.Target)
	if ok && p.meta != "" {
		want := metaType(p.meta)
		c.info.Types[s.Target] = want
		switch {
		case v.IsInvalid() || want.IsInvalid():
		case v.IsOptional() && types.AssignableTo(types.NonOptional(v), want):
			c.report(c.optionalErr(s.Value, v, "a "+want.String()))
		case !types.AssignableTo(v, want):
			d := diag.Errorf(s.Value, CodeMetaType, "%%%s is %s, cannot set it to %s", p.meta, want, v).
				WithLabel("%s is %s", exprText(s.Value), v)
			if p.meta == "time" {
				d = d.WithHint(`parse a string with parse_time(s, "%%Y-%%m-%%dT%%H:%%M:%%S%%z") ?? now()`)
			} else {
				d = d.WithHint("convert it: to_string(%s)", exprText(s.Value))
			}
			c.report(d)
		}
		return
	}
	if ok && p.root && len(p.segs) == 0 {
		c.setRoot(s, v, st)
		return
	}
	p, ok = c.editTarget(s.Target, "set", st)
	if !ok || !c.writable(p, st) || !c.viewWrite(p, s.Target, s.Value, false, v) {
		return
	}
	nt := v
	if s.Op == policy.QASSIGN {
		cur := current(st, p)
		switch {
		case cur.IsInvalid():
		case cur.Kind == types.Null:
		case !cur.IsOptional() && !v.IsInvalid():
			c.report(diag.Warnf(s.Target, CodeDeadInsert, "%s is never absent: set ?= never writes", exprText(s.Target)).
				WithLabel("%s is %s%s", exprText(s.Target), cur, c.declaredAtPath(p, st)).
				WithHint("write set %s = ... to overwrite it", exprText(s.Target)))
			nt = cur
		default:
			nt = types.Merge(types.NonOptional(cur), v)
		}
	}
	c.checkLoopEdit(p, s.Target)
	c.setAt[s.Set.Offset] = true
	c.write(st, p, nt, s.Set, false)
	c.info.Types[s.Target] = nt
}

// declaredAtPath is declaredAt for a write target that was not read.
func (c *checker) declaredAtPath(p path, st *state) string {
	if len(p.segs) == 0 || p.segs[len(p.segs)-1].kind != segField {
		return ""
	}
	parent := p
	parent.segs, parent.pn = p.segs[:len(p.segs)-1], p.pn[:len(p.segs)]
	t := types.NonOptional(current(st, parent))
	if t.Kind != types.Object {
		return ""
	}
	f, found := t.Field(p.segs[len(p.segs)-1].name)
	if !found || !f.Decl.IsValid() {
		return ""
	}
	if c.setAt[f.Decl.Offset] {
		return fmt.Sprintf(" (set at line %d)", f.Decl.Line)
	}
	return fmt.Sprintf(" (declared at line %d)", f.Decl.Line)
}

func (c *checker) rename(s *policy.RenameStmt, st *state) {
	from, okFrom := c.editTarget(s.From, "rename", st)
	var ft *types.Type
	if okFrom {
		ft, _ = c.read(s.From, st)
	}
	to, okTo := c.editTarget(s.To, "rename to", st)
	if !okFrom || !okTo || ft.IsInvalid() || !c.writable(to, st) || !c.viewWrite(to, s.To, s.From, true, ft) {
		return
	}
	c.checkLoopEdit(from, s.From)
	c.checkLoopEdit(to, s.To)
	nt := ft
	if ft.IsOptional() {
		// Absent P leaves Q as it was.
		if cur := current(st, to); cur.Kind == types.Null {
			nt = types.OptionalOf(ft)
		} else {
			nt = types.Merge(cur, types.NonOptional(ft))
		}
	}
	c.write(st, from, nil, s.Rename, true)
	c.setAt[s.Rename.Offset] = true
	c.write(st, to, nt, s.Rename, false)
	c.info.Types[s.To] = nt
}

func (c *checker) lift(s *policy.LiftStmt, st *state) {
	p, ok := c.editTarget(s.Target, "lift", st)
	if !ok {
		return
	}
	if p.segs[len(p.segs)-1].kind != segField {
		c.report(diag.Errorf(s.Target, CodeNotWritable, "lift moves a field's keys to its parent object; %s is an array element", exprText(s.Target)).
			WithHint("lift a field: lift .a prefix \"a_\""))
		return
	}
	t, _ := c.read(s.Target, st)
	if t.IsInvalid() {
		return
	}
	base := types.NonOptional(t)
	switch base.Kind {
	case types.Object, types.Map, types.Any, types.Null:
	default:
		c.report(diag.Errorf(s.Target, CodeLiftType, "lift needs an object or a map, and %s is %s", exprText(s.Target), t).
			WithLabel("%s is %s%s", exprText(s.Target), t, c.declaredAt(s.Target)).
			WithHint("lift moves the keys of a map up one level; to move one value, use rename %s to .new_name", exprText(s.Target)))
		return
	}
	c.checkLoopEdit(p, s.Target)
	prefix := ""
	if s.Prefix != nil {
		prefix = s.Prefix.Str
		c.info.Types[s.Prefix] = types.StringType
	}
	parent := p
	parent.segs, parent.pn = p.segs[:len(p.segs)-1], p.pn[:len(p.segs)]
	parent.nodes = p.nodes[:len(p.segs)-1]
	if !c.viewWrite(parent, s.Target, nil, false, nil) {
		return
	}
	if base.Kind == types.Object {
		for _, f := range base.Fields() {
			ft := f.Type
			if t.IsOptional() {
				ft = types.OptionalOf(ft)
			}
			child := parent
			child.segs = append(parent.segs[:len(parent.segs):len(parent.segs)], seg{kind: segField, name: prefix + f.Name})
			child.pn = append(parent.pn[:len(parent.pn):len(parent.pn)], nil)
			child.pn[len(child.segs)] = c.child(parent.pn[len(parent.segs)], child.segs[len(child.segs)-1])
			c.write(st, child, ft, s.Lift, false)
		}
	}
	if base.Kind != types.Object || base.Open {
		// Keys unknown here move up: the parent may now hold any key.
		if pt := types.NonOptional(current(st, parent)); pt.Kind == types.Object && !pt.Open {
			open := *pt
			open.Open = true
			c.write(st, parent, &open, s.Lift, false)
		}
	}
	c.setAt[s.Lift.Offset] = true
	c.write(st, p, nil, s.Lift, true)
}

func (c *checker) forStmt(s *policy.ForStmt, st *state) {
	xt := c.expr(s.X, st)
	kt, vt := types.InvalidType, types.InvalidType
	base := types.NonOptional(xt)
	switch {
	case xt.IsInvalid():
	case base.Kind == types.Map:
		kt, vt = types.StringType, base.Elem
	case base.Kind == types.Object:
		kt = types.StringType
		vt = fieldsJoin(base)
		if base.Open {
			vt = types.Merge(vt, types.AnyType)
		}
	case base.Kind == types.Array:
		kt, vt = types.IntType, base.Elem
	case base.Kind == types.Null:
		kt, vt = types.StringType, types.NeverType
	case base.Kind == types.Any:
		c.report(anyErr(s.X, xt, "a collection", types.MapOf(types.AnyType)))
	default:
		c.report(diag.Errorf(s.X, CodeForType, "cannot iterate over %s", xt).
			WithLabel("%s is %s%s", exprText(s.X), xt, c.declaredAt(s.X)).
			WithHint("for iterates over an array, a map or an object"))
	}
	pushed := false
	if p, ok := c.splitPath(s.X); ok && p.root {
		c.loops = append(c.loops, loopInfo{path: p.node(p.constLen()), x: s.X, line: s.For.Line})
		pushed = true
	}
	c.openScope()
	if s.Key != nil && s.Key.Name != "_" {
		c.declare(s.Key, ForKey, kt)
	}
	if s.Value != nil && s.Value.Name != "_" {
		c.declare(s.Value, ForValue, vt)
	}
	// The body runs zero or more times: find the state it can start in
	// (a fixpoint over its edits), quietly, then check it once for real.
	// Inside another loop's quiet passes one pass is enough: the outer
	// fixpoint repeats it, and nested loops stay linear in their depth.
	passes := 4
	if c.quiet > 0 {
		passes = 0
	}
	cur := st.clone()
	for range passes {
		c.quiet++
		bs := cur.clone()
		c.block(s.Body, bs)
		c.quiet--
		next := merge(cur, bs)
		if sameState(next, cur) {
			break
		}
		cur = next
	}
	final := cur.clone()
	c.block(s.Body, final)
	*st = *merge(cur, final)
	c.closeScope()
	if pushed {
		c.loops = c.loops[:len(c.loops)-1]
	}
}

// checkLoopEdit reports an edit of the collection an enclosing for iterates.
func (c *checker) checkLoopEdit(p path, node policy.Expr) {
	if !p.root {
		return
	}
	k := p.node(p.constLen())
	for _, l := range c.loops {
		if k.under(l.path) || l.path.under(k) {
			c.report(diag.Errorf(node, CodeLoopEdit, "cannot edit %s while iterating over %s", exprText(node), exprText(l.x)).
				WithLabel("the for at line %d iterates over %s", l.line, exprText(l.x)).
				WithHint("iterate over a copy: let items = %s, then for ... in items", exprText(l.x)))
			return
		}
	}
}
