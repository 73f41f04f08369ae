package record

import "testing"

func TestPathEqual(t *testing.T) {
	tests := []struct {
		p, q Path
		want bool
	}{
		{nil, nil, true},
		{nil, Path{}, true}, // both the root
		{NewPath("a"), NewPath("a"), true},
		{NewPath("a", "b"), NewPath("a", "b"), true},
		{NewPath("a"), NewPath("b"), false},
		{NewPath("a"), NewPath("a", "b"), false},
		{NewPath("a", "b"), NewPath("a"), false},
		{NewPath("a", "b"), NewPath("b", "a"), false},
		{Path{}, NewPath("a"), false},
		{Path{KeyStep("k")}, Path{KeyStepBytes([]byte("k"))}, true},
		{Path{KeyStep("")}, Path{KeyStepBytes(nil)}, true},
		{Path{IndexStep(0)}, Path{IndexStep(0)}, true},
		{Path{IndexStep(0)}, Path{IndexStep(1)}, false},
		{Path{IndexStep(-1)}, Path{IndexStep(0)}, false},
		{Path{IndexStep(0)}, Path{KeyStep("0")}, false},
		{Path{KeyStep("a"), IndexStep(2)}, Path{KeyStep("a"), IndexStep(2)}, true},
	}
	for _, tt := range tests {
		if got := tt.p.Equal(tt.q); got != tt.want {
			t.Errorf("%s.Equal(%s) = %v, want %v", tt.p, tt.q, got, tt.want)
		}
		if got := tt.q.Equal(tt.p); got != tt.want {
			t.Errorf("%s.Equal(%s) = %v, want %v", tt.q, tt.p, got, tt.want)
		}
	}
}

// TestPathHints: a path with hints finds what one without finds, in
// records of other key orders and sizes than the one its hints came from.
func TestPathHints(t *testing.T) {
	lines := []string{
		`{"a":1,"bb":2,"cc":3,"level":"x"}`,
		`{"level":"y","cc":4,"bb":5}`, // the hint of .cc points at a key of its length
		`{"bb":6}`,                    // hints past the map's end
		`{"zz":7,"level":"z","n":{"cc":8}}`,
		`{"a":1,"bb":2,"cc":3,"level":"w"}`,
		`{"trace_id":1,"a_key_of_twenty_one_":2,"bb":3}`,
		`{"trace_ix":1,"a_key_of_twenty_one_":2,"bb":3}`, // same lengths, other bytes
		`{"x":1,"trace_id":2,"a_key_of_twenty_one_":3,"cc":4}`,
		`{"x":1,"cc":2}`, // a short key too near the line's end for a word's load
		`{"x":1,"cd":2}`,
	}
	paths := []Path{NewPath("cc"), NewPath("level"), NewPath("bb"), NewPath("n", "cc"), NewPath("missing"),
		NewPath("trace_id"), NewPath("a_key_of_twenty_one_")}
	hinted := make([]Path, len(paths))
	for i, p := range paths {
		hinted[i] = p.WithHints()
	}
	a := NewArena()
	for _, line := range lines {
		r, err := a.DecodeJSON([]byte(line), Referenced)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range paths {
			want, wok := r.Get(p)
			got, gok := r.Get(hinted[i])
			if wok != gok || string(a.AppendJSON(nil, got)) != string(a.AppendJSON(nil, want)) {
				t.Errorf("%s: Get(%v) with hints = %s, %v; without = %s, %v", line, p,
					a.AppendJSON(nil, got), gok, a.AppendJSON(nil, want), wok)
			}
			if got, _ := a.Get(r.Root(), hinted[i]); string(a.AppendJSON(nil, got)) != string(a.AppendJSON(nil, want)) {
				t.Errorf("%s: Arena.Get(%v) with hints = %s", line, p, a.AppendJSON(nil, got))
			}
		}
		// An edit through a hinted path changes what one without would.
		if err := r.Set(hinted[2], IntValue(9)); err != nil {
			t.Fatal(err)
		}
		if v, _ := r.Get(paths[2]); v.Int() != 9 {
			t.Errorf("%s: set through a hinted path: .bb is %s", line, a.AppendJSON(nil, v))
		}
	}
}
