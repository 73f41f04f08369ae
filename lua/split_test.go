package lua

import (
	"testing"

	"github.com/policyrun/policyrun/record"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"
)

// TestSplitRunnerForgetsRest: a runner goes back to its pool holding no
// closure of the run before, whatever the split made of the record (the
// closure holds that run's locals, its record's values among them).
func TestSplitRunnerForgetsRest(t *testing.T) {
	r := splitRunner(t, "set .pre = 1\n")
	for _, line := range []string{`{"xs":null}`, `{"x":1}`, `{"xs":[]}`, `{"xs":"s"}`, `{"xs":[1,2]}`} {
		rec, err := record.NewArena().DecodeJSON([]byte(line), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.RunPieces(rec, nil, nil); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if r.rest != nil {
			t.Errorf("%s: the runner keeps the run's split closure", line)
		}
	}
}

// TestSplitRunnerError: a failure of the runner partway through a split
// leaves no record the split made behind: the one that failed and those
// after it are passed on as the split made them, kept with lua_error.
func TestSplitRunnerError(t *testing.T) {
	r := splitRunner(t, "")
	rec, err := record.NewArena().DecodeJSON([]byte(`{"xs":[1,2,3]}`), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := r.run(rec, r.fn, true); err != nil || res.Action != actSplit {
		t.Fatalf("run: %v, %v", res, err)
	}
	// The rest fails on its second record, as a bug of the runtime would.
	L := r.s.L
	if err := L.DoString(`local calls = 0
return function(rec, M) calls = calls + 1; if calls == 2 then error("boom") end; return 0 end`); err != nil {
		t.Fatal(err)
	}
	r.rest = L.Get(-1).(*glua.LFunction)
	L.Pop(1)
	recs, results, err := r.pieces(rec, nil, nil, 10)
	if err == nil || len(recs) != 3 || len(results) != 3 {
		t.Fatalf("%d records, %d results, err %v; want 3, 3 and the error", len(recs), len(results), err)
	}
	want := []string{"keep", "fault (lua_error)", "fault (lua_error)"}
	for i, res := range results {
		if res.String() != want[i] {
			t.Errorf("record %d: %s, want %s", i, res, want[i])
		}
		if got := string(recs[i].AppendJSON(nil)); got != `{"xs":`+string(rune('1'+i))+`}` {
			t.Errorf("record %d: %s", i, got)
		}
	}
}

// splitRunner is a runner of a policy that runs pre, then splits .xs and
// sets .y of each piece.
func splitRunner(t *testing.T, pre string) *Runner {
	t.Helper()
	_, p := compileFile(t, "split.policy", []byte("policy \"split\"\nschema {\n  xs: array<int>?\n  ...\n}\n"+pre+"split .xs\nset .y = .xs\n"))
	r, err := p.NewRunner()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
