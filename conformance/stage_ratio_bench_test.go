package conformance

import (
	"slices"
	"testing"
	"time"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// BenchmarkStageRatios measures what issue 17's targets are stated in —
// the cost of an editing B1 policy over that of the no-op (flat lines) or
// of no policy at all (k8s records) — in process and side by side: each
// iteration runs every contender once over a batch of about 4 MiB of
// lines in one arena, in chunks of about 128 KiB, as a pipeline does
// (decode a chunk, run the VM over it, encode each record to JSON for the
// null output; reset the arena after the batch), timing each chunk on its
// own, so that every contender shares whatever the machine is doing at
// that moment. It reports each contender's median ns/record over its
// chunks and its ratio to its baseline (x/base). Nothing of the tail input is in it, so the
// ratios are those of the stages the policies change, higher than those of
// whole-process runs.
//
//	go test ./conformance -run '^$' -bench BenchmarkStageRatios -benchtime 20x
func BenchmarkStageRatios(b *testing.B) {
	type contender struct {
		name, kind, base string
		m                *vm.Machine // nil: no policy
		ns               []float64
	}
	cs := []*contender{{name: "none-flat", kind: "flat"}, {name: "none-k8s", kind: "k8s"}}
	for _, p := range b1Policies(b) {
		base := "1-noop"
		if p.kind == "k8s" {
			base = "none-k8s"
		}
		cs = append(cs, &contender{name: p.name, kind: p.kind, base: base, m: vm.NewMachine(p.prog)})
	}
	// The batch's lines, in chunks (a tail batch is at most 4 MiB and 16k
	// lines; pipeline.chunkInput is 128 KiB).
	chunks := map[string][][][]byte{}
	for _, kind := range []string{"flat", "k8s"} {
		g := genLines(b, kind, 1, 16<<10)
		var chunk [][]byte
		for i, n, size := 0, 0, 0; i < len(g) && size < 4<<20; i++ {
			chunk = append(chunk, g[i])
			n += len(g[i])
			size += len(g[i])
			if n >= 128<<10 || i == len(g)-1 {
				chunks[kind] = append(chunks[kind], chunk)
				chunk, n = nil, 0
			}
		}
	}
	a := record.NewArena()
	recs := make([]*record.Record, 0, 1024)
	out := make([]byte, 0, 64<<10)
	run := func(c *contender, timed bool) {
		a.Reset()
		for _, ch := range chunks[c.kind] {
			t0 := time.Now()
			recs = decodeLines(b, a, ch, recs)
			if c.m != nil {
				for _, rec := range recs {
					c.m.Run(rec)
				}
			}
			for _, rec := range recs {
				out = append(rec.AppendJSON(out[:0]), '\n')
			}
			if timed {
				c.ns = append(c.ns, float64(time.Since(t0).Nanoseconds())/float64(len(ch)))
			}
		}
	}
	for _, c := range cs { // warm up: the arena grows to size
		run(c, false)
	}
	b.ResetTimer()
	for range b.N {
		for _, c := range cs {
			run(c, true)
		}
	}
	med := map[string]float64{}
	for _, c := range cs {
		slices.Sort(c.ns)
		med[c.name] = c.ns[len(c.ns)/2]
		b.ReportMetric(med[c.name], c.name+"-ns/record")
	}
	for _, c := range cs {
		if c.base != "" && c.base != c.name {
			b.ReportMetric(med[c.name]/med[c.base], c.name+"/base")
		}
	}
}
