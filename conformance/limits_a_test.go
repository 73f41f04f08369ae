package conformance

import (
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/internal/vmtest"
	"github.com/policyrun/policyrun/spec"
)

// TestArrayLimit: an array that a + b or append builds may have at most
// spec.MaxElements(lim) elements (MaxRecord / 2: more could never be
// stored); past that the run faults record_too_large on every backend, so
// that doubling an array in a loop cannot exhaust memory. The limit is
// lowered to 32 elements here.
func TestArrayLimit(t *testing.T) {
	const src = `policy "double"
schema {
  xs: array<int>
  a: array<int>
  app: bool
  ...
}
for i, x in .xs {
  if .app {
    set .a = append(.a, x)
  } else {
    set .a = .a + .a
  }
}
set .n = len(.a)
remove .a, .xs
`
	f, info, diags := compiler.CheckFile("double.policy", []byte(src))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	lim := spec.Limits{MaxRecord: 64}
	if n := spec.MaxElements(lim); n != 32 {
		t.Fatalf("MaxElements = %d", n)
	}
	tests := []struct{ line, outcome string }{
		{`{"xs":[1,2,3,4,5],"a":[1],"app":false}`, "keep"},                                                                          // 32 elements
		{`{"xs":[1,2,3,4,5,6],"a":[1],"app":false}`, "fault (record_too_large)"},                                                    // 64
		{`{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31],"a":[0],"app":true}`, "keep"}, // 32
		{`{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],"a":[0],"app":true}`, "fault (record_too_large)"},
	}
	for _, b := range backends {
		r, err := b.Load(f, info, spec.Options{Limits: lim})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			out, got, err := vmtest.RunJSON(t, r, tt.line)
			if err != nil || out.String() != tt.outcome {
				t.Errorf("%s: %s: %s %v, want %s", b.Name, tt.line, out, err, tt.outcome)
			}
			if out.Faulted() && got != tt.line {
				t.Errorf("%s: %s: the faulted record is %s", b.Name, tt.line, got)
			}
		}
	}
}
