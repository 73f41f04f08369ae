package policyrunprocessor

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/types"
	policysrc "github.com/policyrun/policyrun/policy"
)

// A plan is a policy compiled for pdata (docs/collector.md, "Two paths"):
// its statements, when every one is of the kinds below, turned into a tree
// that reads the log record's pdata directly and writes to it directly.
// A record runs in two steps: deciding walks the statements and reads
// what they read, collecting the writes and removals, and may give up
// (bail) where the engine could fault or where pdata holds what the plan
// does not handle (a map where a scalar is read, a type the schema does
// not declare); applying then makes the writes. Nothing is written before
// the decision, so giving up leaves the record as it came and the general
// path (projection, VM, Differ) runs it: faults, and everything the plan
// does not know, keep the engine's exact semantics, and no undo log is
// needed. Compiling refuses a policy that reads a path an earlier
// statement writes, so deciding may read the record as it came.
//
// The kinds: set (= and ?=) and remove of an attribute or a body-map key
// by a constant key; lift of one holding a flat map; drop and stop, with
// or without when; if/else. Their
// expressions: literals, reads of severity_number, severity_text, an
// attribute, a body-map key, a resource or scope attribute and the scope's
// name and version, ??, ==, !=, <, <=, >, >=, &&, || and !.
type plan struct {
	stmts []pstmt
	// groupDrop is the condition of a first statement `drop when C` whose
	// C reads only the resource and the scope: evaluated once per group.
	groupDrop *pexpr
	// distinct: no two statements write one location and nothing lifts,
	// so a decision's actions are each on a key of their own.
	distinct bool
	// liftDistinct: as distinct but for one lift with a prefix that no
	// other key written in its map starts with: its keys are then on keys
	// of their own. (A pdata map may hold a key twice; the lift's actions
	// on it are puts, made in order, so the last counts as it must.)
	liftDistinct bool
	// gate is the condition of a policy that is one `if C { … }` with no
	// else: a record for which C is false is left as it came, so it is
	// tested alone first, without deciding (most records of a
	// conditional edit go no further).
	gate cond
	// edits is the whole policy when it is an edits block; gateEdits is
	// the gated if's body when that is one (plan_edits.go).
	edits, gateEdits *edits
}

type stmtKind uint8

const (
	sSet stmtKind = iota
	sSetIfNull
	sRemove
	sLift
	sDrop
	sStop
	sIf
	// sGeneral is a statement the plan does not run: a record that
	// reaches it gives up, and the general path runs it from the policy's
	// start. What follows it in its block is not compiled.
	sGeneral
)

type pstmt struct {
	kind    stmtKind
	prefix  string // lift
	cond    *pexpr // drop, stop (nil: always), if
	test    cond   // cond, compiled
	targets []ploc // set: one; remove: each
	value   *pexpr // set
	then    []pstmt
	els     []pstmt
}

// where is the part of a log record a path reads or writes.
type where uint8

const (
	wAttributes where = iota // .attributes.K
	wBody                    // .body.K, the body a map
	wResAttributes
	wScopeAttributes
	wSeverityNumber
	wSeverityText
	wScopeName
	wScopeVersion
)

// ploc is a location: a part of the record and, for the maps, a key.
type ploc struct {
	w   where
	key string
}

// group reports whether l is in the resource or the scope: the same for
// every record of a group.
func (l ploc) group() bool {
	switch l.w {
	case wResAttributes, wScopeAttributes, wScopeName, wScopeVersion:
		return true
	}
	return false
}

type exprOp uint8

const (
	eLit exprOp = iota
	eRead
	eCoalesce
	eCmp
	eAnd
	eOr
	eNot
)

type pexpr struct {
	op   exprOp
	lit  pval
	loc  ploc
	cmp  policysrc.Token
	x, y *pexpr
	// For a read: what the engine requires of the stored value (the
	// checker's guard): its kind, and whether absent or null pass.
	want     types.Kind
	optional bool
	// container is, for a body-map key, what the body must be: a body
	// that is neither a map nor absent gives up (a fault, or a read the
	// plan does not make).
	bodyOptional bool
	// asFloat: the value is used as a float (an int literal where the
	// checker typed it float, a float field read as an int).
	asFloat bool
	group   bool // reads only the resource and the scope
	// present is, for a body-map key whose body is declared optional, the
	// guard where the body is there (check.Info.PresentGuards).
	present *pexpr
}

