package check

import (
	"fmt"
	"slices"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// A function's parameter that its body uses as a pattern must be a
// constant at every call site (LANGUAGE.md §13.1): the body records the
// parameter (RegexParam), and each call's argument there is checked and
// compiled where the call is, so that every backend has the pattern
// compiled when the policy loads. An argument that is itself a parameter
// of the calling function passes the duty on to that function's callers.

// RegexParam is a parameter of a function that must be a constant
// pattern at each call.
type RegexParam struct {
	Param int           // the parameter's index
	Func  *builtin.Func // the built-in that reads the pattern, in the end
	// At is where the body needs it: the built-in's argument, or the
	// argument of the call that passes it on.
	At policy.Expr
	// Via is the function At passes it to, nil when At is the built-in's.
	Via *Func
}

// use says what the body does with the parameter, for a hint.
func (p RegexParam) use(g *Func) string {
	name := g.Params[p.Param].Name
	if p.Via != nil {
		return fmt.Sprintf("passes %s on to %s as a pattern of %s (%s)", name, p.Via.FullName(), p.Func.Name, bodyPos(g, p.At))
	}
	return fmt.Sprintf("uses %s as the pattern of %s (%s)", name, p.Func.Name, bodyPos(g, p.At))
}

// Grok reports whether the pattern is a grok pattern rather than a regex.
func (p RegexParam) Grok() bool { return p.Func.Grok }

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

// bodyRegex records that the body being checked uses its parameter a as
// the pattern of f, and reports whether a is such a parameter.
func (c *checker) bodyRegex(f *builtin.Func, a policy.Expr) bool {
	if c.fn == nil {
		return false
	}
	i := c.paramOf(a, c.fn.fn)
	if i < 0 {
		return false
	}
	c.addRegexParam(c.fn.fn, RegexParam{Param: i, Func: f, At: a})
	return true
}

// addRegexParam adds p to fn's, once per parameter, and reports whether
// it was new. One argument compiles to one pattern: a parameter used as a
// grok pattern and as a regex is an error.
func (c *checker) addRegexParam(fn *Func, p RegexParam) bool {
	for _, q := range fn.RegexParams {
		if q.Param != p.Param {
			continue
		}
		if q.Grok() != p.Grok() {
			c.report(diag.Errorf(p.At, CodeRegexConst, "%s is used as a pattern of %s and of %s", fn.Params[p.Param].Name, q.Func.Name, p.Func.Name).
				WithLabel("the pattern of %s (line %d) is compiled differently", q.Func.Name, q.At.Pos().Line).
				WithHint("give the function one parameter for each kind of pattern"))
		}
		return false
	}
	fn.RegexParams = append(fn.RegexParams, p)
	return true
}

// funcRegexes passes the pattern parameters of the functions fns called
// on to the parameters of the callers that give them, until none changes
// (the checked call graph is acyclic; a cycle reported stops anyway, the
// parameters being finite), then checks every call in the bodies.
func (c *checker) funcRegexes(fns []*Func) {
	for changed := true; changed; {
		changed = false
		for _, fn := range fns {
			for _, call := range fn.Calls {
				g := c.info.Funcs[call]
				args := c.info.Args(call)
				for _, p := range g.RegexParams {
					if p.Param >= len(args) {
						continue
					}
					if i := c.paramOf(args[p.Param], fn); i >= 0 {
						if c.addRegexParam(fn, RegexParam{Param: i, Func: p.Func, At: args[p.Param], Via: g}) {
							changed = true
						}
					}
				}
			}
		}
	}
	for _, fn := range fns {
		for _, call := range fn.Calls {
			c.callRegexes(call, c.info.Funcs[call], fn)
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

// callRegexes checks and compiles the patterns that the call e of g, in
// the body of caller (nil in the policy's statements), passes.
func (c *checker) callRegexes(e *policy.CallExpr, g *Func, caller *Func) {
	args := c.info.Args(e)
	if len(args) != len(g.Params) {
		return // E0402 said so
	}
	for _, p := range g.RegexParams {
		a := args[p.Param]
		if c.paramOf(a, caller) >= 0 {
			continue // a pattern parameter of caller: checked at its calls
		}
		lit, ok := c.constLit(a)
		if !ok {
			if t := c.info.Types[a]; (t == nil || !t.IsInvalid()) && !c.unboundConst(a) {
				name := g.Params[p.Param].Name
				c.report(diag.Errorf(a, CodeRegexConst, "argument %s of %s must be a constant string", name, g.FullName()).
					WithLabel("%s is computed at run time", exprText(a)).
					WithHint("fn %s %s: patterns are compiled once, when the policy is checked, so pass a literal or a const", g.Name, p.use(g)))
			}
			continue
		}
		c.compileRegex(p.Func, a, lit)
	}
}
