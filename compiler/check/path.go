package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
)

// read types a path-shaped expression (the record, a local, metadata, or a
// field or index step over any expression). It returns the narrowed type and
// the guard: the un-narrowed type the value must have at run time (nil when
// the base is not the record).
func (c *checker) read(e policy.Expr, st *state) (t, guard *types.Type) {
	t, guard, _ = c.readRef(e, st)
	return t, guard
}

// pathRef is what readRef learned of the path an expression is, step by
// step, so that reading a path of n steps costs O(n): its node (nil when it
// is not a path of constant steps from the record or a local) and the node
// of its constant steps (nil when it is not a path at all).
type pathRef struct {
	node, prefix *pathNode
}

func (c *checker) step(r pathRef, s seg) pathRef {
	if r.node == nil || s.kind == segDyn {
		return pathRef{prefix: r.prefix}
	}
	n := c.child(r.node, s)
	return pathRef{node: n, prefix: n}
}

func (c *checker) readRef(e policy.Expr, st *state) (t, guard *types.Type, r pathRef) {
	if c.fn != nil {
		if what := recordAccess(e); what != "" {
			c.impure(e, what)
			c.info.Types[e] = types.InvalidType
			return types.InvalidType, nil, pathRef{}
		}
	}
	switch e := e.(type) {
	case *policy.RootExpr:
		t, guard = st.root, st.root
		if f := st.fact(c.record); f != nil {
			t = f
		}
		c.info.Guards[e] = guard
		r = pathRef{c.record, c.record}
	case *policy.Ident:
		l := c.lookup(e.Name)
		if l == nil {
			if k := c.consts[e.Name]; k != nil {
				t = c.constRef(e, k)
				c.info.Types[e] = t
				return t, nil, pathRef{}
			}
			c.undefined(e)
			t = types.InvalidType
			break
		}
		c.info.Uses[e] = l
		t = l.Type
		if f := st.fact(l.path); f != nil {
			t = f
		}
		r = pathRef{l.path, l.path}
	case *policy.MetaExpr:
		t = metaType(e.Name)
	case *policy.FieldExpr:
		if qual, ok := c.qualified(e); ok {
			t = c.qualifiedConst(e, qual)
			c.info.Types[e] = t
			return t, nil, pathRef{}
		}
		xt, xg, xr := c.operand(e.X, st)
		s := seg{kind: segField, name: e.Name}
		t = c.member(e, e.X, xt, s, nil)
		if xg != nil {
			guard = quietMember(xg, s)
			c.presentGuard(e, xg, s)
		} else {
			c.presentGuard(e, xt, s) // through a local: its type says the same
		}
		r = c.step(xr, s)
	case *policy.IndexExpr:
		xt, xg, xr := c.operand(e.X, st)
		it := c.expr(e.Index, st)
		s, isConst := constIndex(e.Index)
		if !isConst {
			s = seg{kind: segDyn}
		}
		t = c.member(e, e.X, xt, s, it)
		if xg != nil {
			guard = quietMember(xg, s)
			c.presentGuard(e, xg, s)
		} else {
			c.presentGuard(e, xt, s)
		}
		r = c.step(xr, s)
	default:
		return c.expr(e, st), nil, pathRef{}
	}
	if guard != nil {
		// A path from the record.
		c.info.Guards[e] = guard
		if f := st.fact(r.node); f != nil && !t.IsInvalid() {
			t = f
		}
		r.prefix.markRead()
	} else if r.node != nil && r.node.local != nil && r.node.depth > 0 {
		if f := st.fact(r.node); f != nil && !t.IsInvalid() {
			t = f
		}
	}
	if t.IsOptional() && st.isPresent(r.node) {
		c.presentReads[e] = true
	}
	c.info.Types[e] = t
	return t, guard, r
}

// recordAccess says what the path e reads when it is the record or
// metadata ("reads the record", "reads %tag"), which a function may not;
// "" for any other path.
func recordAccess(e policy.Expr) string {
	for {
		switch x := e.(type) {
		case *policy.ParenExpr:
			e = x.X
		case *policy.FieldExpr:
			e = x.X
		case *policy.IndexExpr:
			e = x.X
		case *policy.RootExpr:
			return "reads the record"
		case *policy.MetaExpr:
			return "reads %" + x.Name
		default:
			return ""
		}
	}
}

// operand types the X of a field or index step.
func (c *checker) operand(e policy.Expr, st *state) (*types.Type, *types.Type, pathRef) {
	switch e.(type) {
	case *policy.RootExpr, *policy.Ident, *policy.MetaExpr, *policy.FieldExpr, *policy.IndexExpr:
		return c.readRef(e, st)
	}
	return c.expr(e, st), nil, pathRef{}
}

