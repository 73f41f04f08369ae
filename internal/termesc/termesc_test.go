package termesc

import (
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain é 😀 text", "plain é 😀 text"},
		{"tab\tkept", "tab\tkept"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"a\rb\nc\x00d\x7f", `a\x0db\x0ac\x00d\x7f`},
		{"c1 \u009b here", `c1 \x9b here`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{"valid \ufffd kept", "valid \ufffd kept"},
		{"bidi \u202eevil\u2066", `bidi \u{202e}evil\u{2066}`},
	}
	for _, tt := range tests {
		got := String(tt.in)
		if got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
		w := 0
		for i := 0; i < len(tt.in); {
			r, n := utf8.DecodeRuneInString(tt.in[i:])
			w += Width(r, n)
			i += n
		}
		if w != utf8.RuneCountInString(got) {
			t.Errorf("Width of %q sums to %d, the escaped text has %d runes", tt.in, w, utf8.RuneCountInString(got))
		}
	}
}
