package backend

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
	"github.com/policyrun/policyrun/vm"
)

// TestBatchClock holds every backend to one time a batch: a clock that
// moves a second at each reading is read once for a batch of records,
// all of which see that time (now(), and dedupe's window of a second,
// which then drops the repeats), and once for each record run on its own.
func TestBatchClock(t *testing.T) {
	src := []byte(`policy "p"
schema {
  n: int
  ...
}
dedupe by .n within "1s"
set .t = now()
`)
	f, info, diags := compiler.CheckFile("p.policy", src)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	const batchOut = `{"n":1,"t":"2026-03-01T00:00:00Z"} dropped dropped`
	tests := []struct {
		name  string
		run   func(p Program, recs []*record.Record) []Piece
		reads int
		out   string
	}{
		{"RunAllIn", func(p Program, recs []*record.Record) []Piece {
			var b spec.Batch
			var out []Piece
			for _, r := range recs {
				out, _ = RunAllIn(&b, p, r, out)
			}
			return out
		}, 1, batchOut},
		{"RunBatch", func(p Program, recs []*record.Record) []Piece {
			bp, ok := p.(BatchProgram)
			if !ok {
				return nil
			}
			results := make([]spec.Result, len(recs))
			bp.RunBatch(recs, results)
			var out []Piece
			for i, r := range recs {
				out = append(out, Piece{Rec: r, Result: results[i]})
			}
			return out
		}, 1, batchOut},
		{"RunAll", func(p Program, recs []*record.Record) []Piece {
			var out []Piece
			for _, r := range recs {
				out, _ = RunAll(p, r, out)
			}
			return out
		}, 3, `{"n":1,"t":"2026-03-01T00:00:00Z"} {"n":1,"t":"2026-03-01T00:00:01Z"} {"n":1,"t":"2026-03-01T00:00:02Z"}`},
		{"SetBatch", func(p Program, recs []*record.Record) []Piece {
			// A Machine given a batch: its RunBatch is part of it, and
			// so is a run after it.
			v, ok := p.(VM)
			if !ok {
				return nil
			}
			var b spec.Batch
			m := vm.NewMachine(v.Program)
			m.SetBatch(&b)
			results := make([]spec.Result, len(recs))
			m.RunBatch(recs[:2], results)
			results[2] = m.Run(recs[2])
			var out []Piece
			for i, r := range recs {
				out = append(out, Piece{Rec: r, Result: results[i]})
			}
			return out
		}, 1, batchOut},
	}
	for _, b := range All() {
		for _, tt := range tests {
			reads := 0
			clock := func() time.Time {
				reads++
				return start.Add(time.Duration(reads-1) * time.Second)
			}
			p, err := b.Load(f, info, spec.Options{Clock: clock})
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			a := record.NewArena()
			var recs []*record.Record
			for range 3 {
				r, err := a.DecodeJSON([]byte(`{"n":1}`), record.Referenced)
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
			pieces := tt.run(p, recs)
			if pieces == nil {
				continue // not a BatchProgram
			}
			got := ""
			for i, pc := range pieces {
				if i > 0 {
					got += " "
				}
				if pc.Result.Kept() {
					got += string(pc.Rec.AppendJSON(nil))
				} else {
					got += "dropped"
				}
			}
			if got != tt.out || reads != tt.reads {
				t.Errorf("%s %s: %s with %d readings of the clock, want %s with %d", b.Name, tt.name, got, reads, tt.out, tt.reads)
			}
		}
	}
}

// TestBatchesShareState runs one policy's batches from several
// goroutines at once (go test -race), on the VM, which holds its tables
// for a batch, and record by record beside them: two statements, the
// second reached by some records alone, so that holders take the tables
// in one order or deadlock. Each key is kept once in all.
func TestBatchesShareState(t *testing.T) {
	src := []byte(`policy "p"
schema {
  n: int
  ...
}
if .n % 3 == 0 {
  rate_limit by .n to 1000 per "1h"
}
dedupe by .n within "1h"
`)
	f, info, diags := compiler.CheckFile("p.policy", src)
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	for _, b := range All() {
		p, err := b.Load(f, info, spec.Options{State: state.NewStore()})
		if err != nil {
			t.Fatal(err)
		}
		const workers, batches, size, keys = 4, 40, 50, 300
		var mu sync.Mutex
		kept := 0
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := record.NewArena()
				n := 0
				for i := range batches {
					a.Reset()
					recs := make([]*record.Record, size)
					for j := range recs {
						r, err := a.DecodeJSON(fmt.Appendf(nil, `{"n":%d}`, (w*7+i*size+j)%keys), record.Referenced)
						if err != nil {
							t.Error(err)
							return
						}
						recs[j] = r
					}
					results := make([]spec.Result, size)
					if bp, ok := p.(BatchProgram); ok && w%2 == 0 {
						bp.RunBatch(recs, results)
					} else {
						for j, r := range recs {
							results[j], _ = p.Run(r)
						}
					}
					for _, r := range results {
						if r.Kept() {
							n++
						}
					}
				}
				mu.Lock()
				kept += n
				mu.Unlock()
			}()
		}
		wg.Wait()
		if kept != keys {
			t.Errorf("%s: %d records kept, want one a key, %d", b.Name, kept, keys)
		}
	}
}