func metaType(name string) *types.Type {
	switch name {
	case "tag":
		return types.StringType
	case "time":
		return types.TimestampType
	}
	return types.InvalidType // the parser reported it (E0015)
}

// quietMember follows one step through t without reporting anything: the
// guard computation, which mirrors member.
// presentGuard records the guard of the step s from a container whose
// guard is xg, when xg is optional and the step's value is required where
// the container is present (Info.PresentGuards).
func (c *checker) presentGuard(e policy.Expr, xg *types.Type, s seg) {
	if xg.Kind != types.Optional {
		return
	}
	if g := quietMember(xg.Elem, s); !g.IsOptional() && !g.IsInvalid() && g.Kind != types.Any && g.Kind != types.Never && g.Kind != types.Null {
		c.info.PresentGuards[e] = g
	}
}

func quietMember(t *types.Type, s seg) *types.Type {
	if t.IsInvalid() {
		return t
	}
	switch t.Kind {
	case types.Optional:
		return types.OptionalOf(quietMember(t.Elem, s))
	case types.Null, types.Never:
		return types.NullType
	case types.Any:
		return types.OptionalOf(types.AnyType)
	case types.Object:
		if s.kind == segField {
			if f, found := t.Field(s.name); found {
				return f.Type
			}
		}
		if s.kind == segDyn && !t.Open && t.NumFields() > 0 {
			return types.OptionalOf(fieldsJoin(t))
		}
		return types.OptionalOf(types.AnyType)
	case types.Map:
		return types.OptionalOf(t.Elem)
	case types.Array:
		return types.OptionalOf(t.Elem)
	}
	return types.InvalidType
}

func fieldsJoin(t *types.Type) *types.Type {
	var acc *types.Type = types.NeverType
	for _, f := range t.Fields() {
		acc = types.Merge(acc, f.Type)
	}
	return acc
}

// member types one step s (a field, or an index whose type is it) through
// a value of type x, reporting what does not fit. e is the whole step and
// xe its operand.
func (c *checker) member(e, xe policy.Expr, x *types.Type, s seg, it *types.Type) *types.Type {
	if x.IsInvalid() || it != nil && it.IsInvalid() {
		return types.InvalidType
	}
	ie, isIndex := e.(*policy.IndexExpr)
	switch x.Kind {
	case types.Optional:
		r := c.member(e, xe, x.Elem, s, it)
		return types.OptionalOf(r)
	case types.Null, types.Never:
		return types.NullType
	}
	// A dynamic index must be a string (key) or an int (array index).
	if s.kind == segDyn {
		base := types.NonOptional(it)
		want := "string or int"
		switch x.Kind {
		case types.Array:
			want = "int"
		case types.Map, types.Object:
			want = "string"
		}
		ok := base.Kind == types.String && want != "int" || base.Kind == types.Int && want != "string"
		if !ok && base.Kind != types.Any {
			c.report(diag.Errorf(ie.Index, CodeIndexType, "cannot index %s with %s", x, it).
				WithLabel("%s is %s", exprText(xe), x).
				WithHint("%s", indexHint(x)))
			return types.InvalidType
		}
		if it.IsOptional() {
			c.report(c.optionalErr(ie.Index, it, "an index"))
			return types.InvalidType
		}
		if base.Kind == types.Any {
			c.report(anyErr(ie.Index, it, "an index", types.StringType))
			return types.InvalidType
		}
	}
	switch x.Kind {
	case types.Any:
		return types.OptionalOf(types.AnyType)
	case types.Object:
		switch s.kind {
		case segField:
			if f, found := x.Field(s.name); found {
				return f.Type
			}
			if x.Open {
				c.nearField(e, xe, x, s.name)
				return types.OptionalOf(types.AnyType)
			}
			c.unknownField(e, xe, x, s.name)
			return types.InvalidType
		case segInt:
			c.report(diag.Errorf(ie.Index, CodeIndexType, "cannot index an object with int").
				WithLabel("%s is %s", exprText(xe), x).WithHint("%s", indexHint(x)))
			return types.InvalidType
		}
		return quietMember(x, s)
	case types.Map:
		if s.kind == segInt {
			c.report(diag.Errorf(ie.Index, CodeIndexType, "cannot index %s with int", x).
				WithLabel("%s is %s", exprText(xe), x).WithHint("%s", indexHint(x)))
			return types.InvalidType
		}
		return types.OptionalOf(x.Elem)
	case types.Array:
		if s.kind == segField {
			if isIndex {
				c.report(diag.Errorf(ie.Index, CodeIndexType, "cannot index %s with string", x).
					WithLabel("%s is %s", exprText(xe), x).WithHint("%s", indexHint(x)))
			} else {
				fe := e.(*policy.FieldExpr)
				c.report(diag.Errorf(span{fe.Dot, fe.End()}, CodeIntoScalar, "%s is an array and has no field %s", exprText(xe), s.name).
					WithLabel("%s is %s", exprText(xe), x).
					WithHint("index an array with an int: %s[0]", exprText(xe)))
			}
			return types.InvalidType
		}
		return types.OptionalOf(x.Elem)
	}
	c.report(diag.Errorf(e, CodeIntoScalar, "cannot read %s: %s is %s, not an object", exprText(e), exprText(xe), x).
		WithLabel("%s is %s%s", exprText(xe), x, c.declaredAt(xe)).
		WithHint("only objects, maps and arrays have fields or elements"))
	return types.InvalidType
}

