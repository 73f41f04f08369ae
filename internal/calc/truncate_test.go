package calc

import "testing"

func TestTruncate(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int64
		want string
	}{
		{"hello", 3, "hel"},
		{"hello", 10, "hello"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"héllo", 2, "h"}, // é is 2 bytes at 1..2
		{"héllo", 3, "hé"},
		{"日本", 1, ""},
		{"日本", 2, ""},
		{"日本", 3, "日"},
		{"日本", 5, "日"},
		{"a😀b", 4, "a"},
		{"a😀b", 5, "a😀"},
		{"\xff\xfe\xfd", 2, "\xff\xfe"}, // not UTF-8: bytes
		{"a\xe6\x97", 2, "a\xe6"},       // a truncated character: bytes
	} {
		if got := Truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
