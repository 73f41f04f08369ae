package lua

import (
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
)

// A policy's functions become Lua functions of the chunk, defined once
// when the program loads: a call is a Lua call with the arguments held as
// the parameters' types say (raw floats, boxed values), no closure is
// made per run. They are declared before they are defined, so that they
// may call each other in any order (the checker rules out recursion).
// A parameter the body uses as a pattern (check.Func.Patterns) comes with
// a hidden parameter after the declared ones, RX<n>, the pattern compiled
// at load that each call passes: a constant of the chunk, or the caller's
// own RX<n>. A zone, unit or format parameter needs nothing more: the
// built-in gets the string the call passes, as it gets a literal's, and
// the checker has checked it at each call.

// maxFnLocals is how many functions get a local of the chunk; the rest
// go to the table FT, so that the chunk stays under Lua's 200 locals.
const maxFnLocals = 30

// funcs writes the functions of f into g.fns.
func (g *gen) funcs(f *policy.File) {
	// The imported modules' functions first, each module once, then
	// the file's own.
	var fns []*check.Func
	files := make([]*policy.File, 0, len(g.info.Modules)+1)
	for _, m := range g.info.Modules {
		files = append(files, m.File)
	}
	for _, file := range append(files, f) {
		for _, d := range file.Decls {
			if fd, ok := d.(*policy.FuncDecl); ok && g.info.FuncDecls[fd] != nil {
				fns = append(fns, g.info.FuncDecls[fd])
			}
		}
	}
	if len(fns) == 0 {
		return
	}
	g.fnNames = map[*check.Func]string{}
	var locals []string
	for i, fn := range fns {
		name := "F" + strconv.Itoa(i+1)
		if i >= maxFnLocals {
			name = "FT[" + strconv.Itoa(i+1-maxFnLocals) + "]"
		} else {
			locals = append(locals, name)
		}
		g.fnNames[fn] = name
	}
	g.fns.WriteString("local FM\n")
	g.fns.WriteString("local " + strings.Join(locals, ", ") + "\n")
	if len(fns) > maxFnLocals {
		g.fns.WriteString("local FT = {}\n")
	}
	for _, fn := range fns {
		g.function(fn)
	}
}

// function writes one function: its parameters are the locals of its
// parameters, its body the statements, each return a Lua return.
func (g *gen) function(fn *check.Func) {
	saved, live, nspill, depth := g.b, g.live, g.nspill, g.depth
	g.b = strings.Builder{}
	g.live, g.depth, g.inFn, g.fnResult, g.fn = len(fn.Params)+len(fn.Patterns()), 1, true, fn.Result, fn
	g.stmts(fn.Decl.Body.Stmts)
	body := g.b.String()
	spills := g.nspill > nspill
	g.b, g.live, g.depth, g.inFn, g.fnResult, g.fn = saved, live, depth, false, nil, nil

	params := make([]string, len(fn.Params))
	for i, p := range fn.Params {
		params[i] = g.local(p)
	}
	for _, p := range fn.Patterns() {
		params = append(params, regexParamName(p.Param))
	}
	g.fns.WriteString(g.fnNames[fn] + " = function(" + strings.Join(params, ", ") + ")\n")
	if spills {
		g.fns.WriteString("  local S = {}\n")
	}
	g.fns.WriteString(body)
	g.fns.WriteString("end\n")
}

// meta is the Lua name of the run's metadata table: the policy
// function's parameter M, or in a function's body the upvalue FM that
// the policy function sets when it starts.
func (g *gen) meta() string {
	if g.inFn {
		g.fnMeta = true
		return "FM"
	}
	return "M"
}

// callFunc calls the Lua function of fn with the arguments of the call x
// (defaults filled in), held as the parameters' types say, and returns
// the result held as t says.
func (g *gen) callFunc(x *policy.CallExpr, fn *check.Func, t *types.Type) string {
	args := g.info.Args(x)
	vs := make([]string, len(fn.Params))
	for i, p := range fn.Params {
		vs[i] = g.exprAs(args[i], p.Type)
	}
	for _, p := range fn.Patterns() {
		vs = append(vs, g.regex(args[p.Param]))
	}
	r := g.tmp(g.fnNames[fn] + "(" + strings.Join(vs, ", ") + ")")
	return g.convert(r, fn.Result, t)
}

// regexParamName is the Lua name of the hidden parameter that holds the
// compiled pattern of parameter i.
func regexParamName(i int) string { return "RX" + strconv.Itoa(i+1) }

// regexParam returns the hidden parameter that holds the pattern e, a
// pattern parameter of the function being written, or "".
func (g *gen) regexParam(e policy.Expr) string {
	id, ok := policy.Unparen(e).(*policy.Ident)
	if !ok || g.fn == nil {
		return ""
	}
	l := g.info.Uses[id]
	for _, p := range g.fn.Patterns() {
		if g.fn.Params[p.Param] == l {
			return regexParamName(p.Param)
		}
	}
	return ""
}
