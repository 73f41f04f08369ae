package check

import (
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/netaddr"
	"github.com/policyrun/policyrun/policy"
)

// literalArg returns argument i of the call e of f, which f's signature
// says is a constant string, and its literal, ok. A parameter of the
// function being checked that is a constant at each call (callConsts) is
// checked at those calls instead; an argument computed at run time is
// reported, with code and a message naming it what and f. Either way ok
// is false. args are the types of e's arguments.
func (c *checker) literalArg(e *policy.CallExpr, f *builtin.Func, i int, args []*types.Type, code, what, hint string) (a policy.Expr, lit *policy.BasicLit, ok bool) {
	a = e.Args[i]
	lit, ok = c.constLit(a)
	if !ok && !c.bodyConst(e, f, i, args) {
		if t := c.info.Types[a]; (t == nil || !t.IsInvalid()) && !c.unboundConst(a) {
			c.report(diag.Errorf(a, code, "the %s of %s must be a constant string", what, f.Name).
				WithLabel("%s is computed at run time", exprText(a)).
				WithHint("%s", hint))
		}
	}
	return a, lit, ok
}

// constArg checks argument i of a call of f when it is a constant that the
// built-in reads in a format of its own (the cidr of ip_in_cidr): a
// malformed one could only make the call give false or null.
func (c *checker) constArg(f *builtin.Func, i int, a policy.Expr) {
	lit, ok := c.constLit(a)
	if !ok {
		return
	}
	if f.ID == builtin.IPInCIDR && i == 1 {
		if _, err := netaddr.ParseCIDR(lit.Str); err != nil {
			c.report(diag.Errorf(a, CodeConstArg, "invalid CIDR block %s", policy.Quote(lit.Str)).
				WithLabel("ip_in_cidr would always be false").
				WithHint("write an address, a slash and the prefix length: \"10.0.0.0/8\", \"2001:db8::/32\" (%s)", err))
		}
	}
}

// grok expands and compiles the constant grok pattern lit, argument a; an error
// points into the literal where it can (a string without escapes maps
// offset for offset).
func (c *checker) grok(a policy.Expr, lit *policy.BasicLit) {
	re, err := grok.Compile(lit.Str)
	if err != nil {
		d := diag.Errorf(lit, CodeGrok, "%s", err.Msg).
			WithLabel("in this grok pattern").
			WithHint("%s", err.Hint)
		if raw := lit.Raw; len(raw) >= 2 && raw[1:len(raw)-1] == lit.Str && !strings.Contains(lit.Str, "\n") {
			p := lit.Pos()
			d.Pos = policy.Pos{Offset: p.Offset + 1 + err.Offset, Line: p.Line, Col: p.Col + 1 + err.Offset}
			n := max(err.Len, 1)
			d.End = policy.Pos{Offset: d.Pos.Offset + n, Line: p.Line, Col: d.Pos.Col + n}
			d.Label = "here"
		}
		if err.Hint == "" {
			d.Hint = ""
		}
		c.report(d)
		return
	}
	c.info.Regexps[a] = re
}
