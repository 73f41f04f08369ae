package conformance

import (
	"sync"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

// TestStateConcurrent runs a policy with every stateful statement from
// several goroutines over one Store, as a pipeline stage's workers do
// (go test -race): each key is kept exactly once by dedupe, whatever the
// interleaving, and the counts add up on both backends.
func TestStateConcurrent(t *testing.T) {
	src := []byte(`policy "s"
dedupe by .k within "1h" count .n
rate_limit by .k to 1000 per "1h"
sample by .k keep 1 in 1
sample keep 1 in 1
`)
	f, info, diags := compiler.CheckFile("s.policy", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, b := range backends {
		store := state.NewStore()
		prog, err := b.Load(f, info, spec.Options{State: store})
		if err != nil {
			t.Fatal(err)
		}
		const keys, goroutines = 200, 4
		var mu sync.Mutex
		kept := map[string]int{}
		var wg sync.WaitGroup
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := record.NewArena()
				for i := range keys {
					a.Reset()
					rec, err := a.DecodeJSON([]byte(`{"k":"`+string(rune('a'+i%26))+string(rune('a'+i/26))+`"}`), record.Owned)
					if err != nil {
						t.Error(err)
						return
					}
					res, err := prog.Run(rec)
					if err != nil || res.Faulted() {
						t.Errorf("%v %v", res, err)
						return
					}
					if res.Kept() {
						mu.Lock()
						kept[string(rec.AppendJSON(nil))]++
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if len(kept) != keys {
			t.Errorf("[%s] %d keys kept, want %d", b.Name, len(kept), keys)
		}
		for k, n := range kept {
			if n != 1 {
				t.Errorf("[%s] %s kept %d times", b.Name, k, n)
			}
		}
		if st := store.Stats(); st.Keys != 2*keys {
			t.Errorf("[%s] the store holds %d keys, want %d", b.Name, st.Keys, 2*keys)
		}
	}
}
