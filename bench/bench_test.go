package bench

import "testing"

func TestStatOf(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want Stat
	}{
		{nil, Stat{}},
		{[]float64{3}, Stat{3, 3, 3, 1}},
		{[]float64{5, 1, 3}, Stat{3, 1, 5, 3}},
		{[]float64{4, 1, 3, 2}, Stat{2.5, 1, 4, 4}},
	} {
		if got := StatOf(c.in); got != c.want {
			t.Errorf("StatOf(%v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}
