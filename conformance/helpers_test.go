package conformance

import (
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
)

// checkPolicy parses and checks the policy src, named name, stopping the
// test at the first error.
func checkPolicy(tb testing.TB, name string, src []byte) (*policy.File, *check.Info) {
	tb.Helper()
	f, info, diags := compiler.CheckFile(name, src)
	if err := diags.Err(); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return f, info
}
