package record

import (
	"math/bits"
	"testing"
)

// checkJournal fails when r's root journal, while on, does not describe
// its root: each decoded entry neither removed nor changed must stand, the
// very handles, at its place among the root's entries, and the root must
// hold at least the decoded entries that were not removed.
func checkJournal(t *testing.T, r *Record, where func() string) {
	t.Helper()
	if !r.jr.ok || r.root == r.decoded {
		return
	}
	a := r.a
	orig, cur := r.decoded, r.root
	on, cn := int(orig.n()), int(cur.n())
	if kept := on - bits.OnesCount64(r.jr.removed); kept > cn {
		t.Fatalf("%s: the journal keeps %d decoded entries, the root has %d", where(), kept, cn)
	}
	p := 0
	for i := 0; i < on; i++ {
		if r.jr.removed&(1<<i) != 0 {
			continue
		}
		if r.jr.changed&(1<<i) == 0 {
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
	r.jr.removed = 1<<1 | 1<<3 // b and d
	for _, tt := range []struct {
		pos, want int
		ok        bool
	}{{0, 0, true}, {1, 2, true}, {2, 4, true}, {3, 0, false}, {7, 0, false}} {
		got, ok := r.journalIndex(tt.pos)
		if got != tt.want || ok != tt.ok {
			t.Errorf("journalIndex(%d) = %d, %v; want %d, %v", tt.pos, got, ok, tt.want, tt.ok)
		}
	}
}