// compilePlan compiles f for pdata. A statement of a kind the plan does
// not run becomes sGeneral, so that only the records that reach it take
// the general path (a policy that drops most records first, or does the
// rare thing in a branch); why names the first such statement. When every
// record would reach one (nothing before it can end the run) there is no
// plan: deciding would only add to the general path's work.
func compilePlan(f *policysrc.File, info *check.Info) (p *plan, why string) {
	c := planCompiler{info: info, written: map[ploc]bool{}}
	stmts := c.stmts(f.Stmts)
	if !mayFinish(stmts, true) {
		return nil, c.general
	}
	compileTests(stmts)
	p = &plan{stmts: stmts, distinct: distinctTargets(stmts, map[ploc]bool{})}
	p.liftDistinct = !p.distinct && liftDistinct(stmts)
	if len(stmts) > 0 && stmts[0].kind == sDrop && stmts[0].cond != nil && stmts[0].cond.group {
		p.groupDrop = stmts[0].cond
	}
	if len(stmts) == 1 && stmts[0].kind == sIf && len(stmts[0].els) == 0 {
		p.gate = stmts[0].test
		p.gateEdits = compileEdits(stmts[0].then)
	}
	p.edits = compileEdits(stmts)
	return p, c.general
}

// mayFinish reports whether a run of stmts can end without reaching an
// sGeneral that its block reaches whatever the record: it ends (atEnd) or
// some statement before it may drop or stop the record.
func mayFinish(stmts []pstmt, atEnd bool) bool {
	for i := range stmts {
		switch st := &stmts[i]; st.kind {
		case sGeneral:
			return false
		case sDrop, sStop:
			return true
		case sIf:
			if mayFinish(st.then, false) || mayFinish(st.els, false) {
				return true
			}
		}
	}
	return atEnd
}

// distinctTargets reports whether no two of stmts (and the blocks in
// them) write one location, and none lifts, adding their targets to seen.
func distinctTargets(stmts []pstmt, seen map[ploc]bool) bool {
	for i := range stmts {
		st := &stmts[i]
		if st.kind == sLift {
			return false
		}
		for _, t := range st.targets {
			if seen[t] {
				return false
			}
			seen[t] = true
		}
		if !distinctTargets(st.then, seen) || !distinctTargets(st.els, seen) {
			return false
		}
	}
	return true
}

// liftDistinct reports whether stmts hold one lift, with a prefix, and
// otherwise write each location once, none of them a key of the lift's
// map that starts with its prefix (the lift's own key included).
func liftDistinct(stmts []pstmt) bool {
	var lift *pstmt
	var others []ploc
	var walk func([]pstmt) bool
	walk = func(ss []pstmt) bool {
		for i := range ss {
			st := &ss[i]
			if st.kind == sLift {
				if lift != nil || st.prefix == "" {
					return false
				}
				lift = st
			}
			others = append(others, st.targets...)
			if !walk(st.then) || !walk(st.els) {
				return false
			}
		}
		return true
	}
	if !walk(stmts) || lift == nil {
		return false
	}
	seen := map[ploc]bool{}
	for _, l := range others {
		if seen[l] || l.w == lift.targets[0].w && strings.HasPrefix(l.key, lift.prefix) {
			return false
		}
		seen[l] = true
	}
	return true
}

// compileTests compiles the statements' conditions to closures.
func compileTests(stmts []pstmt) {
	for i := range stmts {
		st := &stmts[i]
		if st.cond != nil {
			st.test = compileCond(st.cond)
		}
		compileTests(st.then)
		compileTests(st.els)
	}
}

type planCompiler struct {
	info    *check.Info
	written map[ploc]bool
	body    bool // a body-map key was written
	attrs   bool // a lift wrote attribute keys it cannot name
	// why is what keeps the statement being compiled from the plan;
	// general is the first such reason, for the log.
	why, general string
}

func (c *planCompiler) refuse(n policysrc.Node, format string, args ...any) {
	if c.why == "" {
		c.why = fmt.Sprintf("line %d: ", n.Pos().Line) + fmt.Sprintf(format, args...)
	}
}

// stmts compiles a block up to and including its first statement the
// plan does not run, as sGeneral.
func (c *planCompiler) stmts(ss []policysrc.Stmt) []pstmt {
	var out []pstmt
	for _, s := range ss {
		st := c.stmt(s)
		if c.why != "" {
			if c.general == "" {
				c.general = c.why
			}
			c.why = ""
			return append(out, pstmt{kind: sGeneral})
		}
		out = append(out, st)
	}
	return out
}

