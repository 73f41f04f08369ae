package check

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/bigpolicy"
	"github.com/policyrun/policyrun/policy"
)

// TestCheckScalesLinearly checks each shape of internal/testkit/bigpolicy at sizes
// n and 2n: the memory the check allocates (a measure that does not depend
// on the machine's load, unlike its time) must grow about twice, not four
// times. Flow states once copied every type and fact per statement, and
// path keys were rebuilt for each prefix of a path. BenchmarkCheck* show
// the times.
func TestCheckScalesLinearly(t *testing.T) {
	sizes := map[string]int{"Path": 4000, "IndexPath": 4000, "SetPath": 4000, "Coalesce": 4000}
	bigpolicy.TestLinear(t, sizes, func(t *testing.T, src []byte) uint64 {
		f, errs := policy.ParseFile("big.policy", src)
		if len(errs) > 0 {
			t.Fatal(errs[0])
		}
		if _, ds := Check(f); len(ds) > 0 {
			t.Fatal(ds[0])
		}
		return bigpolicy.Allocated(func() { Check(f) })
	})
}

// TestNearFieldLargeObject: in an object of many fields the near-miss
// warning (W0002) finds the field through its index, as in a small one.
func TestNearFieldLargeObject(t *testing.T) {
	for _, n := range []int{3, 100} {
		var b strings.Builder
		b.WriteString("policy \"p\"\nschema {\n  status: int\n  ...\n}\n")
		for i := range n {
			b.WriteString("set .field_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "_" + string(rune('a'+i/26)) + " = 1\n")
		}
		b.WriteString("set .s = .stauts ?? 0\nset .t = .Status ?? 0\nset .u = .statuss ?? 0\n")
		_, ds := Check(mustParse(t, b.String()))
		var got []string
		for _, d := range ds {
			got = append(got, d.Code+" "+d.Msg)
		}
		want := []string{
			CodeNearField + ` the record does not declare stauts, but declares status`,
			CodeNearField + ` the record does not declare Status, but declares status`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%d fields:\n got %q\nwant %q", n, got, want)
		}
	}
}
