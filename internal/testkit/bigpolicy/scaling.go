package bigpolicy

import (
	"runtime"
	"testing"
)

// Allocated returns the bytes f allocates: a measure of work that does not
// depend on the machine's load, unlike time.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLinear runs cost on every shape at sizes n and 2n (n from sizes by
// shape name, 1000 when absent) and fails the test when the cost at 2n is
// more than three times the cost at n: linear work doubles, quadratic
// quadruples. cost stops the test itself when the policy does not check.
func TestLinear(t *testing.T, sizes map[string]int, cost func(t *testing.T, src []byte) uint64) {
	for _, s := range Shapes {
		t.Run(s.Name, func(t *testing.T) {
			n := sizes[s.Name]
			if n == 0 {
				n = 1000
			}
			a, b := cost(t, s.Gen(n)), cost(t, s.Gen(2*n))
			if r := float64(b) / float64(a); r > 3 {
				t.Errorf("n=%d: %d, 2n: %d (%.1f times)", n, a, b, r)
			}
		})
	}
}
