package conformance

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestStateDifferential runs random streams of records through policies
// of every stateful statement on every backend, each with a memory of its
// own and one clock that moves by random steps: every record must get the
// same result and come out the same on all of them. Keys mix strings,
// ints, floats equal to ints, bools, null and absent, so that the
// backends' hashing of each kind is held to one another.
func TestStateDifferential(t *testing.T) {
	policies := []string{
		`dedupe by .a, .b within "2s" count .n max_keys 7`,
		`rate_limit by .a to 3 per "1s" max_keys 5`,
		`sample by .a, .b keep 1 in 3`,
		`sample keep 1 in 4`,
		`if .b == true {
  dedupe by .a within "500ms"
}
rate_limit by .b to 2 per "700ms"
sample by .a keep 1 in 2`,
	}
	values := []string{`"x"`, `"y"`, `"z"`, `1`, `1.0`, `2`, `2.5`, `true`, `false`, `null`, ``}
	for pi, body := range policies {
		src := []byte("policy \"d\"\n" + body + "\n")
		f, info, diags := compiler.CheckFile("d.policy", src)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", body, diags)
		}
		for seed := range uint64(20) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			var progs []func(*record.Record) (spec.Result, error)
			for _, b := range backends {
				p, err := b.Load(f, info, spec.Options{Clock: clock})
				if err != nil {
					t.Fatal(err)
				}
				progs = append(progs, p.Run)
			}
			r := rand.New(rand.NewPCG(seed, uint64(pi)))
			a := record.NewArena()
			for i := range 300 {
				now = now.Add(time.Duration(r.IntN(300)) * time.Millisecond)
				line := "{"
				for j, k := range []string{"a", "b"} {
					if v := values[r.IntN(len(values))]; v != "" {
						if j > 0 && line != "{" {
							line += ","
						}
						line += fmt.Sprintf("%q:%s", k, v)
					}
				}
				line += "}"
				var first string
				for bi, run := range progs {
					a.Reset()
					rec, err := a.DecodeJSON([]byte(line), record.Owned)
					if err != nil {
						t.Fatal(err)
					}
					res, err := run(rec)
					if err != nil && !res.Faulted() {
						t.Fatal(err)
					}
					got := fmt.Sprintf("%v %s", res, rec.AppendJSON(nil))
					if bi == 0 {
						first = got
					} else if got != first {
						t.Fatalf("policy %d, seed %d, record %d %s: [%s] %s, [%s] %s", pi, seed, i, line, backends[0].Name, first, backends[bi].Name, got)
					}
				}
			}
		}
	}
}
