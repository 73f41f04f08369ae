package lua

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// expr emits the statements that evaluate e and returns a Lua expression
// (a temporary, a local or a literal) for its value, held as Types[e] says:
// raw when the type is float, boxed otherwise.
func (g *gen) expr(e policy.Expr) string {
	t := g.info.Types[e]
	if t == nil {
		g.fail("no type for expression at %v", e.Pos())
	}
	switch x := e.(type) {
	case *policy.ParenExpr:
		return g.exprAs(x.X, t)
	case *policy.BasicLit:
		return g.lit(x, t)
	case *policy.RootExpr, *policy.FieldExpr, *policy.IndexExpr:
		return g.read(e, true, false)
	case *policy.MetaExpr:
		if x.Name == "tag" {
			g.usesTag = true
			return "M.tag"
		}
		g.usesTime = true
		return "M.time"
	case *policy.Ident:
		if k := g.info.Consts[x]; k != nil {
			return g.exprAs(k.Value, t)
		}
		l := g.info.Uses[x]
		if l == nil {
			g.fail("undefined local %s", x.Name)
		}
		return g.convert(g.local(l), l.Type, t)
	case *policy.ListLit:
		var elems []string
		for _, el := range x.Elems {
			v := g.dyn(el)
			if g.info.Types[el].IsOptional() {
				v = g.tmp(v)
				g.line("if %s == nil then %s = NULL end", v, v)
			}
			elems = append(elems, v)
		}
		return g.tmp("newarr({" + strings.Join(elems, ", ") + "})")
	case *policy.MapLit:
		m := g.tmp("newmap()")
		for _, en := range x.Entries {
			v := g.dyn(en.Value)
			g.line("madd(%s, %s, %s)", m, quote(en.Key.Str), v)
		}
		return m
	case *policy.UnaryExpr:
		v := g.expr(x.X)
		switch x.Op {
		case policy.NOT:
			return g.tmp("not " + v)
		case policy.SUB:
			return g.tmp("-" + v)
		}
		g.fail("unknown unary operator %v", x.Op)
	case *policy.BinaryExpr:
		return g.binary(x, t)
	case *policy.CallExpr:
		return g.call(x, t)
	}
	g.fail("cannot transpile %T", e)
	return ""
}

// exprAs evaluates e and converts it to the representation of type want.
func (g *gen) exprAs(e policy.Expr, want *types.Type) string {
	return g.convert(g.expr(e), g.info.Types[e], want)
}

// dyn evaluates e into the boxed representation stored in records,
// containers and values of type any.
func (g *gen) dyn(e policy.Expr) string {
	v := g.expr(e)
	if isRaw(g.info.Types[e]) {
		return g.tmp("box(" + v + ")")
	}
	return v
}

func (g *gen) convert(v string, from, to *types.Type) string {
	switch {
	case isRaw(from) == isRaw(to):
		return v
	case isRaw(from):
		return g.tmp("box(" + v + ")")
	default:
		return g.tmp("unbox(" + v + ")")
	}
}

func (g *gen) lit(x *policy.BasicLit, t *types.Type) string {
	switch x.Kind {
	case policy.LitNull:
		return "NULL"
	case policy.LitBool:
		return strconv.FormatBool(x.Bool)
	case policy.LitInt:
		return number(float64(x.Int))
	case policy.LitFloat:
		return number(x.Float)
	case policy.LitString:
		return quote(x.Str)
	}
	g.fail("bad literal")
	return ""
}