func (c *planCompiler) stmt(s policysrc.Stmt) pstmt {
	switch s := s.(type) {
	case *policysrc.SetStmt:
		kind := sSet
		if s.Op == policysrc.QASSIGN {
			kind = sSetIfNull
		}
		// The value is read before the target is written; ?= reads the
		// target too.
		v := c.expr(s.Value)
		loc, ok := c.target(s.Target)
		if kind == sSetIfNull {
			c.noteRead(s.Target, loc)
		}
		if ok && (loc.w == wAttributes || loc.w == wBody) {
			c.noteWrite(loc)
			return pstmt{kind: kind, targets: []ploc{loc}, value: v}
		}
		c.refuse(s, "set writes what the plan does not")
	case *policysrc.RemoveStmt:
		st := pstmt{kind: sRemove}
		for _, t := range s.Targets {
			loc, ok := c.target(t)
			if !ok || loc.w != wAttributes && loc.w != wBody {
				c.refuse(s, "remove of what the plan does not write")
				break
			}
			c.noteWrite(loc)
			st.targets = append(st.targets, loc)
		}
		return st
	case *policysrc.LiftStmt:
		loc, ok := c.target(s.Target)
		if !ok || loc.w != wAttributes && loc.w != wBody {
			c.refuse(s, "lift of what the plan does not write")
			break
		}
		// It reads the key and writes any key of its map: no later read
		// of that map is of the record as it came.
		c.noteRead(s.Target, loc)
		c.noteWrite(loc)
		if loc.w == wAttributes {
			c.attrs = true
		}
		st := pstmt{kind: sLift, targets: []ploc{loc}}
		if s.Prefix != nil {
			st.prefix = s.Prefix.Str
		}
		return st
	case *policysrc.DropStmt:
		st := pstmt{kind: sDrop}
		if s.Cond != nil {
			st.cond = c.expr(s.Cond)
		}
		return st
	case *policysrc.StopStmt:
		st := pstmt{kind: sStop}
		if s.Cond != nil {
			st.cond = c.expr(s.Cond)
		}
		return st
	case *policysrc.IfStmt:
		st := pstmt{kind: sIf, cond: c.expr(s.Cond)}
		if c.why != "" {
			break
		}
		st.then = c.stmts(s.Body.Stmts)
		switch e := s.Else.(type) {
		case nil:
		case *policysrc.Block:
			st.els = c.stmts(e.Stmts)
		default: // else if: a block of one
			st.els = c.stmts([]policysrc.Stmt{e})
		}
		return st
	default:
		c.refuse(s, "%s runs on the general path", nodeName(s))
	}
	return pstmt{}
}

// nodeName names a statement or expression the plan does not run.
func nodeName(n policysrc.Node) string {
	switch n := n.(type) {
	case *policysrc.RenameStmt:
		return "rename"
	case *policysrc.LetStmt:
		return "let"
	case *policysrc.ForStmt:
		return "for"
	case *policysrc.CallExpr:
		return n.Fun.Name + "()"
	case *policysrc.MetaExpr:
		return "%" + n.Name
	case *policysrc.Ident:
		return "a variable"
	case *policysrc.ListLit:
		return "a list"
	case *policysrc.MapLit:
		return "a map"
	}
	return fmt.Sprintf("%T", n)
}

func (c *planCompiler) noteWrite(l ploc) {
	c.written[l] = true
	if l.w == wBody {
		c.body = true
	}
}

// noteRead refuses a read of what an earlier statement wrote: deciding
// reads the record as it came.
func (c *planCompiler) noteRead(n policysrc.Node, l ploc) {
	if c.written[l] || l.w == wBody && c.body || l.w == wAttributes && c.attrs {
		c.refuse(n, "a read of a path an earlier statement writes")
	}
}

// target resolves a path the plan can write or read: .K.K2 with constant
// keys.
func (c *planCompiler) target(e policysrc.Expr) (ploc, bool) {
	keys, ok := pathKeys(e)
	if !ok {
		return ploc{}, false
	}
	switch {
	case len(keys) == 1 && keys[0] == "severity_number":
		return ploc{w: wSeverityNumber}, true
	case len(keys) == 1 && keys[0] == "severity_text":
		return ploc{w: wSeverityText}, true
	case len(keys) == 2 && keys[0] == "attributes":
		return ploc{w: wAttributes, key: keys[1]}, true
	case len(keys) == 2 && keys[0] == "body":
		return ploc{w: wBody, key: keys[1]}, true
	case len(keys) == 3 && keys[0] == "resource" && keys[1] == "attributes":
		return ploc{w: wResAttributes, key: keys[2]}, true
	case len(keys) == 3 && keys[0] == "scope" && keys[1] == "attributes":
		return ploc{w: wScopeAttributes, key: keys[2]}, true
	case len(keys) == 2 && keys[0] == "scope" && keys[1] == "name":
		return ploc{w: wScopeName}, true
	case len(keys) == 2 && keys[0] == "scope" && keys[1] == "version":
		return ploc{w: wScopeVersion}, true
	}
	return ploc{}, false
}

