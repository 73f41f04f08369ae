package coll

import (
	"hash/maphash"
	"testing"

	"github.com/policyrun/policyrun/record"
)

// Equal is the language's ==, at every depth, and hash agrees with it:
// values that are equal hash alike, so unique over a long array (hashed)
// keeps what unique over a short one (compared pair by pair) keeps.
func TestEqualAndHash(t *testing.T) {
	cases := []struct {
		x, y string
		want bool
	}{
		{`1`, `1.0`, true},
		{`[1, 2]`, `[1.0, 2]`, true},
		{`{"a": {"b": [3]}, "c": 1}`, `{"c": 1.0, "a": {"b": [3.0]}}`, true},
		{`[1]`, `[1.5]`, false},
		{`{"a": 1}`, `{"a": "1"}`, false},
		{`[null]`, `[null]`, true},
		{`[1, 2]`, `[2, 1]`, false},
		{`{"a": 1}`, `{"a": 1, "b": 2}`, false},
		{`{"a": 1}`, `{"b": 1}`, false},
		{`"x"`, `"x"`, true},
		{`[]`, `{}`, false},
		{`[[0]]`, `[[-0.0]]`, true},
	}
	seed := maphash.MakeSeed()
	for _, c := range cases {
		a := record.NewArena()
		x, y := value(t, a, c.x), value(t, a, c.y)
		if got := Equal(a, x, y); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.x, c.y, got, c.want)
		}
		if got := Equal(a, y, x); got != c.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", c.y, c.x, got, c.want)
		}
		if c.want && hash(a, seed, x) != hash(a, seed, y) {
			t.Errorf("%s and %s are equal but hash apart", c.x, c.y)
		}
	}
}

func TestUniqueLongAndShortAgree(t *testing.T) {
	const elems = `[{"k": [1]}, {"k": [1.0]}, [2], [2.0], 3, 3.0, {"a": 1, "b": 2.0}, {"b": 2, "a": 1.0}`
	short := elems + `]`
	long := elems + `, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]`
	for _, c := range []struct{ in, want string }{
		{short, `[{"k":[1]},[2],3,{"a":1,"b":2.0}]`},
		{long, `[{"k":[1]},[2],3,{"a":1,"b":2.0},10,11,12,13,14,15,16,17,18,19,20]`},
	} {
		a := record.NewArena()
		var u Uniquer
		got := u.Unique(a, value(t, a, c.in))
		rec, err := a.DecodeJSON([]byte(`{}`), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Set(record.NewPath("u"), got); err != nil {
			t.Fatal(err)
		}
		if s := string(rec.AppendJSON(nil)); s != `{"u":`+c.want+`}` {
			t.Errorf("unique(%s) = %s, want %s", c.in, s, c.want)
		}
	}
}

// value decodes the JSON text of one value into a.
func value(t *testing.T, a *record.Arena, s string) record.Value {
	t.Helper()
	rec, err := a.DecodeJSON([]byte(`{"v": `+s+`}`), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := rec.Get(record.NewPath("v"))
	if !ok {
		t.Fatalf("no value in %s", s)
	}
	return v
}
