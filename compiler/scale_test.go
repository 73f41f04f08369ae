package compiler

import (
	"runtime"
	"testing"

	"github.com/policyrun/policyrun/internal/bigpolicy"
)

// TestCompileScalesLinearly compiles each shape of internal/bigpolicy at
// sizes n and 2n: the memory CompileFile allocates (a measure that does
// not depend on the machine's load, unlike its time) must grow about
// twice, not four times. The cache of record reads was once copied at
// every branch and keyed by the string of each prefix of a path.
// BenchmarkCompileFile* show the times.
func TestCompileScalesLinearly(t *testing.T) {
	sizes := map[string]int{"Path": 4000, "IndexPath": 4000, "SetPath": 2000, "Coalesce": 4000}
	for _, s := range bigpolicy.Shapes {
		t.Run(s.Name, func(t *testing.T) {
			n := sizes[s.Name]
			if n == 0 {
				n = 1000
			}
			var bytes [2]uint64
			for i, m := range []int{n, 2 * n} {
				src := s.Gen(m)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				prog, diags := CompileFile("big.policy", src)
				runtime.ReadMemStats(&after)
				if prog == nil {
					t.Fatalf("n=%d: %v", m, diags.Err())
				}
				bytes[i] = after.TotalAlloc - before.TotalAlloc
			}
			if r := float64(bytes[1]) / float64(bytes[0]); r > 3 {
				t.Errorf("n=%d: %d bytes, 2n: %d bytes (%.1f times)", n, bytes[0], bytes[1], r)
			}
		})
	}
}