// pathKeys returns the keys of a record path of constant keys.
func pathKeys(e policysrc.Expr) ([]string, bool) {
	switch e := e.(type) {
	case *policysrc.RootExpr:
		return nil, true
	case *policysrc.FieldExpr:
		keys, ok := pathKeys(e.X)
		return append(keys, e.Name), ok
	case *policysrc.IndexExpr:
		lit, isLit := e.Index.(*policysrc.BasicLit)
		if !isLit || lit.Kind != policysrc.LitString {
			return nil, false
		}
		keys, ok := pathKeys(e.X)
		return append(keys, lit.Str), ok
	case *policysrc.ParenExpr:
		return pathKeys(e.X)
	}
	return nil, false
}

func (c *planCompiler) expr(e policysrc.Expr) *pexpr {
	if c.why != "" {
		return &pexpr{}
	}
	asFloat := false
	if t := c.info.Types[e]; t != nil && types.NonOptional(t).Kind == types.Float {
		asFloat = true
	}
	switch e := e.(type) {
	case *policysrc.ParenExpr:
		return c.expr(e.X)
	case *policysrc.BasicLit:
		x := &pexpr{op: eLit, group: true}
		switch e.Kind {
		case policysrc.LitNull:
			x.lit = pval{k: vNull}
		case policysrc.LitBool:
			x.lit = pval{k: vBool, b: e.Bool}
		case policysrc.LitInt:
			x.lit = pval{k: vInt, i: e.Int}
			if asFloat {
				x.lit = pval{k: vFloat, f: float64(e.Int)}
			}
		case policysrc.LitFloat:
			x.lit = pval{k: vFloat, f: e.Float}
		case policysrc.LitString:
			x.lit = pval{k: vStr, s: e.Str}
		}
		return x
	case *policysrc.FieldExpr, *policysrc.IndexExpr:
		loc, ok := c.target(e)
		if !ok {
			c.refuse(e, "a read of what the plan does not read")
			return &pexpr{}
		}
		c.noteRead(e, loc)
		g := c.info.Guards[e]
		if g == nil {
			c.refuse(e, "a read without a guard")
			return &pexpr{}
		}
		x := &pexpr{op: eRead, loc: loc, optional: g.IsOptional(), want: types.NonOptional(g).Kind, asFloat: asFloat, group: loc.group()}
		if !scalarKind(x.want) {
			c.refuse(e, "a read of a %s", x.want)
		}
		// Through an optional container the guard is optional; where the
		// container is there, the schema's own type holds (a required
		// key of an optional body must be there).
		if pg := c.info.PresentGuards[e]; pg != nil {
			if loc.w != wBody {
				c.refuse(e, "a read through an optional container")
				return &pexpr{}
			}
			x.present = &pexpr{op: eRead, loc: loc, optional: pg.IsOptional(), want: types.NonOptional(pg).Kind, asFloat: asFloat}
			if !scalarKind(x.present.want) {
				c.refuse(e, "a read of a %s", x.present.want)
			}
		}
		if loc.w == wBody {
			// The body itself, read on the way: its guard says whether
			// absent passes.
			switch v := e.(type) {
			case *policysrc.FieldExpr:
				x.bodyOptional = bodyOptional(c.info, v.X)
			case *policysrc.IndexExpr:
				x.bodyOptional = bodyOptional(c.info, v.X)
			}
		}
		return x
	case *policysrc.BinaryExpr:
		x := &pexpr{x: c.expr(e.X), y: c.expr(e.Y)}
		switch e.Op {
		case policysrc.COALESCE:
			x.op = eCoalesce
		case policysrc.LAND:
			x.op = eAnd
		case policysrc.LOR:
			x.op = eOr
		case policysrc.EQL, policysrc.NEQ, policysrc.LSS, policysrc.LEQ, policysrc.GTR, policysrc.GEQ:
			x.op, x.cmp = eCmp, e.Op
		default:
			c.refuse(e, "operator %s runs on the general path", e.Op)
		}
		x.group = x.x.group && x.y.group
		return x
	case *policysrc.UnaryExpr:
		if e.Op != policysrc.NOT {
			c.refuse(e, "operator %s runs on the general path", e.Op)
			return &pexpr{}
		}
		x := &pexpr{op: eNot, x: c.expr(e.X)}
		x.group = x.x.group
		return x
	}
	c.refuse(e, "%s runs on the general path", nodeName(e))
	return &pexpr{}
}

// bodyOptional reports whether the body read on the way to a body-map
// key may be absent or null without a fault.
func bodyOptional(info *check.Info, body policysrc.Expr) bool {
	g := info.Guards[body]
	return g == nil || g.IsOptional() || g.Kind == types.Any
}

func scalarKind(k types.Kind) bool {
	switch k {
	case types.Bool, types.Int, types.Float, types.String, types.Null, types.Any:
		return true
	}
	return false
}