// read reads a path: each step over the record is checked against the
// guard the checker computed, a step over a local against its type.
// final says whether the last value is checked (exists does not read it);
// shallow, whether only its kind is (a step through an array or map reads
// one element, not all of them).
func (g *gen) read(e policy.Expr, final, shallow bool) string {
	if k := g.info.Consts[e]; k != nil {
		return g.exprAs(k.Value, g.info.Types[e]) // a module's constant, net.marker
	}
	switch x := e.(type) {
	case *policy.ParenExpr:
		return g.read(x.X, final, shallow)
	case *policy.RootExpr:
		return "rec"
	case *policy.FieldExpr, *policy.IndexExpr:
	default:
		return g.expr(e)
	}
	var xe policy.Expr
	var stepv, b string
	switch x := e.(type) {
	case *policy.FieldExpr:
		xe = x.X
		b = g.container(xe)
		stepv = g.tmp(fmt.Sprintf("get(%s, %s)", b, quote(x.Name)))
	case *policy.IndexExpr:
		xe = x.X
		b = g.container(xe)
		it := types.NonOptional(g.info.Types[x.Index])
		i := g.expr(x.Index)
		if it.Kind == types.Int {
			stepv = g.tmp(fmt.Sprintf("idx(%s, %s)", b, i))
		} else {
			stepv = g.tmp(fmt.Sprintf("get(%s, %s)", b, i))
		}
	}
	if !final {
		return stepv
	}
	t := g.info.Types[e]
	guard := g.info.Guards[e]
	check := g.guardCall
	if pg, ok := g.info.PresentGuards[e]; ok {
		// Required where its container is (the VM's GUARDP): absent
		// because the container is, not a fault.
		if c := check(stepv, pg); c != "" {
			g.line("if %s ~= nil and %s ~= NULL then %s end", b, b, c)
		}
	} else if guard != nil {
		if c := check(stepv, guard); c != "" {
			g.line("%s", c)
		}
	}
	// A narrowed type must hold too (after P != null or is_string(P), and
	// above P after exists(P)); a read over a local is checked against
	// its type.
	if guard == nil || !types.Identical(guard, t) {
		if c := check(stepv, t); c != "" {
			g.line("%s", c)
		}
	}
	if isRaw(t) {
		return g.tmp("unbox(" + stepv + ")")
	}
	return stepv
}

// container evaluates the operand of a field or index step.
func (g *gen) container(xe policy.Expr) string {
	switch policy.Unparen(xe).(type) {
	case *policy.RootExpr:
		return "rec"
	case *policy.FieldExpr, *policy.IndexExpr:
		return g.read(policy.Unparen(xe), true, true)
	}
	return g.expr(xe)
}

func (g *gen) binary(x *policy.BinaryExpr, t *types.Type) string {
	xt, yt := g.info.Types[x.X], g.info.Types[x.Y]
	switch x.Op {
	case policy.LAND, policy.LOR:
		r := g.tmp(g.expr(x.X))
		if x.Op == policy.LAND {
			g.line("if %s then", r)
		} else {
			g.line("if not %s then", r)
		}
		g.depth++
		g.line("%s = %s", r, g.expr(x.Y))
		g.depth--
		g.line("end")
		return r
	case policy.COALESCE:
		r := g.tmp(g.exprAs(x.X, t))
		g.line("if %s == nil or %s == NULL then", r, r)
		g.depth++
		g.line("%s = %s", r, g.exprAs(x.Y, t))
		g.depth--
		g.line("end")
		return r
	case policy.IN:
		return g.in(x)
	case policy.EQL, policy.NEQ:
		r := g.equal(x, xt, yt)
		if x.Op == policy.NEQ {
			return g.tmp("not " + r)
		}
		return r
	case policy.LSS, policy.LEQ, policy.GTR, policy.GEQ:
		a, b := g.expr(x.X), g.expr(x.Y)
		if types.NonOptional(xt).Kind == types.Timestamp {
			switch x.Op {
			case policy.LSS:
				return g.tmp(fmt.Sprintf("tlt(%s, %s)", a, b))
			case policy.LEQ:
				return g.tmp(fmt.Sprintf("tle(%s, %s)", a, b))
			case policy.GTR:
				return g.tmp(fmt.Sprintf("tlt(%s, %s)", b, a))
			default:
				return g.tmp(fmt.Sprintf("tle(%s, %s)", b, a))
			}
		}
		return g.tmp(fmt.Sprintf("%s %s %s", a, opText(x.Op), b))
	case policy.ADD, policy.SUB, policy.MUL, policy.QUO, policy.REM:
		a, b := g.expr(x.X), g.expr(x.Y)
		rt := types.NonOptional(t)
		switch {
		case rt.Kind == types.String:
			return g.tmp(fmt.Sprintf("cat(%s, %s)", a, b))
		case rt.Kind == types.Array:
			return g.tmp(fmt.Sprintf("R.acat(%s, %s)", a, b))
		case rt.Kind == types.Int:
			return g.arith(x.Op, a, b, "idiv", "imod", false)
		default:
			return g.arith(x.Op, a, b, "fdiv", "fmod", true)
		}
	}
	g.fail("unknown operator %v", x.Op)
	return ""
}

