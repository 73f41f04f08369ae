package conformance

import (
	"runtime"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// TestZeroAllocs holds B1 policies 1–6 to zero heap allocations per
// record in steady state (decoding into a reused arena included).
func TestZeroAllocs(t *testing.T) {
	for _, p := range b1Policies(t) {
		if p.name[0] > '6' {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			lines := b1Lines(t, p.kind)[:200]
			a := record.NewArena()
			m := vm.NewMachine(p.prog)
			var recs []*record.Record
			run := func() {
				recs = batch(t, a, lines, recs)
				for _, rec := range recs {
					m.Run(rec)
				}
			}
			run() // warm up: the arena and the machine reach their size
			if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
				t.Errorf("%s: %.2f allocations per batch of %d records, want 0", p.name, allocs, len(lines))
			}
		})
	}
}

// TestConcurrentRuns runs one Program from 8 goroutines, each with its own
// arena and records, and checks every output against a sequential run (go
// test -race watches for shared state).
func TestConcurrentRuns(t *testing.T) {
	for _, p := range b1Policies(t) {
		t.Run(p.name, func(t *testing.T) {
			lines := b1Lines(t, p.kind)[:100]
			want := outputs(t, p.prog, lines, false)
			concurrently(t, 8, func(g int) string {
				for range 3 {
					if got := outputs(t, p.prog, lines, g%2 == 0); got != want {
						return "outputs differ from the sequential run"
					}
				}
				return ""
			})
		})
	}
}

// outputs runs prog over lines and returns the results and records, with
// a Machine of its own or the Program's pool.
func outputs(t *testing.T, prog *vm.Program, lines [][]byte, pooled bool) string {
	a := record.NewArena()
	recs := batch(t, a, lines, nil)
	var b strings.Builder
	m := vm.NewMachine(prog)
	for _, rec := range recs {
		var res spec.Result
		if pooled {
			res = prog.Run(rec)
		} else {
			res = m.Run(rec)
		}
		b.WriteString(res.String())
		b.WriteByte(' ')
		b.Write(rec.AppendJSON(nil))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestConcatInALoopIsLinear holds a string grown by + in a loop to memory
// linear in its length: each step takes the string before it in place
// (record.StringBuilder.StartWith), where copying it would keep every
// intermediate in the arena (5,000 steps of 100 bytes held 1.25 GB).
func TestConcatInALoopIsLinear(t *testing.T) {
	const src = `policy "concat"
schema { items: array<string>, s: string?, ... }
set .s = ""
for _, x in .items {
  set .s = (.s ?? "") + "," + x
}
`
	prog, diags := compiler.CompileFile("concat.policy", []byte(src))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	item := strings.Repeat("x", 99)
	line := `{"items": [` + strings.TrimSuffix(strings.Repeat(`"`+item+`",`, 2000), ",") + `]}`
	a := record.NewArena()
	rec, err := a.DecodeJSON([]byte(line), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := vm.NewMachine(prog).Run(rec)
	runtime.ReadMemStats(&after)
	if res.Fault != spec.NoFault {
		t.Fatalf("fault %v", res.Fault)
	}
	s, _ := rec.Get(record.NewPath("s"))
	if n := len(a.Str(s)); n != 2000*100 {
		t.Fatalf("the string has %d bytes, want %d", n, 2000*100)
	}
	// The slab doubles as it grows: a few times the string's 200 KB.
	// Copying each step would allocate about 200 MB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("the run allocated %d bytes for a string of 200,000", grew)
	}
}
