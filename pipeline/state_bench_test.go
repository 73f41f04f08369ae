package pipeline

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

// dedupeStage builds the policy stage of bench/policies/dedupe.policy
// and a batch maker: n records of flat-like lines whose keys cycle over
// keys values, decoded into one reused arena.
func dedupeStage(tb testing.TB, backend string) Processor {
	dir, err := filepath.Abs("../bench/policies")
	if err != nil {
		tb.Fatal(err)
	}
	proc, err := NewStage(config.Filter{File: "dedupe.policy", Backend: backend}, dir)
	if err != nil {
		tb.Fatal(err)
	}
	return proc
}

type dedupeBatch struct {
	a     *record.Arena
	lines [][]byte
	recs  []*record.Record
	next  int
}

func newDedupeBatch(n, keys int) *dedupeBatch {
	b := &dedupeBatch{a: record.NewArena()}
	for i := range keys {
		b.lines = append(b.lines, fmt.Appendf(nil, `{"level":"info","msg":"request completed","user":"user-%d","status":200,"bytes":%d,"service":"cart"}`, i%5000, i))
	}
	b.recs = make([]*record.Record, 0, n)
	return b
}

// fill decodes the next n lines, cycling, into the reused arena.
func (b *dedupeBatch) fill(tb testing.TB, n int) []*record.Record {
	b.a.Reset()
	b.recs = b.recs[:0]
	for range n {
		rec, err := b.a.DecodeJSON(b.lines[b.next], record.Referenced)
		if err != nil {
			tb.Fatal(err)
		}
		b.recs = append(b.recs, rec)
		b.next = (b.next + 1) % len(b.lines)
	}
	return b.recs
}

// TestDedupeStageAllocs holds the policy stage running a dedupe to zero
// heap allocations a batch in steady state, the decoding into a reused
// arena included: over 100,000 keys (the table full, every record a
// repeat, dropped) and over 150,000 (every record a new key, kept, the
// least recently used evicted).
func TestDedupeStageAllocs(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector allocates, and sync.Pool drops what it holds")
	}
	dir := t.TempDir()
	// Keyed by bytes itself (each line's own), with a count to write.
	writeFile(t, dir, "d.policy", "policy \"d\"\ndedupe by .bytes within \"1h\" count .repeats\n")
	for _, keys := range []int{100_000, 150_000} {
		proc, err := NewStage(config.Filter{File: "d.policy"}, dir)
		if err != nil {
			t.Fatal(err)
		}
		b := newDedupeBatch(500, keys)
		run := func() { proc.Process(b.fill(t, 500)) }
		for range 2 * keys / 500 { // every key twice: the table reaches its size
			run()
		}
		if allocs := testing.AllocsPerRun(50, run); allocs != 0 {
			t.Errorf("%d keys: %.2f allocations per batch of 500 records, want 0", keys, allocs)
		}
		want := int64(500) // all repeats
		if keys > 100_000 {
			want = 0 // all evicted before they come again
		}
		if _, c := proc.Process(b.fill(t, 500)); c.Dropped != want {
			t.Errorf("%d keys: %d of 500 dropped, want %d", keys, c.Dropped, want)
		}
	}
}

// BenchmarkDedupeStage is the policy stage over batches of 500 records
// of 100,000 keys, against the no-op policy: bench/pipeline.sh's
// POLICIES="1 dedupe" measures the whole process.
func BenchmarkDedupeStage(b *testing.B) {
	noop, err := filepath.Abs("../conformance/policies")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		proc func(testing.TB) Processor
	}{
		{"dedupe", func(tb testing.TB) Processor { return dedupeStage(tb, "vm") }},
		{"noop", func(tb testing.TB) Processor {
			p, err := NewStage(config.Filter{File: "1-noop.policy"}, noop)
			if err != nil {
				tb.Fatal(err)
			}
			return p
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			proc := c.proc(b)
			batch := newDedupeBatch(500, 100_000)
			for range 200 {
				proc.Process(batch.fill(b, 500))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				proc.Process(batch.fill(b, 500))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*500), "ns/record")
		})
	}
}
