package conformance

import (
	"strings"
	"testing"

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
