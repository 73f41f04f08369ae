package check

import (
	"fmt"
	"regexp"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
)

func (c *checker) call(e *policy.CallExpr, st *state) *types.Type {
	if e.Qual != nil {
		return c.qualifiedCall(e, st)
	}
	if fn := c.funcs[e.Fun.Name]; fn != nil {
		return c.callFunc(e, fn, st)
	}
	f := builtin.Lookup(e.Fun.Name)
	if c.clashes[e.Fun.Name] && (f == nil || c.globals[e.Fun.Name] != nil) {
		for _, a := range e.Args {
			c.expr(a, st)
		}
		return types.InvalidType // E0607 said which declaration it is
	}
	if f == nil {
		for _, a := range e.Args {
			c.expr(a, st)
		}
		d := diag.Errorf(e.Fun, CodeUnknownFunc, "unknown function %s", e.Fun.Name)
		if q := c.importedFunc(e.Fun.Name); q != "" {
			d = d.WithHint("did you mean %s? a module's functions are called by the module's name", q)
		} else if k := c.consts[e.Fun.Name]; k != nil {
			d = d.WithHint("%s is a constant (line %d), not a function", k.Name, k.Decl.Const.Line)
		} else if s := suggest.Closest(e.Fun.Name, append(builtin.Names(), c.funcNames()...)); s != "" {
			d = d.WithHint("did you mean %s?", s)
		} else {
			d = d.WithHint("policies call built-in functions only; the reference lists them")
		}
		c.report(d)
		return types.InvalidType
	}
	c.info.Calls[e] = f
	args := make([]*types.Type, len(e.Args))
	for i, a := range e.Args {
		if i == f.PathArg {
			if !c.isPath(a) {
				c.report(diag.Errorf(a, CodeExistsPath, "%s takes a path, not an expression", f.Name).
					WithLabel("%s is not a path", exprText(a)).
					WithHint("to test a value, compare it with null: %s != null", exprText(a)))
			}
		}
		args[i] = c.expr(a, st)
		c.constArg(f, i, a)
	}
	if f.RegexArg >= 0 && f.RegexArg < len(e.Args) {
		c.regex(e, f, args)
	}
	if f.ConstArg >= 0 && f.ConstArg < len(e.Args) {
		c.constParam(e, f, args)
	}
	args = c.defaults(e, f, args)
	res, err := checkArgs(f, args)
	if err == nil {
		return c.refineCall(e, f, args, res)
	}
	switch err.Reason {
	case badCount:
		c.report(diag.Errorf(e, CodeArgCount, "%s", err.Msg).
			WithLabel("%s", f.Sig).
			WithHint("%s returns %s", f.Name, f.Doc))
	case notPresent:
		a := e.Args[err.Arg]
		c.report(c.optionalErr(a, args[err.Arg], "a "+err.Want))
	case needsNarrow:
		a := e.Args[err.Arg]
		want := types.AnyType
		if ps := signatures[f.ID].params; err.Arg < len(ps) {
			want = ps[err.Arg]
		} else if w := wantOf[err.Want]; w != nil {
			want = w
		}
		c.report(anyErr(a, args[err.Arg], fmt.Sprintf("argument %d of %s", err.Arg+1, f.Name), want))
	default:
		a := e.Args[err.Arg]
		name := fmt.Sprintf("argument %d", err.Arg+1)
		if err.Arg < len(signatures[f.ID].params) || polymorphicA[f.ID] != nil && err.Arg < len(f.Params) && f.Params[err.Arg].Type != "..." {
			name = "argument " + f.Params[err.Arg].Name
		}
		d := diag.Errorf(a, CodeArgType, "%s of %s is %s, want %s", name, f.Name, args[err.Arg], err.Want).
			WithLabel("%s is %s%s", exprText(a), args[err.Arg], c.declaredAt(a))
		if err.Want == "string" && args[err.Arg].IsNumeric() {
			d = d.WithHint("convert it: to_string(%s)", exprText(a))
		} else if f.ID == builtin.Coalesce {
			d = d.WithHint("all arguments of coalesce must have one type")
		} else {
			d = d.WithHint("%s", f.Sig)
		}
		c.report(d)
	}
	if res == nil {
		return types.InvalidType
	}
	return res
}

// isPath reports whether e is a path a test like exists() can look up.
func (c *checker) isPath(e policy.Expr) bool {
	switch e.(type) {
	case *policy.FieldExpr, *policy.IndexExpr, *policy.RootExpr, *policy.MetaExpr:
		return true
	case *policy.Ident:
		return true
	}
	return false
}

// regex checks that the pattern argument of the call e of f is a
// constant string (literalArg), and compiles it; args are the types of
// e's arguments.
func (c *checker) regex(e *policy.CallExpr, f *builtin.Func, args []*types.Type) {
	const hint = "patterns are compiled once, when the policy is checked: write it as a literal, e.g. `^\\d+$`, or a const"
	if a, lit, ok := c.literalArg(e, f, f.RegexArg, args, CodeRegexConst, "pattern", hint); ok {
		c.compileRegex(f, a, lit)
	}
}

// compileRegex compiles the constant pattern lit of f, argument a, and
// records it for the backends.
func (c *checker) compileRegex(f *builtin.Func, a policy.Expr, lit *policy.BasicLit) {
	if f.Grok {
		c.grok(a, lit)
		return
	}
	re, err := regexp.Compile(lit.Str)
	if err != nil {
		c.report(diag.Errorf(a, CodeRegexSyntax, "invalid regular expression").
			WithLabel("this pattern does not compile").
			WithHint("%s", err))
		return
	}
	c.info.Regexps[a] = re
	if f.ID == builtin.Capture {
		named := false
		for _, n := range re.SubexpNames() {
			if n != "" {
				named = true
			}
		}
		if !named {
			c.report(diag.Warnf(a, CodeNoGroups, "capture returns named groups, and this pattern has none").
				WithHint("name the groups you want: (?P<name>...)"))
		}
	}
}
