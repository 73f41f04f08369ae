package textenc

import (
	"encoding/base64"
	"net/url"
	"testing"
)

func TestDecodeBase64(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"aGk=", "hi", true},
		{"aGk", "hi", true},
		{"aA==", "h", true},
		{"aA", "h", true},
		{"aA=", "", false},
		{"a", "", false},
		{"aG k=", "", false},
		{"aGk=\n", "", false},
		{"-_8=", "", false},
		{"aGk=aGk=", "", false},
	} {
		got, ok := AppendDecodeBase64(nil, tc.in)
		if ok != tc.ok || ok && string(got) != tc.want {
			t.Errorf("decode_base64(%q) = %q, %v", tc.in, got, ok)
		}
	}
}

func TestURL(t *testing.T) {
	for _, s := range []string{"", "abc", "a b+c/é?&=#%", "\x00\xff~-._"} {
		enc := string(AppendURLEncode(nil, s))
		if len(enc) != URLEncodedLen(s) {
			t.Errorf("URLEncodedLen(%q) = %d, encoded %q", s, URLEncodedLen(s), enc)
		}
		if ref := url.PathEscape(s); len(s) > 0 && s[0] != '\x00' && ref != enc && url.QueryEscape(s) != enc {
			// net/url keeps some sub-delims; ours escapes them: just report
			// both for a reader.
			t.Logf("%q: ours %q, PathEscape %q", s, enc, ref)
		}
		back, ok := AppendURLDecode(nil, enc, false)
		if !ok || string(back) != s {
			t.Errorf("decode(encode(%q)) = %q, %v", s, back, ok)
		}
	}
	for _, bad := range []string{"%", "%4", "%zz", "a%g0"} {
		if _, ok := AppendURLDecode(nil, bad, false); ok {
			t.Errorf("decode_url(%q) succeeded", bad)
		}
	}
	if got, _ := AppendURLDecode(nil, "a+b%2B", true); string(got) != "a b+" {
		t.Errorf("form decoding: %q", got)
	}
	if got, _ := AppendURLDecode(nil, "a+b%2b", false); string(got) != "a+b+" {
		t.Errorf("plain decoding: %q", got)
	}
}

func FuzzBase64(f *testing.F) {
	for _, s := range []string{"", "hi", "\x00\xff", "aGk="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := string(AppendBase64(nil, s))
		if enc != base64.StdEncoding.EncodeToString([]byte(s)) {
			t.Fatal("encoding differs from encoding/base64")
		}
		back, ok := AppendDecodeBase64(nil, enc)
		if !ok || string(back) != s {
			t.Fatalf("round trip of %q: %q %v", s, back, ok)
		}
		AppendDecodeBase64(nil, s) // must not panic
	})
}

// TestEncodedLen: Base64Len and HexLen are the lengths the encoders write.
func TestEncodedLen(t *testing.T) {
	for n := 0; n < 10; n++ {
		s := string(make([]byte, n))
		if got, want := Base64Len(n), len(AppendBase64(nil, s)); got != want {
			t.Errorf("Base64Len(%d) = %d, want %d", n, got, want)
		}
		if got, want := HexLen(n), len(AppendHex(nil, s)); got != want {
			t.Errorf("HexLen(%d) = %d, want %d", n, got, want)
		}
	}
}
