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
