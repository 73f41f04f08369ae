package indextable

import (
	"hash/maphash"
	"slices"
	"testing"
)

// firsts keeps the first of equal items, as record's dedup and coll's
// unique do, with the hash hash.
func firsts(t *Table, items []string, hash func(string) uint64) []string {
	var kept []string
	t.Reset(len(items))
	for _, s := range items {
		for slot, j := t.Probe(hash(s)); ; slot, j = t.Next(slot) {
			if j < 0 {
				t.Put(slot, len(kept))
				kept = append(kept, s)
				break
			}
			if kept[j] == s {
				break
			}
		}
	}
	return kept
}

func TestFirsts(t *testing.T) {
	var tab Table
	seed := tab.Seed()
	hashes := map[string]func(string) uint64{
		"maphash": func(s string) uint64 { return maphash.String(seed, s) },
		// Every item in one slot's run, which wraps past the last slot.
		"colliding": func(string) uint64 { return 63 },
	}
	tests := []struct{ in, want []string }{
		{nil, nil},
		{[]string{"a"}, []string{"a"}},
		{[]string{"a", "b", "a", "c", "b", "a"}, []string{"a", "b", "c"}},
		{slices.Repeat([]string{"x", "y", "z"}, 50), []string{"x", "y", "z"}},
	}
	// More items than the first size holds: the table grows.
	var many []string
	for i := range 200 {
		many = append(many, string(rune('A'+i)))
	}
	tests = append(tests, struct{ in, want []string }{append(many, many...), many})
	for name, h := range hashes {
		for _, tt := range tests {
			if got := firsts(&tab, tt.in, h); !slices.Equal(got, tt.want) {
				t.Errorf("%s: %q: got %q, want %q", name, tt.in, got, tt.want)
			}
		}
	}
	if tab.Seed() != seed {
		t.Error("the seed changed")
	}
}
