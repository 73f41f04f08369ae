package check

import (
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/netaddr"
	"github.com/policyrun/policyrun/policy"
)

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
