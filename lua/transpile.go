package lua

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// gen writes the Lua source of one policy. Expressions are linearised into
// statements over temporaries so that evaluation order, short-circuits and
// faults are exactly the VM's.
type gen struct {
	info    *check.Info
	b       strings.Builder
	depth   int
	ntemp   int
	regexps []*regexp.Regexp
	reIndex map[*regexp.Regexp]int
	consts  []string // declarations of constant tables (in sets, paths)
	// Which metadata the policy reads: the runner fills in only those.
	usesTag, usesTime, usesNow bool
	// usesState: the policy has a stateful statement, which calls ST
	// (state_stmt.go).
	usesState bool
	// loops is set when the policy has a for loop, whose iterations are
	// counted against the limit (spec.Limits.MaxIterations, R.MAXITER).
	loops bool
	// split is the path of the policy's split (split.go), nil without
	// one; splits says the iterations' counter is reset after it.
	split  record.Path
	splits bool

	// Lua allows 200 active locals per function (and per chunk). live
	// counts the policy function's; past maxLive, temporaries and locals
	// go to slots of the table S instead, and constants past maxConsts to
	// the table KT, so that no checked policy is too big to transpile.
	live    int
	nspill  int
	spilled map[*check.Local]string
	nkt     int

	// fns holds the Lua functions of the policy's functions (funcs.go),
	// fnNames their names. inFn is set while a body is written; fnMeta
	// once a body reads the run's metadata, through the upvalue FM.
	fns      strings.Builder
	fnNames  map[*check.Func]string
	inFn     bool
	fnMeta   bool
	fnResult *types.Type // the result type of the body being written
	fn       *check.Func // the function whose body is being written
}

const (
	maxLive   = 120
	maxConsts = 120
)

// Transpile returns the Lua source of a checked policy and the regexps its
// source refers to as P.re[i]. The source is a chunk that takes (R, P) and
// returns the policy function f(rec, M): rec is the root map, M holds tag,
// time and now, and gets e = true when the record was edited and rec when the
// root was replaced. f returns 0 to keep the record and 1 to drop it, 2 when it split it, and
// dropCode + a spec.DropReason when a stateful statement dropped it. P.st is the Go side of
// the stateful statements (state_stmt.go).
func Transpile(f *policy.File, info *check.Info) (string, []*regexp.Regexp, error) {
	src, g, err := transpile(f, info)
	if err != nil {
		return "", nil, err
	}
	return src, g.regexps, nil
}

func transpile(f *policy.File, info *check.Info) (string, *gen, error) {
	if info.Unbound {
		return "", nil, check.ErrUnbound
	}
	g := &gen{info: info, reIndex: map[*regexp.Regexp]int{}}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				if e, ok := r.(genError); ok {
					err = e
					return
				}
				panic(r)
			}
		}()
		g.funcs(f)
		g.depth = 1
		g.topStmts(f.Stmts)
	}()
	if err != nil {
		return "", nil, err
	}
	var out strings.Builder
	out.WriteString("local R, P = ...\n")
	out.WriteString(prologue)
	for _, c := range g.consts {
		out.WriteString(c)
		out.WriteByte('\n')
	}
	if g.usesState {
		out.WriteString("local ST = P.st\n")
	}
	if g.loops || g.splits {
		// Upvalues, not locals: the function's locals are counted
		// (maxLive). Runs of one function never overlap.
		out.WriteString("local iters, MAXITER = 0, 0\n")
	}
	out.WriteString(g.fns.String())
	out.WriteString("return function(rec, M)\n")
	if g.fnMeta {
		out.WriteString("  FM = M\n")
	}
	if g.nspill > 0 {
		out.WriteString("  local S = {}\n")
	}
	if g.loops {
		out.WriteString("  iters, MAXITER = 0, R.MAXITER\n")
	}
	out.WriteString(g.b.String())
	out.WriteString("  return 0\nend\n")
	return out.String(), g, nil
}

type genError struct{ msg string }

func (e genError) Error() string { return "lua: " + e.msg }

func (g *gen) fail(format string, args ...any) {
	panic(genError{fmt.Sprintf(format, args...)})
}

