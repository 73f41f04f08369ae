package conformance

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

// TestConcurrentCorpus shares one vm.Program and one lua.Program per
// corpus file between goroutines, each with its own Machine or Runner,
// over the test inputs of the whole corpus (regexes, in sets, faults and
// their counters, for loops, builders): every goroutine must see what a
// sequential run sees, and go test -race watches for shared state.
func TestConcurrentCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, fn := range corpus(t) {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		f, info, diags := compiler.CheckFile(fn, src)
		if diags.HasErrors() {
			continue // TestCorpus reports it
		}
		if len(info.StateOrder) > 0 {
			// Runs of dedupe, rate_limit and sample share their memory
			// by design: what one keeps another drops. TestStateConcurrent
			// holds their tables to -race.
			continue
		}
		for _, b := range backends {
			prog, err := b.Load(f, info, spec.Options{Clock: spec.FixedClock(now), Random: spec.SeededRandom(policytest.TestSeed)})
			if err != nil {
				t.Fatalf("%s: [%s] %v", fn, b.Name, err)
			}
			run := func() string {
				return runInputs(t, f, func(rec *record.Record) string {
					res, err := prog.Run(rec)
					return fmt.Sprint(res, err)
				})
			}
			want := run()
			concurrently(t, 4, func(int) string {
				if got := run(); got != want {
					return fmt.Sprintf("%s: a concurrent run differs:\n%s\nsequential:\n%s", fn, got, want)
				}
				return ""
			})
		}
	}
}

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
	f, info := checkPolicy(t, "s.policy", src)
	for _, b := range backends {
		store := state.NewStore()
		prog, err := b.Load(f, info, spec.Options{State: store})
		if err != nil {
			t.Fatal(err)
		}
		const keys, goroutines = 200, 4
		var mu sync.Mutex
		kept := map[string]int{}
		concurrently(t, goroutines, func(int) string {
			a := record.NewArena()
			for i := range keys {
				a.Reset()
				rec, err := a.DecodeJSON([]byte(`{"k":"`+string(rune('a'+i%26))+string(rune('a'+i/26))+`"}`), record.Owned)
				if err != nil {
					return err.Error()
				}
				res, err := prog.Run(rec)
				if err != nil || res.Faulted() {
					return fmt.Sprintf("%v %v", res, err)
				}
				if res.Kept() {
					mu.Lock()
					kept[string(rec.AppendJSON(nil))]++
					mu.Unlock()
				}
			}
			return ""
		})
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

// concurrently runs f on n goroutines at once, numbered from 0, and
// reports what each returns, unless "", as an error of t.
func concurrently(t *testing.T, n int, f func(g int) string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if e := f(g); e != "" {
				errs <- e
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// runInputs runs every test input of f and describes the outcomes and the
// records, one line each.
func runInputs(t *testing.T, f *policy.File, run func(*record.Record) string) string {
	var b strings.Builder
	a := record.NewArena()
	for _, tc := range f.Tests {
		rec, err := policytest.NewInput(f, tc, a)
		if err != nil {
			t.Error(err)
			return ""
		}
		fmt.Fprintf(&b, "%s: %s %s\n", tc.Name, run(rec), rec.AppendJSON(nil))
	}
	return b.String()
}
