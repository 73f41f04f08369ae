package backend

import (
	"fmt"
	"sync"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

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
