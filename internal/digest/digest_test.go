package digest

import (
	"hash/fnv"
	"testing"
)

func TestHash64(t *testing.T) {
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
		got := Hash64(tc.s)
		if got != tc.want {
			t.Errorf("Hash64(%q) = %d, want %d", tc.s, got, tc.want)
		}
		h := fnv.New64a()
		h.Write([]byte(tc.s))
		if ref := int64(h.Sum64() >> 11); got != ref {
			t.Errorf("Hash64(%q) = %d, hash/fnv gives %d", tc.s, got, ref)
		}
		if got < 0 || got >= 1<<53 {
			t.Errorf("Hash64(%q) = %d, not in [0, 2^53)", tc.s, got)
		}
	}
}

func TestSHA256Hex(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	} {
		var h [64]byte
		SHA256Hex(&h, []byte(tc.s))
		if string(h[:]) != tc.want {
			t.Errorf("SHA256Hex(%q) = %s, want %s", tc.s, h[:], tc.want)
		}
	}
}