func indexHint(x *types.Type) string {
	switch x.Kind {
	case types.Array:
		return "arrays are indexed by int: a[0], a[-1] for the last element"
	case types.Map, types.Object:
		return `maps and objects are indexed by string: m["key"]`
	}
	return "index an array with an int or a map with a string"
}

func (c *checker) unknownField(e, xe policy.Expr, x *types.Type, name string) {
	// Closest does not depend on the order of the names.
	names := make([]string, 0, x.NumFields())
	x.EachField(func(f types.Field) { names = append(names, f.Name) })
	var at policy.Node = e
	if fe, ok := e.(*policy.FieldExpr); ok {
		at = span{fe.Dot, fe.End()}
	} else if ie, ok := e.(*policy.IndexExpr); ok {
		at = ie.Index
	}
	d := diag.Errorf(at, CodeUnknownField, "%s has no field %s", describe(xe), quoteName(name))
	view := c.viewOf(xe)
	switch {
	case view != nil:
		d = d.WithLabel("%s has only the keys of the OTLP view", describe(xe))
	case isRoot(xe):
		d = d.WithLabel("the schema declares a closed record")
	// (An object of more than 10 fields takes more than 60 bytes to write:
	// "a: int" and ", " each. Large ones are not written out to find it.)
	case x.NumFields() <= 10 && len(x.String()) <= 60:
		d = d.WithLabel("%s is a closed object: %s", exprText(xe), x)
	default:
		d = d.WithLabel("%s is a closed object", exprText(xe))
	}
	switch s := suggest.Closest(name, names); {
	case s != "":
		d = d.WithHint("did you mean %s?", stepText(xe, s))
	case view != nil:
		d = d.WithHint("the keys are %s; other values are in %s", andList(viewNames(view)), stepText(xe, "attributes"))
	default:
		d = d.WithHint("declare it in the schema, or end the object with ... to allow other keys")
	}
	c.report(d)
}

func isRoot(e policy.Expr) bool {
	_, ok := e.(*policy.RootExpr)
	return ok
}

func describe(e policy.Expr) string {
	if _, ok := e.(*policy.RootExpr); ok {
		return "the record"
	}
	return exprText(e)
}

// declaredAt returns " (declared at line N)" or " (set at line N)" for a
// field path whose declaration is known, or "".
func (c *checker) declaredAt(e policy.Expr) string {
	pos, ok := c.declPos(e)
	if !ok {
		return ""
	}
	if c.setAt[pos.Offset] {
		return fmt.Sprintf(" (set at line %d)", pos.Line)
	}
	return fmt.Sprintf(" (declared at line %d)", pos.Line)
}

// declPos finds where the field a path reads was declared, following the
// record's current type.
func (c *checker) declPos(e policy.Expr) (policy.Pos, bool) {
	for {
		pe, ok := e.(*policy.ParenExpr)
		if !ok {
			break
		}
		e = pe.X
	}
	p, ok := c.splitPath(e)
	if !ok || len(p.segs) == 0 || p.segs[len(p.segs)-1].kind != segField {
		return policy.Pos{}, false
	}
	var xt *types.Type
	if len(p.segs) == 1 {
		xt = c.info.Types[p.base]
		if p.root {
			xt = c.info.Guards[p.base]
		}
	} else {
		xt = c.info.Guards[p.nodes[len(p.nodes)-2]]
		if xt == nil {
			xt = c.info.Types[p.nodes[len(p.nodes)-2]]
		}
	}
	if xt == nil {
		return policy.Pos{}, false
	}
	xt = types.NonOptional(xt)
	if xt.Kind != types.Object {
		return policy.Pos{}, false
	}
	f, found := xt.Field(p.segs[len(p.segs)-1].name)
	if !found || !f.Decl.IsValid() {
		return policy.Pos{}, false
	}
	return f.Decl, true
}

