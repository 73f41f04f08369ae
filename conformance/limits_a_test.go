package conformance

import (
	"testing"

	"github.com/policyrun/policyrun/compiler"
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
	tests := []limitCase{
		{`{"xs":[1,2,3,4,5],"a":[1],"app":false}`, "keep"},                                                                          // 32 elements
		{`{"xs":[1,2,3,4,5,6],"a":[1],"app":false}`, "fault (record_too_large)"},                                                    // 64
		{`{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31],"a":[0],"app":true}`, "keep"}, // 32
		{`{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],"a":[0],"app":true}`, "fault (record_too_large)"},
	}
	runLimitCases(t, f, info, lim, tests)
}

// TestBuildLimit: a run may build at most spec.MaxBuilt(lim) bytes of
// values in all (four records' worth), garbage included; past that it
// faults memory_limit on every backend, so that a value rebuilt at each
// step of a loop, each copy within every other limit, cannot exhaust
// memory. MaxRecord is lowered to 1 KiB here (1 MiB and 4 KiB to build);
// the cases stay far from the bound, where the backends' counts (the VM's
// arena, Lua's allocations) agree on the outcome.
func TestBuildLimit(t *testing.T) {
	const src = `policy "rebuild"
schema {
  xs: array<int>
  ys: array<int>
  ...
}
for i, x in .xs {
  set .acc = .ys + .ys
}
remove .acc
`
	f, info, diags := compiler.CheckFile("rebuild.policy", []byte(src))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	lim := spec.Limits{MaxRecord: 1 << 10}
	if n := spec.MaxBuilt(lim); n != 4<<10+1<<20 {
		t.Fatalf("MaxBuilt = %d", n)
	}
	ys := `[1,2,3,4,5,6,7,8,9,10]`
	xs := func(n int) string {
		b := []byte("[")
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '0')
		}
		return string(append(b, ']'))
	}
	tests := []limitCase{
		{`{"xs":` + xs(1) + `,"ys":` + ys + `}`, "keep"},
		{`{"xs":` + xs(20000) + `,"ys":` + ys + `}`, "fault (memory_limit)"}, // 6 MB built
	}
	runLimitCases(t, f, info, lim, tests)
}
