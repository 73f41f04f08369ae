package digest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"strings"
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

func TestMoreDigests(t *testing.T) {
	var h32 [32]byte
	MD5Hex(&h32, nil)
	if got := string(h32[:]); got != "d41d8cd98f00b204e9800998ecf8427e" {
		t.Errorf("md5 = %s", got)
	}
	var h40 [40]byte
	SHA1Hex(&h40, []byte("abc"))
	if got := string(h40[:]); got != "a9993e364706816aba3e25717850c26c9cd0d89d" {
		t.Errorf("sha1 = %s", got)
	}
	var h128 [128]byte
	SHA512Hex(&h128, []byte("abc"))
	if got := string(h128[:]); got != "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f" {
		t.Errorf("sha512 = %s", got)
	}
}

// TestHMACSHA256 checks test cases 2, 3 and 6 of RFC 4231 (a key longer
// than the block is hashed first) against crypto/hmac too.
func TestHMACSHA256(t *testing.T) {
	long := strings.Repeat("\xaa", 131)
	for _, tc := range []struct{ key, s, want string }{
		{"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
		{strings.Repeat("\xaa", 20), strings.Repeat("\xdd", 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
		{long, "Test Using Larger Than Block-Size Key - Hash Key First", "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
		{"", "", ""},
	} {
		var h [64]byte
		HMACSHA256Hex(&h, tc.s, tc.key, nil)
		m := hmac.New(sha256.New, []byte(tc.key))
		m.Write([]byte(tc.s))
		ref := hex.EncodeToString(m.Sum(nil))
		if got := string(h[:]); got != ref || tc.want != "" && got != tc.want {
			t.Errorf("HMAC(%q, %q) = %s, want %s (crypto/hmac %s)", tc.key, tc.s, got, tc.want, ref)
		}
	}
	var h [64]byte
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(10, func() { buf = HMACSHA256Hex(&h, "message", "key", buf) }); n != 0 {
		t.Errorf("%.1f allocs", n)
	}
}

func TestXXHash64(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"abc", 0x44bc2cf5ad770999},
	} {
		if got := XXHash64(tc.s); got != int64(tc.want>>11) {
			t.Errorf("XXHash64(%q) = %d, want %d", tc.s, got, tc.want>>11)
		}
	}
}
