package conformance

import (
	"testing"

	"github.com/policyrun/policyrun/conformance/internal/exprbaseline"
	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// backendBatchBytes is the input of one batch: the pipeline's chunk
// (pipeline/input.go, chunkInput), the records a stage gets at a time,
// about 500 flat B1 records or 130 Kubernetes ones.
const backendBatchBytes = 128 << 10

// backendLines returns generated B1 lines of kind (seed 1) for one batch.
func backendLines(tb testing.TB, kind string) [][]byte {
	g, err := gen.New(kind, 1)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for n := 0; n < backendBatchBytes; {
		l := g.Append(nil)
		out = append(out, l)
		n += len(l)
	}
	return out
}

// BenchmarkBackends measures the nine B1 policies on four backends over the
// same generated records, one record per iteration (ns/record and
// allocs/record):
//
//   - vm: the compiled policy over records decoded into an arena;
//   - lua_transpiled: the policy transpiled to Lua, each record converted
//     to a Lua table and, when edited, back into the arena;
//   - lua_handwritten: the idiomatic Fluent Bit filter of baselines/lua,
//     with Fluent Bit's conversion to a plain table and back;
//   - expr: the expr-lang program of internal/exprbaseline over the record decoded
//     with encoding/json into a map[string]any and encoded again, as a Go
//     program built on expr would.
//
// The decoding into the arena is outside the clock for the first three
// (the batch is put back, timer stopped, when it is used up: see
// restorableBatch); the JSON decoding of expr is its own conversion and is
// inside. Besides ns/record (wall clock), each reports cpu-ns/record, the
// process's CPU time, which counts the garbage collector's work on the
// other core. bench/backends.sh runs it and makes the table:
//
//	go test ./conformance -run '^$' -bench BenchmarkBackends -benchmem -count 5
func BenchmarkBackends(b *testing.B) {
	cases := baseCases(b)
	lines := map[string][][]byte{
		"flat": backendLines(b, "flat"),
		"k8s":  backendLines(b, "k8s"),
	}
	for _, c := range cases {
		ls := lines[c.kind]
		b.Run(c.name+"/vm", func(b *testing.B) {
			m := vm.NewMachine(c.prog)
			runBackendBatch(b, ls, func(rec *record.Record) { m.Run(rec) })
		})
		b.Run(c.name+"/lua_transpiled", func(b *testing.B) {
			r := newRunner(b, c.transpiled.NewRunner)
			runBackendBatch(b, ls, func(rec *record.Record) {
				if _, err := r.Run(rec); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(c.name+"/lua_handwritten", func(b *testing.B) {
			r := newRunner(b, c.script.NewRunner)
			runBackendBatch(b, ls, func(rec *record.Record) { r.Run(rec) })
		})
		b.Run(c.name+"/expr", func(b *testing.B) {
			var r exprbaseline.Runner
			for _, l := range ls { // the same untimed warm-up pass
				if _, _, err := r.Run(c.expr, l); err != nil {
					b.Fatal(err)
				}
			}
			timePerRecord(b, &ls, nil, func(l []byte) {
				if _, _, err := r.Run(c.expr, l); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// runBackendBatch runs f over decoded records, one per iteration, putting
// the batch back (restorableBatch) with the timers stopped when it is used
// up.
func runBackendBatch(b *testing.B, lines [][]byte, f func(*record.Record)) {
	br := &restorableBatch{a: record.NewArena(), lines: lines}
	// One untimed pass first: the arena grows to its working size and the
	// backend warms up (pooled states, caches) as in a running pipeline,
	// which reuses both from batch to batch.
	br.reset(b)
	for _, rec := range br.recs {
		f(rec)
	}
	br.reset(b)
	timePerRecord(b, &br.recs, func() { br.reset(b) }, f)
}

// timePerRecord is the timed part of a benchmark over the records of
// *batch: it calls step b.N times, one record each, round the batch, and
// before each pass but the first calls refill (if not nil) with the clocks
// stopped. It reports allocs, ns/record and cpu-ns/record.
func timePerRecord[T any](b *testing.B, batch *[]T, refill func(), step func(T)) {
	var cpu cpuClock
	b.ReportAllocs()
	b.ResetTimer()
	cpu.start()
	recs, i := *batch, 0
	for range b.N {
		if i == len(recs) {
			if refill != nil {
				cpu.stop()
				b.StopTimer()
				refill()
				b.StartTimer()
				cpu.start()
			}
			recs, i = *batch, 0
		}
		step(recs[i])
		i++
	}
	cpu.stop()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/record")
	cpu.report(b)
}

// cpuClock adds up the process's CPU time (user and system, every thread)
// over the timed parts of a benchmark. Unlike ns/record, it counts the
// garbage collector's work on the other cores, and not the time the
// machine's other tenants took from ours.
type cpuClock struct {
	t0, total int64
	ok        bool
}

func (c *cpuClock) start() { c.t0, c.ok = processCPU() }

func (c *cpuClock) stop() {
	if t, ok := processCPU(); ok && c.ok {
		c.total += t - c.t0
	}
}

// report adds the cpu-ns/record metric.
func (c *cpuClock) report(b *testing.B) {
	if c.ok {
		b.ReportMetric(float64(c.total)/float64(b.N), "cpu-ns/record")
	}
}
