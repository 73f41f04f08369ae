package check

import (
	"github.com/policyrun/policyrun/builtin"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/netaddr"
	"github.com/policyrun/policyrun/policy"
)

// constArg checks argument i of a call of f when it is a constant that the
// built-in reads in a format of its own (the cidr of ip_in_cidr): a
// malformed one could only make the call give false or null.
func (c *checker) constArg(f *builtin.Func, i int, a policy.Expr) {
	lit, ok := policy.Unparen(a).(*policy.BasicLit)
	if !ok || lit.Kind != policy.LitString {
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