// nearField warns about a read of a key an open object does not declare
// when the object declares one that differs only by a slip (.stauts for
// .status, .Level for .level): the read gives absent on every record, and
// .stauts == 500 is silently always false.
func (c *checker) nearField(e, xe policy.Expr, x *types.Type, name string) {
	fields := c.typos.candidates(x, name)
	for _, f := range fields {
		if !likelyTypo(name, f.Name) {
			continue
		}
		var at policy.Node = e
		if fe, ok := e.(*policy.FieldExpr); ok {
			at = span{fe.Dot, fe.End()}
		} else if ie, ok := e.(*policy.IndexExpr); ok {
			at = ie.Index
		}
		c.report(diag.Warnf(at, CodeNearField, "%s does not declare %s, but declares %s", describe(xe), quoteName(name), quoteName(f.Name)).
			WithLabel("%s reads as any? (the object is open)", exprText(e)).
			WithHint("did you mean %s? If not, declare %s in the schema", stepText(xe, f.Name), quoteName(name)))
		return
	}
}

// likelyTypo reports whether a and b differ by a slip of the hand: only in
// case, by two neighbouring letters swapped, or, in names of six bytes or
// more, by one letter (but not by a plural s: host and hosts may both be).
func likelyTypo(a, b string) bool {
	if a == b {
		return false
	}
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la == lb {
		return true
	}
	if len(la) == len(lb) {
		diff := -1
		for i := 0; i < len(la); i++ {
			if la[i] != lb[i] {
				if diff >= 0 {
					// A second difference: a swap of neighbours only.
					return i == diff+1 && la[diff] == lb[i] && la[i] == lb[diff] && la[i+1:] == lb[i+1:]
				}
				diff = i
			}
		}
		return len(la) >= 6
	}
	short, long := la, lb
	if len(short) > len(long) {
		short, long = long, short
	}
	if len(long) != len(short)+1 || len(short) < 6 || long == short+"s" {
		return false
	}
	return suggest.Distance(short, long) == 1
}

// typoIndex finds the fields of a large object that may be likelyTypo of a
// name without looking at every field: it holds every field name the
// policy's types can have (from the schema, map literals and writes) under
// the keys likelyTypo's slips share, the lower-cased name with at most one
// byte left out.
type typoIndex struct {
	keys  map[string][]string
	known map[string]bool
	long  []string // names too long to index, looked at one by one
}

// smallObject is the size up to which candidates gives all the fields.
const smallObject = 32

// maxIndexed is the length of the longest name indexed by its keys.
const maxIndexed = 64

func typoKeys(name string, yield func(string)) {
	l := strings.ToLower(name)
	yield(l)
	for i := range len(l) {
		yield(l[:i] + l[i+1:])
	}
}

// add records that some object may have a field name.
func (x *typoIndex) add(name string) {
	if x.known[name] {
		return
	}
	if x.known == nil {
		x.known, x.keys = map[string]bool{}, map[string][]string{}
	}
	x.known[name] = true
	if len(name) > maxIndexed {
		x.long = append(x.long, name)
		return
	}
	typoKeys(name, func(k string) {
		if l := x.keys[k]; len(l) == 0 || l[len(l)-1] != name {
			x.keys[k] = append(l, name)
		}
	})
}

// candidates returns, in declaration order, the fields of object t that
// may be a slip for name: all of them for a small object.
func (x *typoIndex) candidates(t *types.Type, name string) []types.Field {
	if t.NumFields() <= smallObject {
		return t.Fields()
	}
	seen := map[string]bool{}
	var out []types.Field
	try := func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		if f, ok := t.Field(n); ok {
			out = append(out, f)
		}
	}
	if len(name) <= maxIndexed+1 {
		typoKeys(name, func(k string) {
			for _, n := range x.keys[k] {
				try(n)
			}
		})
	}
	if len(name) >= maxIndexed {
		for _, n := range x.long {
			try(n)
		}
	}
	order := func(f types.Field) int { o, _ := t.FieldOrder(f.Name); return o }
	slices.SortFunc(out, func(a, b types.Field) int { return order(a) - order(b) })
	return out
}
