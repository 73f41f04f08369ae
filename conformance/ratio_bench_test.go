package conformance

import (
	"testing"
	"time"

	"github.com/policyrun/policyrun/conformance/internal/exprbaseline"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// BenchmarkBackendRatios measures the same thing as BenchmarkBackends, the
// other way round: each iteration runs one batch of records through every
// backend in turn, timing each batch on its own, so that the four
// backends share whatever the machine is doing at that moment. On a
// shared machine whose speed drifts by half from minute to minute, this
// gives the VM's ratios to the others far more steadily than four
// separate sub-benchmarks do. It reports each backend's wall-clock
// ns/record and the ratios (lua_t/vm: transpiled Lua ÷ VM, lua_h/vm,
// expr/vm). Wall clock is the conservative choice here: it leaves out the
// garbage collection that the other backends run on the other core.
//
//	go test ./conformance -run '^$' -bench BenchmarkBackendRatios -count 5 -benchtime 100x
func BenchmarkBackendRatios(b *testing.B) {
	lines := map[string][][]byte{
		"flat": backendLines(b, "flat"),
		"k8s":  backendLines(b, "k8s"),
	}
	for _, c := range baseCases(b) {
		b.Run(c.name, func(b *testing.B) {
			ls := lines[c.kind]
			m := vm.NewMachine(c.prog)
			lt := newRunner(b, c.transpiled.NewRunner)
			lh := newRunner(b, c.script.NewRunner)
			var er exprbaseline.Runner
			backends := []func(*record.Record){
				func(rec *record.Record) { m.Run(rec) },
				func(rec *record.Record) {
					if _, err := lt.Run(rec); err != nil {
						b.Fatal(err)
					}
				},
				func(rec *record.Record) { lh.Run(rec) },
			}
			// Each backend gets its batch freshly decoded, untimed, just
			// before it runs, as a pipeline stage does: otherwise the
			// VM would meet records that the other backends' garbage
			// has pushed out of every cache, and run several times
			// slower than it does in a pipeline.
			arena := record.NewArena()
			var recs []*record.Record
			var spent [4]time.Duration
			round := func(timed bool) {
				for i, f := range backends {
					recs = batch(b, arena, ls, recs)
					t0 := time.Now()
					for _, rec := range recs {
						f(rec)
					}
					if timed {
						spent[i] += time.Since(t0)
					}
				}
				t0 := time.Now()
				for _, l := range ls {
					if _, _, err := er.Run(c.expr, l); err != nil {
						b.Fatal(err)
					}
				}
				if timed {
					spent[3] += time.Since(t0)
				}
			}
			round(false) // warm up, as BenchmarkBackends does
			b.ResetTimer()
			for range b.N {
				round(true)
			}
			n := float64(b.N * len(ls))
			for i, name := range []string{"vm", "lua_t", "lua_h", "expr"} {
				b.ReportMetric(float64(spent[i].Nanoseconds())/n, name+"-ns/record")
			}
			vmT := float64(spent[0])
			b.ReportMetric(float64(spent[1])/vmT, "lua_t/vm")
			b.ReportMetric(float64(spent[2])/vmT, "lua_h/vm")
			b.ReportMetric(float64(spent[3])/vmT, "expr/vm")
		})
	}
}
