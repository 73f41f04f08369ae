package record

import (
	"bytes"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkJournal fails when r's root journal, while on, does not describe
// its root: each decoded entry neither removed nor changed must stand, the
// very handles, at its place among the root's entries, and the root must
// hold at least the decoded entries that were not removed.
func checkJournal(t *testing.T, r *Record, where func() string) {
	t.Helper()
	if r.ext == 0 || !r.ts().jr.ok || r.root == r.decoded {
		return
	}
	jr := r.ts().jr
	a := r.a
	orig, cur := r.decoded, r.root
	on, cn := int(orig.n()), int(cur.n())
	if kept := on - bits.OnesCount64(jr.removed); kept > cn {
		t.Fatalf("%s: the journal keeps %d decoded entries, the root has %d", where(), kept, cn)
	}
	p := 0
	for i := 0; i < on; i++ {
		if jr.removed&(1<<i) != 0 {
			continue
		}
		if jr.changed&(1<<i) == 0 {
			ck, cv := a.nodes[int(cur.off())+2*p], a.nodes[int(cur.off())+2*p+1]
			ok, ov := a.nodes[int(orig.off())+2*i], a.nodes[int(orig.off())+2*i+1]
			if ck != ok || cv != ov {
				t.Fatalf("%s: decoded entry %d (%s) is unchanged in the journal, but the root's entry %d is %s", where(), i, a.Str(ok), p, a.Str(ck))
			}
		}
		p++
	}
}

// TestJournalIndex: the root's entries map to the decoded entries they
// stand for, past the removed ones.
func TestJournalIndex(t *testing.T) {
	a := NewArena()
	r, err := a.DecodeJSON([]byte(`{"a":1,"b":2,"c":3,"d":4,"e":5}`), Referenced)
	if err != nil {
		t.Fatal(err)
	}
	jr := &r.ts().jr
	jr.removed = 1<<1 | 1<<3 // b and d
	for _, tt := range []struct {
		pos, want int
		ok        bool
	}{{0, 0, true}, {1, 2, true}, {2, 4, true}, {3, 0, false}, {7, 0, false}} {
		got, ok := r.journalIndex(jr, tt.pos)
		if got != tt.want || ok != tt.ok {
			t.Errorf("journalIndex(%d) = %d, %v; want %d, %v", tt.pos, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzSplicedJSON: any line the decoder takes, edited by the steps the
// fuzzer picks, writes the value a full encode
// would, with its key order, and its root journal, while on, describes
// its root (its seed corpus runs as a test).
func FuzzSplicedJSON(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for i := 0; i < 24; i++ {
		sb.Reset()
		randomJSON(rng, &sb, 3, true)
		f.Add([]byte(sb.String()), uint64(i))
	}
	f.Add([]byte(b2JSON), uint64(99))
	f.Fuzz(func(t *testing.T, line []byte, seed uint64) {
		a := NewArena()
		a.Limits.MaxDepth = 32
		r, err := a.DecodeJSON(line, Referenced)
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 5))
		var log []string
		for step := 0; step < 6; step++ {
			log = append(log, randomEdit(rng, a, r, []string{"a", "b", "level", "msg", "x"}))
			where := func() string { return fmt.Sprintf("%q, %s", line, strings.Join(log, "; ")) }
			checkJournal(t, r, where)
			got, full := r.AppendJSON(nil), a.AppendJSON(nil, r.Root())
			if bytes.ContainsAny(got, "\r\n") {
				t.Fatalf("%s: output %q holds a line break", where(), got)
			}
			if g, w := canonJSON(t, got), canonJSON(t, full); g != w {
				t.Fatalf("%s:\nspliced %s\n  canon %s\n   full %s", where(), got, g, w)
			}
		}
	})
}

// TestHintedEdits: the records of one arena edited by the same hinted
// steps, as a VM edits a batch — the later records find their keys where
// the first had them and add the key copy the first made — write what
// each record's edits say, whatever its line's key order.
func TestHintedEdits(t *testing.T) {
	steps := map[string]Path{}
	step := func(k string) Path {
		if _, ok := steps[k]; !ok {
			steps[k] = Path{KeyStep(k)}.WithHints()
		}
		return steps[k]
	}
	tests := []struct{ line, want string }{
		{`{"time":"t1","level":"info","msg":"a \"b\"","user":"u","trace_id":"x"}`,
			`{"time":"t1","level":"info","user":"u","env":"prod","pipeline":"b1","message":"a \"b\"","slow":true}`},
		{`{"time":"t2","level":"warn","msg":"plain","user":"v","trace_id":"y"}`,
			`{"time":"t2","level":"warn","user":"v","env":"prod","pipeline":"b1","message":"plain","slow":true}`},
		{`{"env":"staging","msg":"m","trace_id":"z","level":"x"}`,
			`{"env":"staging","level":"x","pipeline":"b1","message":"m","slow":true}`},
		{`{"trace_id":"z"}`,
			`{"env":"prod","pipeline":"b1","slow":true}`},
		{`{"time":"t3", "msg" : "spaced" ,"trace_id":"w","level":"info"}`,
			`{"time":"t3","level":"info","env":"prod","pipeline":"b1","message":"spaced","slow":true}`},
		{`{"pipeline":"old","msg":"n","level":"debug","trace_id":"q","time":"t4"}`,
			`{"pipeline":"b1","level":"debug","time":"t4","env":"prod","message":"n","slow":true}`},
	}
	a := NewArena()
	for round := range 2 {
		for _, tt := range tests {
			r, err := a.DecodeJSON([]byte(tt.line), Referenced)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.SetIfAbsent(step("env"), a.NewStringFrom("prod")); err != nil {
				t.Fatal(err)
			}
			if err := r.Set(step("pipeline"), a.NewStringFrom("b1")); err != nil {
				t.Fatal(err)
			}
			r.Remove(step("trace_id"))
			if from, to := step("msg"), step("message"); !r.MoveTop(&from[0], &to[0]) {
				if round > 0 && len(tt.line) > 20 {
					t.Errorf("round %d, %s: MoveTop did not move", round, tt.line)
				}
				if v, ok := r.Take(from); ok {
					if err := r.Set(to, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := r.Set(step("slow"), BoolValue(true)); err != nil {
				t.Fatal(err)
			}
			if got := string(r.AppendJSON(nil)); got != tt.want {
				t.Errorf("round %d, %s:\n got %s\nwant %s", round, tt.line, got, tt.want)
			}
			if full := canonJSON(t, a.AppendJSON(nil, r.Root())); full != canonJSON(t, []byte(tt.want)) {
				t.Errorf("round %d, %s: the full encode gives %s", round, tt.line, full)
			}
		}
	}
}