// prologue binds the runtime's functions to locals (upvalues are faster
// than table lookups in gopher-lua).
const prologue = `local NULL, box, unbox, chk, get, idx, cp = R.NULL, R.box, R.unbox, R.chk, R.get, R.idx, R.cp
local newmap, newarr, mset, setp, remp, lookup = R.newmap, R.newarr, R.mset, R.setp, R.remp, R.lookup
local fin, idiv, imod, fdiv, fmod, cat, slen, eq, tlt, tle = R.fin, R.idiv, R.imod, R.fdiv, R.fmod, R.cat, R.slen, R.eq, R.tlt, R.tle
local fault, ORD, MAP, mdel, madd, type, getmetatable = R.fault, R.ORD, R.MAP, R.mdel, R.madd, type, getmetatable
`

func (g *gen) line(format string, args ...any) {
	for range g.depth {
		g.b.WriteString("  ")
	}
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

func (g *gen) temp() string {
	g.ntemp++
	return "t" + strconv.Itoa(g.ntemp)
}

// tmp declares a temporary holding x and returns its name: a local, or a
// slot of S when the function has too many locals already.
func (g *gen) tmp(x string) string {
	if g.live >= maxLive {
		t := g.slot()
		g.line("%s = %s", t, x)
		return t
	}
	g.live++
	t := g.temp()
	g.line("local %s = %s", t, x)
	return t
}

// slot returns a new slot of the spill table S.
func (g *gen) slot() string {
	g.nspill++
	return "S[" + strconv.Itoa(g.nspill) + "]"
}

// declare makes the Lua variable of the policy local l, a local or a slot
// of S, and returns its name; with init it also assigns it.
func (g *gen) declare(l *check.Local, init string) string {
	if g.live >= maxLive {
		if g.spilled == nil {
			g.spilled = map[*check.Local]string{}
		}
		name := g.slot()
		g.spilled[l] = name
		if init != "" {
			g.line("%s = %s", name, init)
		}
		return name
	}
	g.live++
	name := "L" + strconv.Itoa(l.ID)
	if init != "" {
		g.line("local %s = %s", name, init)
	} else {
		g.line("local %s", name)
	}
	return name
}

// local returns the Lua variable of the policy local l.
func (g *gen) local(l *check.Local) string {
	if name, ok := g.spilled[l]; ok {
		return name
	}
	return "L" + strconv.Itoa(l.ID)
}

func (g *gen) constant(decl string) string {
	if len(g.consts) >= maxConsts {
		if g.nkt == 0 {
			g.consts = append(g.consts, "local KT = {}")
		}
		g.nkt++
		name := "KT[" + strconv.Itoa(g.nkt) + "]"
		g.consts = append(g.consts, name+" = "+decl)
		return name
	}
	name := "K" + strconv.Itoa(len(g.consts)+1)
	g.consts = append(g.consts, "local "+name+" = "+decl)
	return name
}

func (g *gen) regex(e policy.Expr) string {
	re := g.info.Regexps[e]
	if re == nil {
		if rx := g.regexParam(e); rx != "" {
			return rx
		}
		g.fail("no compiled regex for argument at %v", e.Pos())
	}
	i, ok := g.reIndex[re]
	if !ok {
		g.regexps = append(g.regexps, re)
		i = len(g.regexps)
		g.reIndex[re] = i
	}
	return g.constant(fmt.Sprintf("P.re[%d]", i))
}

// ------------------------------------------------------------- statements

// topStmts writes the policy's statements: those after a split go into
// a function of their own (splitStmt).
func (g *gen) topStmts(list []policy.Stmt) {
	for i, s := range list {
		if sp, ok := s.(*policy.SplitStmt); ok {
			g.splitStmt(sp, list[i+1:])
			return
		}
		g.stmt(s)
	}
}

func (g *gen) stmts(list []policy.Stmt) {
	live := g.live // every list but the policy's is a Lua block of its own
	for _, s := range list {
		g.stmt(s)
	}
	g.live = live
}

// block runs body in a Lua do-block so that temporaries go out of scope
// (Lua allows 200 locals per function).
func (g *gen) block(body func()) {
	live := g.live
	g.line("do")
	g.depth++
	body()
	g.depth--
	g.line("end")
	g.live = live
}

func (g *gen) stmt(s policy.Stmt) {
	switch s := s.(type) {
	case *policy.SetStmt:
		g.block(func() { g.set(s) })
	case *policy.RemoveStmt:
		g.block(func() {
			for _, t := range s.Targets {
				if k, ok := rootKey(t); ok {
					g.line("mdel(rec, %s)", k)
					continue
				}
				p := g.editPath(t)
				g.line("remp(rec, %s)", p)
			}
		})
	case *policy.RenameStmt:
		g.block(func() {
			fk, ok1 := rootKey(s.From)
			tk, ok2 := rootKey(s.To)
			if ok1 && ok2 {
				// Both at the top level: the common case, inline.
				v := g.tmp("rec[" + fk + "]")
				g.line("if %s ~= nil then mdel(rec, %s); mset(rec, %s, %s) end", v, fk, tk, v)
			} else {
				from := g.editPath(s.From)
				to := g.editPath(s.To)
				g.line("R.rename(rec, %s, %s)", from, to)
			}
		})
	case *policy.LiftStmt:
		g.block(func() {
			p := g.editPath(s.Target)
			prefix := ""
			if s.Prefix != nil {
				prefix = s.Prefix.Str
			}
			g.line("R.lift(rec, %s, %s)", p, quote(prefix))
		})
	case *policy.DropStmt:
		g.end(s.Cond, "1")
	case *policy.StopStmt:
		g.end(s.Cond, "0")
	case *policy.IfStmt:
		g.block(func() { g.ifStmt(s) })
	case *policy.Block:
		g.block(func() { g.stmts(s.Stmts) })
	case *policy.LetStmt:
		v := "nil"
		name := "_"
		if l := g.info.Defs[s.Name]; l != nil {
			name = g.declare(l, "")
		} else {
			g.line("local _")
			g.live++
		}
		g.block(func() {
			v = g.exprAs(s.Value, g.info.Types[s.Value])
			if name != "_" {
				g.line("%s = %s", name, g.copyIfContainer(v, g.info.Types[s.Value]))
			}
		})
	case *policy.ForStmt:
		g.block(func() { g.forStmt(s) })
	case *policy.StateStmt:
		g.stateStmt(s)
	case *policy.ReturnStmt:
		g.block(func() {
			v := g.exprAs(s.Value, g.fnResult)
			g.line("do return %s end", v)
		})
	case *policy.BadStmt, nil:
		g.fail("bad statement")
	default:
		g.fail("unknown statement %T", s)
	}
}

func (g *gen) end(cond policy.Expr, code string) {
	if cond == nil {
		// A do-block lets statements follow an unconditional return.
		g.line("do return %s end", code)
		return
	}
	g.block(func() {
		c := g.expr(cond)
		g.line("if %s then return %s end", c, code)
	})
}

func (g *gen) ifStmt(s *policy.IfStmt) {
	c := g.expr(s.Cond)
	g.line("if %s then", c)
	g.depth++
	g.stmts(s.Body.Stmts)
	g.depth--
	switch e := s.Else.(type) {
	case *policy.IfStmt:
		g.line("else")
		g.depth++
		g.ifStmt(e)
		g.depth--
	case *policy.Block:
		g.line("else")
		g.depth++
		g.stmts(e.Stmts)
		g.depth--
	}
	g.line("end")
}

func (g *gen) set(s *policy.SetStmt) {
	vt := g.info.Types[s.Value]
	if m, ok := s.Target.(*policy.MetaExpr); ok {
		v := g.expr(s.Value)
		if s.Op == policy.QASSIGN {
			return // metadata is never absent
		}
		g.line("M.%s = %s", m.Name, v)
		return
	}
	if _, ok := policy.Unparen(s.Target).(*policy.RootExpr); ok {
		v := g.dyn(s.Value)
		g.line("rec = cp(%s)", v)
		g.line("M.rec = rec")
		g.line("M.e = true")
		return
	}
	v := g.dyn(s.Value)
	v = g.copyIfContainer(v, vt)
	if k, ok := rootKey(s.Target); ok {
		// A key of the record itself: no parents to walk or create.
		if s.Op == policy.QASSIGN {
			cur := g.tmp("rec[" + k + "]")
			g.line("if %s == nil or %s == NULL then mset(rec, %s, %s) end", cur, cur, k, v)
			return
		}
		g.line("mset(rec, %s, %s)", k, v)
		return
	}
	p := g.editPath(s.Target)
	if s.Op == policy.QASSIGN {
		cur := g.tmp(fmt.Sprintf("lookup(rec, %s)", p))
		g.line("if %s == nil or %s == NULL then", cur, cur)
		g.depth++
		g.line("setp(rec, %s, %s)", p, v)
		g.depth--
		g.line("end")
		return
	}
	g.line("setp(rec, %s, %s)", p, v)
}

// copyIfContainer copies v when its type may hold a map or an array: a
// stored value must not change when its source is edited later.
func (g *gen) copyIfContainer(v string, t *types.Type) string {
	switch types.NonOptional(t).Kind {
	case types.Map, types.Object, types.Array, types.Any:
		return "cp(" + v + ")"
	}
	return v
}

// editPath evaluates the dynamic steps of an edited path and returns a Lua
// expression for its step array.
func (g *gen) editPath(e policy.Expr) string {
	var steps []string
	allConst := true
	var walk func(e policy.Expr)
	walk = func(e policy.Expr) {
		switch x := e.(type) {
		case *policy.ParenExpr:
			walk(x.X)
		case *policy.RootExpr:
		case *policy.FieldExpr:
			walk(x.X)
			steps = append(steps, quote(x.Name))
		case *policy.IndexExpr:
			walk(x.X)
			if c, ok := constStep(x.Index); ok {
				steps = append(steps, c)
				return
			}
			allConst = false
			steps = append(steps, g.expr(x.Index))
		default:
			g.fail("cannot edit %T", e)
		}
	}
	walk(e)
	list := "{" + strings.Join(steps, ", ") + "}"
	if allConst {
		return g.constant(list)
	}
	return g.tmp(list)
}

// rootKey returns the Lua literal of e's key when e is a constant key of
// the record itself (.a or .["a"]).
func rootKey(e policy.Expr) (string, bool) {
	switch x := policy.Unparen(e).(type) {
	case *policy.FieldExpr:
		if _, ok := policy.Unparen(x.X).(*policy.RootExpr); ok {
			return quote(x.Name), true
		}
	case *policy.IndexExpr:
		if _, ok := policy.Unparen(x.X).(*policy.RootExpr); ok {
			if lit, ok := policy.Unparen(x.Index).(*policy.BasicLit); ok && lit.Kind == policy.LitString {
				return quote(lit.Str), true
			}
		}
	}
	return "", false
}

// constStep returns the Lua literal of a constant index: a string key or an
// int (possibly negative) array index.
func constStep(e policy.Expr) (string, bool) {
	lit, neg := policy.SignedLit(e)
	if lit == nil {
		return "", false
	}
	switch {
	case lit.Kind == policy.LitString && !neg:
		return quote(lit.Str), true
	case lit.Kind == policy.LitInt && neg:
		return number(float64(-lit.Int)), true
	case lit.Kind == policy.LitInt:
		return number(float64(lit.Int)), true
	}
	return "", false
}

func (g *gen) forStmt(s *policy.ForStmt) {
	xt := g.info.Types[s.X]
	x := g.expr(s.X)
	var kl, vl *check.Local
	if s.Key != nil {
		kl = g.info.Defs[s.Key]
	}
	if s.Value != nil {
		vl = g.info.Defs[s.Value]
	}
	base := types.NonOptional(xt)
	g.line("if type(%s) == \"table\" and %s ~= NULL then", x, x)
	g.depth++
	bind := func(kexpr, vexpr string) {
		if kl != nil {
			g.declare(kl, kexpr)
		}
		if vl != nil {
			// An element is checked against the local's type when bound.
			name := g.declare(vl, vexpr)
			if c := g.guardCall(name, vl.Type); c != "" {
				g.line("%s", c)
			}
			if isRaw(vl.Type) {
				g.line("%s = unbox(%s)", name, name)
			}
		}
	}
	switch base.Kind {
	case types.Array:
		i := g.temp()
		g.live += 4 // i and the loop's three hidden locals
		g.line("for %s = 1, #%s do", i, x)
		g.depth++
		g.countIteration()
		bind(i+" - 1", x+"["+i+"]")
	case types.Map, types.Object:
		o, i := g.temp(), g.temp()
		g.live += 5 // o, i and the loop's three hidden locals
		g.line("local %s = {unpack(%s[ORD])}", o, x)
		g.line("for %s = 1, #%s do", i, o)
		g.depth++
		g.countIteration()
		bind(o+"["+i+"]", x+"["+o+"["+i+"]]")
	default:
		g.line("do")
		g.depth++
	}
	g.stmts(s.Body.Stmts)
	g.depth--
	g.line("end")
	g.depth--
	g.line("end")
}

// countIteration counts one element visited against R.MAXITER (spec.Limits.MaxIterations).
func (g *gen) countIteration() {
	g.loops = true
	g.line("iters = iters + 1")
	g.line("if iters > MAXITER then fault(\"iteration_limit\") end")
}
