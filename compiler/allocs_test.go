package compiler

import (
	"fmt"
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// TestBuiltStringsAllocateNothing: strings a policy builds go into the
// record's arena, so even a policy that builds them allocates nothing per
// record once the arena has grown.
func TestBuiltStringsAllocateNothing(t *testing.T) {
	prog := compile(t, `policy "strings"
schema {
  user: string
  n: int
  tags: array<string>
  ...
}
set .key = lower(.user) + "-" + to_string(.n * 2)
set .tags_joined = join(.tags, ",")
set .parts = split(.user, "_")
set .when = format_time(now(), "%Y-%m-%d")
set .meta = {"len": len(.user), "first": substr(.user, 0, 2)}
remove .n
`)
	var lines [][]byte
	for i := range 50 {
		lines = append(lines, fmt.Appendf(nil, `{"user":"User_%d_X","n":%d,"tags":["a","b%d"]}`, i, i, i))
	}
	noAllocs(t, prog, lines, clean)
}

// noAllocs runs prog over lines, a batch of JSON records in one arena, as
// the pipeline does, and fails the test when a run's result is not ok or
// when the batch allocates once the arena and the machine have grown.
func noAllocs(t *testing.T, prog *vm.Program, lines [][]byte, ok func(spec.Result) bool) {
	t.Helper()
	a := record.NewArena()
	m := vm.NewMachine(prog)
	run := func() {
		a.Reset()
		for _, l := range lines {
			rec, err := a.DecodeJSON(l, record.Referenced)
			if err != nil {
				t.Fatal(err)
			}
			if res := m.Run(rec); !ok(res) {
				t.Fatal(res)
			}
		}
	}
	run()
	if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
		t.Errorf("%.1f allocations per batch, want 0", allocs)
	}
}

// clean is noAllocs' ok for runs that must neither fault nor drop.
func clean(res spec.Result) bool { return res == spec.Result{} }
