package hash64

import (
	"hash/fnv"
	"testing"
)

func TestSum(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int64
	}{
		{"", 7175771991868484},       // the FNV-1a offset basis >> 11
		{"a", 6170989844021309},      // 0xaf63dc4c8601ec8c >> 11
		{"foobar", 4699897588541228}, // 0x85944171f73967e8 >> 11
		{"trace-0001", 3378268704629124},
		{"日本", 637372185500281},
		{"\x00\xff", 288317412646213},
	} {
		got := Sum(tc.s)
		if got != tc.want {
			t.Errorf("Sum(%q) = %d, want %d", tc.s, got, tc.want)
		}
		h := fnv.New64a()
		h.Write([]byte(tc.s))
		if ref := int64(h.Sum64() >> 11); got != ref {
			t.Errorf("Sum(%q) = %d, hash/fnv gives %d", tc.s, got, ref)
		}
		if got < 0 || got >= 1<<53 {
			t.Errorf("Sum(%q) = %d, not in [0, 2^53)", tc.s, got)
		}
	}
}
