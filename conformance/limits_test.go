package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/policytest"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// TestIterationLimit runs nested loops just under and just over the
// iteration limit on every backend: under, the record is edited; over, the
// run faults iteration_limit and the record is left as it came in
// (docs/semantics.md, "Faults"). The limit is lowered so that the Lua
// backend reaches it quickly; the VM also runs at the default limit.
func TestIterationLimit(t *testing.T) {
	const src = `policy "loops"
schema {
  xs: array<int>
  ...
}
for i, x in .xs {
  for j, y in .xs {
    set .last = x + y
  }
}
`
	f, info, diags := compiler.CheckFile("loops.policy", []byte(src))
	if diag.HasErrors(diags) {
		t.Fatal(diags)
	}
	if lua.MaxIterations != vm.MaxIterations {
		t.Fatalf("lua.MaxIterations %d, vm.MaxIterations %d", lua.MaxIterations, vm.MaxIterations)
	}
	line := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"xs":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(i))
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	// n elements cost n + n*n iterations.
	tests := []struct {
		limit, n int
		outcome  string
		last     int64 // -1: absent
	}{
		{1000, 30, "kept", 58},
		{1000, 31, "kept", 60},
		{1000, 32, "fault (iteration_limit)", -1},
		{992, 31, "kept", 60},
		{991, 31, "fault (iteration_limit)", -1},
	}
	for _, b := range backends {
		for _, tt := range tests {
			r, err := b.Load(f, info, policytest.Config{MaxIterations: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, b.Name(), r, line(tt.n), tt.outcome, tt.last)
		}
	}
	// The default limit, on the VM alone (the Lua backend takes seconds).
	prog, diags := compiler.CompileFile("loops.policy", []byte(src))
	if prog == nil {
		t.Fatal(diags)
	}
	for _, tt := range []struct {
		n       int
		outcome string
		last    int64
	}{
		{1023, "kept", 2044}, // 1,047,552 iterations
		{1024, "fault (iteration_limit)", -1},
	} {
		a := record.NewArena()
		rec, err := a.DecodeJSON(line(tt.n), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		res := vm.NewMachine(prog).Run(rec)
		if got := res.Fault.String(); tt.last >= 0 && res.Fault != vm.NoFault || tt.last < 0 && got != "iteration_limit" {
			t.Errorf("vm, %d elements: fault %q", tt.n, got)
		}
		if got := lastOf(rec); got != tt.last {
			t.Errorf("vm, %d elements: .last is %d, want %d", tt.n, got, tt.last)
		}
	}
}

func checkRun(t *testing.T, backend string, r policytest.Runner, line []byte, outcome string, last int64) {
	t.Helper()
	a := record.NewArena()
	rec, err := a.DecodeJSON(line, record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	if out := r.Run(rec); out.String() != outcome {
		t.Errorf("%s: %s, want %s", backend, out, outcome)
	}
	if got := lastOf(rec); got != last {
		t.Errorf("%s: .last is %d, want %d", backend, got, last)
	}
}

// lastOf returns the int at .last, or -1 when there is none.
func lastOf(rec *record.Record) int64 {
	v, ok := rec.Get(record.NewPath("last"))
	if n, isInt := v.AsInt(); ok && isInt {
		return n
	}
	return -1
}
