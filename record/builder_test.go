package record

import "testing"

// StartWith takes a string that ends the slab in place, and copies any
// other; either way the string it started from reads as it did.
func TestStringBuilderStartWith(t *testing.T) {
	a := NewArena()
	rec, err := a.DecodeJSON([]byte(`{"in":"input"}`), Referenced)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := rec.Get(NewPath("in"))
	b := a.StringBuilder()
	grow := func(s, tail string) string {
		b.StartWith(s)
		b.WriteString(tail)
		return a.Str(b.End())
	}
	cases := []struct {
		name   string
		from   func() string
		inSlab bool // the result takes from's bytes in place
	}{
		{"the slab's last string", func() string { return a.Str(a.NewStringFrom("last")) }, true},
		{"a string before another", func() string {
			s := a.Str(a.NewStringFrom("first"))
			a.NewStringFrom("then")
			return s
		}, false},
		{"a string of the input", func() string { return a.Str(in) }, false},
		{"the empty string", func() string { return "" }, false},
		{"a Go string", func() string { return "go" }, false},
	}
	for _, c := range cases {
		from := c.from()
		before := len(a.slab)
		got := grow(from, "+x")
		if got != from+"+x" {
			t.Errorf("%s: got %q, want %q", c.name, got, from+"+x")
		}
		added := len(a.slab) - before
		if c.inSlab && added != 2 || !c.inSlab && added != len(from)+2 {
			t.Errorf("%s: the slab grew by %d bytes", c.name, added)
		}
		if c.inSlab && from != got[:len(from)] {
			t.Errorf("%s: the string started from changed: %q", c.name, from)
		}
	}
	// Grown step by step, a string costs its length.
	s := a.Str(a.NewStringFrom("a"))
	before := len(a.slab) - 1
	for range 100 {
		s = grow(s, "b")
	}
	if len(s) != 101 || len(a.slab)-before != 101 {
		t.Errorf("100 steps: %d bytes, the slab %d", len(s), len(a.slab)-before)
	}
}