// arith is the arithmetic a op b on ints or floats: / and % call the
// runtime's div and mod, + - * are Lua's, their result checked finite
// (fin) when finite is set.
func (g *gen) arith(op policy.Token, a, b, div, mod string, finite bool) string {
	switch op {
	case policy.QUO:
		return g.tmp(fmt.Sprintf("%s(%s, %s)", div, a, b))
	case policy.REM:
		return g.tmp(fmt.Sprintf("%s(%s, %s)", mod, a, b))
	}
	e := fmt.Sprintf("%s %s %s", a, opText(op), b)
	if finite {
		e = "fin(" + e + ")"
	}
	return g.tmp(e)
}

func opText(op policy.Token) string {
	switch op {
	case policy.ADD:
		return "+"
	case policy.SUB:
		return "-"
	case policy.MUL:
		return "*"
	case policy.LSS:
		return "<"
	case policy.LEQ:
		return "<="
	case policy.GTR:
		return ">"
	case policy.GEQ:
		return ">="
	}
	panic(genError{"no Lua operator for " + op.String()})
}

// equal returns a Lua boolean expression for x == y.
func (g *gen) equal(x *policy.BinaryExpr, xt, yt *types.Type) string {
	xb, yb := types.NonOptional(xt), types.NonOptional(yt)
	scalar := func(k types.Kind) bool {
		switch k {
		case types.Bool, types.Int, types.Float, types.String:
			return true
		}
		return false
	}
	if xt.Kind == types.Null || yt.Kind == types.Null {
		other := x.X
		if xt.Kind == types.Null {
			other = x.Y
		}
		v := g.expr(other)
		if xt.Kind == types.Null && yt.Kind == types.Null {
			g.expr(x.X)
		} else if xt.Kind == types.Null {
			// Keep the evaluation order: the null literal has no effects.
		}
		return g.tmp(fmt.Sprintf("(%s == nil or %s == NULL)", v, v))
	}
	if !xt.IsOptional() && !yt.IsOptional() && scalar(xb.Kind) && scalar(yb.Kind) {
		a, b := g.expr(x.X), g.expr(x.Y)
		return g.tmp(fmt.Sprintf("%s == %s", a, b))
	}
	a, b := g.dyn(x.X), g.dyn(x.Y)
	return g.tmp(fmt.Sprintf("eq(%s, %s)", a, b))
}

func (g *gen) in(x *policy.BinaryExpr) string {
	set := g.info.InSets[x]
	if set == nil {
		g.fail("no set for in")
	}
	v := g.expr(x.X)
	var entries []string
	hasNull := false
	for _, c := range set.Values {
		switch c := c.(type) {
		case nil:
			hasNull = true
		case bool:
			entries = append(entries, "["+strconv.FormatBool(c)+"] = true")
		case int64:
			entries = append(entries, "["+number(float64(c))+"] = true")
		case float64:
			entries = append(entries, "["+number(c)+"] = true")
		case string:
			entries = append(entries, "["+quote(c)+"] = true")
		}
	}
	k := g.constant("{" + strings.Join(entries, ", ") + "}")
	xt := g.info.Types[x.X]
	if types.NonOptional(xt).Kind == types.Any {
		// Boxed floats are looked up by value.
		v = g.tmp("unbox(" + v + ")")
	}
	if hasNull {
		return g.tmp(fmt.Sprintf("(%s == nil or %s == NULL or %s[%s] == true)", v, v, k, v))
	}
	return g.tmp(fmt.Sprintf("(%s ~= nil and %s[%s] == true)", v, k, v))
}

