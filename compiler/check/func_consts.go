package check

import (
	"fmt"
	"slices"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// A function's parameter that its body uses where a constant is required
// must be a constant at every call site (docs/language.md, "Constants and
// functions"): the body records the parameter (ConstParam), and each
// call's argument there is checked where the call is — a pattern
// compiled, a zone or unit looked up, a format checked against the values
// the body gives it — so that every backend has it as it would have a
// literal. An argument that is itself a parameter of the calling function
// passes the duty on to that function's callers. A pattern computed at a
// call is E0404, a zone, unit or format E0412, as for a built-in's
// argument.

// ConstParam is a parameter of a function that must be a constant at each
// call: a pattern (regex or grok), a zone, a unit or a format.
type ConstParam struct {
	Param int           // the parameter's index
	Func  *builtin.Func // the built-in that reads it, in the end
	Arg   int           // which argument of Func it is
	// At is where the body needs it: the built-in's argument, or the
	// argument of the call that passes it on.
	At policy.Expr
	// Via is the function At passes it to, nil when At is the built-in's.
	Via *Func
	// Call is the built-in's call, and Types the types of its arguments:
	// a format is checked against the values the call formats.
	Call  *policy.CallExpr
	Types []*types.Type
}

// Pattern reports whether the parameter is a pattern, compiled at each
// call and passed to the backends compiled, rather than a string value.
func (p ConstParam) Pattern() bool { return p.Arg == p.Func.RegexArg }

// Grok reports whether the pattern is a grok pattern rather than a regex.
func (p ConstParam) Grok() bool { return p.Func.Grok }

// what names the kind of constant: pattern, zone, unit or format.
func (p ConstParam) what() string {
	if p.Pattern() {
		return "pattern"
	}
	return constWhat(p.Func)
}

// code is the diagnostic of a computed argument: one code per kind of
// place, as for a built-in's argument.
func (p ConstParam) code() string {
	if p.Pattern() {
		return CodeRegexConst
	}
	return CodeNotConst
}

// use says what the body does with the parameter, for a hint.
func (p ConstParam) use(g *Func) string {
	name := g.Params[p.Param].Name
	if p.Via != nil {
		return fmt.Sprintf("passes %s on to %s as a %s of %s (%s)", name, p.Via.FullName(), p.what(), p.Func.Name, bodyPos(g, p.At))
	}
	return fmt.Sprintf("uses %s as the %s of %s (%s)", name, p.what(), p.Func.Name, bodyPos(g, p.At))
}

// why says when the constant is checked, for a hint.
func (p ConstParam) why() string {
	if p.Pattern() {
		return "patterns are compiled once, when the policy is checked"
	}
	return p.what() + "s are checked when the policy is"
}

// sameCheck reports whether p and q ask the same of one parameter, so
// that one of them is enough: one pattern, one zone, one unit; a format
// is checked against each call of format that it reaches.
func (p ConstParam) sameCheck(q ConstParam) bool {
	switch {
	case p.Param != q.Param || p.Pattern() != q.Pattern():
		return false
	case p.Pattern():
		return true
	case p.Func.ID == builtin.Format || q.Func.ID == builtin.Format:
		return p.Call == q.Call
	}
	return p.Func.Const == q.Func.Const
}

// Patterns returns the parameters f's body uses as patterns, the ones the
// Lua backend passes compiled, in order.
func (f *Func) Patterns() []ConstParam {
	var ps []ConstParam
	for _, p := range f.ConstParams {
		if p.Pattern() {
			ps = append(ps, p)
		}
	}
	return ps
}

// paramOf returns the index of the parameter of fn that e names, or -1.
func (c *checker) paramOf(e policy.Expr, fn *Func) int {
	id, ok := policy.Unparen(e).(*policy.Ident)
	if !ok || fn == nil {
		return -1
	}
	l := c.info.Uses[id]
	if l == nil || l.Kind != Param {
		return -1
	}
	return slices.Index(fn.Params, l)
}

// bodyConst records that the body being checked uses its parameter, the
// argument arg of the call e of f, where f needs a constant, and reports
// whether it is such a parameter. args are the types of e's arguments.
func (c *checker) bodyConst(e *policy.CallExpr, f *builtin.Func, arg int, args []*types.Type) bool {
	if c.fn == nil {
		return false
	}
	a := e.Args[arg]
	i := c.paramOf(a, c.fn.fn)
	if i < 0 {
		return false
	}
	c.addConstParam(c.fn.fn, ConstParam{Param: i, Func: f, Arg: arg, At: a, Call: e, Types: args})
	return true
}

// addConstParam adds p to fn's unless one asks the same already, and
// reports whether it was new. One argument compiles to one pattern: a
// parameter used as a grok pattern and as a regex is an error.
func (c *checker) addConstParam(fn *Func, p ConstParam) bool {
	for _, q := range fn.ConstParams {
		if !q.sameCheck(p) {
			continue
		}
		if q.Grok() != p.Grok() {
			c.report(diag.Errorf(p.At, CodeRegexConst, "%s is used as a pattern of %s and of %s", fn.Params[p.Param].Name, q.Func.Name, p.Func.Name).
				WithLabel("the pattern of %s (line %d) is compiled differently", q.Func.Name, q.At.Pos().Line).
				WithHint("give the function one parameter for each kind of pattern"))
		}
		return false
	}
	fn.ConstParams = append(fn.ConstParams, p)
	return true
}

// funcConsts passes the constant parameters of the functions fns called
// on to the parameters of the callers that give them, until none changes
// (the checked call graph is acyclic; a cycle reported stops anyway, the
// parameters being finite), then checks every call in the bodies.
func (c *checker) funcConsts(fns []*Func) {
	for changed := true; changed; {
		changed = false
		for _, fn := range fns {
			for _, call := range fn.Calls {
				g := c.info.Funcs[call]
				args := c.info.Args(call)
				for _, p := range g.ConstParams {
					if p.Param >= len(args) {
						continue
					}
					if i := c.paramOf(args[p.Param], fn); i >= 0 {
						q := p
						q.Param, q.At, q.Via = i, args[p.Param], g
						if c.addConstParam(fn, q) {
							changed = true
						}
					}
				}
			}
		}
	}
	for _, fn := range fns {
		for _, call := range fn.Calls {
			c.callConsts(call, c.info.Funcs[call], fn)
		}
	}
}

// bodyPos says where in g's file the node n is: its line, and the file
// when g is a module's.
func bodyPos(g *Func, n policy.Node) string {
	if g.File != "" {
		return fmt.Sprintf("%s line %d", g.File, n.Pos().Line)
	}
	return fmt.Sprintf("line %d", n.Pos().Line)
}

// callConsts checks the constants that the call e of g, in the body of
// caller (nil in the policy's statements), passes: each is what a literal
// in g's body would be, and is checked as one, at e's argument.
func (c *checker) callConsts(e *policy.CallExpr, g *Func, caller *Func) {
	args := c.info.Args(e)
	if len(args) != len(g.Params) {
		return // E0402 said so
	}
	computed := map[int]bool{} // one error per argument
	for _, p := range g.ConstParams {
		a := args[p.Param]
		if c.paramOf(a, caller) >= 0 {
			continue // a constant parameter of caller: checked at its calls
		}
		lit, ok := c.constLit(a)
		if !ok {
			if t := c.info.Types[a]; (t == nil || !t.IsInvalid()) && !c.unboundConst(a) && !computed[p.Param] {
				computed[p.Param] = true
				name := g.Params[p.Param].Name
				c.report(diag.Errorf(a, p.code(), "argument %s of %s must be a constant string", name, g.FullName()).
					WithLabel("%s is computed at run time", exprText(a)).
					WithHint("fn %s %s: %s, so pass a literal or a const", g.Name, p.use(g), p.why()))
			}
			continue
		}
		switch {
		case p.Pattern():
			c.compileRegex(p.Func, a, lit)
		case p.Func.ID == builtin.Format:
			c.checkFormat(lit, p.Call.Args[1:], p.Types[1:], &fmtSite{at: a, use: fmt.Sprintf("fn %s %s", g.Name, p.use(g))})
		default:
			c.constValue(p.Func, a, lit)
		}
	}
}
