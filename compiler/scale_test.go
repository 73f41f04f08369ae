package compiler

import (
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/bigpolicy"
)

// TestCompileScalesLinearly compiles each shape of internal/testkit/bigpolicy at
// sizes n and 2n: the memory CompileFile allocates (a measure that does
// not depend on the machine's load, unlike its time) must grow about
// twice, not four times. The cache of record reads was once copied at
// every branch and keyed by the string of each prefix of a path.
// BenchmarkCompileFile* show the times.
func TestCompileScalesLinearly(t *testing.T) {
	sizes := map[string]int{"Path": 4000, "IndexPath": 4000, "SetPath": 2000, "Coalesce": 4000}
	bigpolicy.TestLinear(t, sizes, func(t *testing.T, src []byte) uint64 {
		var diags Diagnostics
		n := bigpolicy.Allocated(func() { _, diags = CompileFile("big.policy", src) })
		if err := diags.Err(); err != nil {
			t.Fatal(err)
		}
		return n
	})
}