func (g *gen) call(x *policy.CallExpr, t *types.Type) string {
	if fn := g.info.Funcs[x]; fn != nil {
		return g.callFunc(x, fn, t)
	}
	f := g.info.Calls[x]
	if f == nil {
		g.fail("unresolved call of %s", x.Fun.Name)
	}
	args := g.info.Args(x) // with the defaults of left-out arguments
	// typed evaluates argument i as a plain value of its own type.
	typed := func(i int) string { return g.expr(args[i]) }
	res := func(r string) string { return g.tmp(r) }
	switch f.ID {
	case builtin.Exists:
		a := policy.Unparen(args[0])
		switch a.(type) {
		case *policy.FieldExpr, *policy.IndexExpr:
			v := g.read(a, false, true)
			return res(v + " ~= nil")
		case *policy.MetaExpr, *policy.RootExpr:
			return "true"
		}
		v := g.expr(a)
		return res(v + " ~= nil")
	case builtin.Coalesce:
		r := g.tmp(g.exprAs(args[0], t))
		for _, a := range args[1:] {
			g.line("if %s == nil or %s == NULL then", r, r)
			g.depth++
			g.line("%s = %s", r, g.exprAs(a, t))
		}
		for range args[1:] {
			g.depth--
			g.line("end")
		}
		return r
	case builtin.Now:
		g.usesNow = true
		return g.meta() + ".now"
	case builtin.UUIDv7:
		g.usesNow = true // the UUID's time is the run's now()
		return res("R.uuid_v7(" + g.meta() + ".now)")
	}
	// The rest call the runtime's function of the built-in's name, R.<name>
	// (TestRuntimeHasEveryBuiltin holds the runtime to the table), with
	// the regex as the compiled pattern and the other arguments plain or
	// boxed as the function's convention says.
	var vs []string
	for i, a := range args {
		switch {
		case i == f.RegexArg:
			vs = append(vs, g.regex(a))
		case conv[f.ID] != boxed:
			vs = append(vs, typed(i))
		default:
			vs = append(vs, g.dyn(a))
		}
	}
	if f.ID == builtin.ParseSyslog { // RFC 3164 lines take the year of now()
		g.usesNow = true
		vs = append(vs, g.meta()+".now")
	}
	call := fmt.Sprintf("R.%s(%s)", f.Name, strings.Join(vs, ", "))
	if conv[f.ID] == plain {
		return res(call)
	}
	return g.result(call, f, t)
}

// A callConv is how the runtime function of a built-in takes its arguments
// and gives its result: boxed (any) by default, so that one Lua function
// serves every argument type; plain where the types are fixed and the
// function is on hot paths.
type callConv uint8

const (
	boxed   callConv = iota // boxed arguments, boxed result
	plainIn                 // plain arguments, boxed result
	plain                   // plain arguments, plain result
)

var conv = map[builtin.ID]callConv{
	builtin.Len: plain, builtin.Contains: plain, builtin.StartsWith: plain,
	builtin.EndsWith: plain, builtin.Substr: plain, builtin.Keys: plain,
	builtin.UnixNanos: plain, builtin.UnixSeconds: plain, builtin.UnixMillis: plain,
	builtin.Truncate: plain, builtin.TrimPrefix: plain, builtin.TrimSuffix: plain, builtin.IndexOf: plain,
	builtin.SeverityNumber: plain,
	builtin.Floor:          plain, builtin.Ceil: plain, builtin.Abs: plain,
	builtin.Matches: plainIn, builtin.Capture: plainIn, builtin.ReplaceRe: plainIn,
}

// result holds the boxed result of a call in the representation of t.
func (g *gen) result(call string, f *builtin.Func, t *types.Type) string {
	r := g.tmp(call)
	if isRaw(t) {
		return g.tmp("unbox(" + r + ")")
	}
	return r
}
