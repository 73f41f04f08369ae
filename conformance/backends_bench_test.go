package conformance

import (
	"testing"

	"github.com/policyrun/policyrun/conformance/baselines/expr"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// backendBatch is the number of B1 records decoded per batch.
const backendBatch = 1000

// BenchmarkBackends measures the nine B1 policies on four backends over the
// same generated records, one record per iteration (ns/record and
// allocs/record):
//
//   - vm: the compiled policy over records decoded into an arena;
//   - lua_transpiled: the policy transpiled to Lua, each record converted
//     to a Lua table and, when edited, back into the arena;
//   - lua_handwritten: the idiomatic Fluent Bit filter of baselines/lua,
//     with Fluent Bit's conversion to a plain table and back;
//   - expr: the expr-lang program of baselines/expr over the record decoded
//     with encoding/json into a map[string]any and encoded again, as a Go
//     program built on expr would.
//
// The decoding into the arena is outside the clock for the first three (it
// is re-done, timer stopped, when a batch is used up); the JSON decoding of
// expr is its own conversion and is inside. Run with a fixed iteration
// count: with -benchtime 1s the VM's tens of millions of iterations spend
// minutes of wall time in the stopped-timer decodes.
//
//	go test ./conformance -run '^$' -bench BenchmarkBackends -benchmem -count 5 -benchtime 50000x
func BenchmarkBackends(b *testing.B) {
	cases := baseCases(b)
	lines := map[string][][]byte{
		"flat": genLines(b, "flat", 1, backendBatch),
		"k8s":  genLines(b, "k8s", 1, backendBatch),
	}
	for _, c := range cases {
		ls := lines[c.kind]
		b.Run(c.name+"/vm", func(b *testing.B) {
			m := vm.NewMachine(c.prog)
			runBackendBatch(b, ls, func(rec *record.Record) { m.Run(rec) })
		})
		b.Run(c.name+"/lua_transpiled", func(b *testing.B) {
			r, err := c.transpiled.NewRunner()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			runBackendBatch(b, ls, func(rec *record.Record) {
				if _, err := r.Run(rec); err != nil {
					b.Fatal(err)
				}
			})
		})
		b.Run(c.name+"/lua_handwritten", func(b *testing.B) {
			r, err := c.script.NewRunner()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			runBackendBatch(b, ls, func(rec *record.Record) { r.Run(rec) })
		})
		b.Run(c.name+"/expr", func(b *testing.B) {
			var r expr.Runner
			for _, l := range ls { // the same untimed warm-up pass
				if _, _, err := r.Run(c.expr, l); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for range b.N {
				if i == len(ls) {
					i = 0
				}
				if _, _, err := r.Run(c.expr, ls[i]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/record")
		})
	}
}

// runBackendBatch runs f over decoded records, one per iteration, decoding the
// next batch with the timer stopped when one is used up.
func runBackendBatch(b *testing.B, lines [][]byte, f func(*record.Record)) {
	a := record.NewArena()
	decode := func(recs []*record.Record) []*record.Record {
		a.Reset()
		recs = recs[:0]
		for _, l := range lines {
			rec, err := a.DecodeJSON(l, record.Referenced)
			if err != nil {
				b.Fatal(err)
			}
			recs = append(recs, rec)
		}
		return recs
	}
	// One untimed pass first: the arena grows to its working size and the
	// backend warms up (pooled states, caches) as in a running pipeline,
	// which reuses both from batch to batch.
	recs := decode(nil)
	for _, rec := range recs {
		f(rec)
	}
	recs = decode(recs)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for range b.N {
		if i == len(recs) {
			b.StopTimer()
			recs = decode(recs)
			i = 0
			b.StartTimer()
		}
		f(recs[i])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/record")
}
