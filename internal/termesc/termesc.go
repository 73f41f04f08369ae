// Package termesc escapes the characters of text bound for a terminal that
// the terminal would act on instead of showing: a policy's source line, or
// a message quoting it, must not move the cursor, change colours or turn
// text around (docs/language.md, "Diagnostics").
//
// A control character (U+0000–U+001F but tab, U+007F, U+0080–U+009F) is
// shown as \xHH, and so is a byte that is not UTF-8; a bidirectional-text
// control (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) as \u{HHHH}.
// Tabs are kept: the renderer lines carets up under them.
package termesc

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// String returns s with its control characters escaped.
func String(s string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if escaped(r, n) != "" {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if e := escaped(r, n); e != "" {
			if r == utf8.RuneError {
				e = hexByte(s[i])
			}
			b.WriteString(e)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Width is the number of characters the rune r, n bytes long in the
// source (utf8.DecodeRuneInString), takes once escaped.
func Width(r rune, n int) int {
	if e := escaped(r, n); e != "" {
		return len(e)
	}
	return 1
}

// escaped returns the escape of r (n bytes in the source), or "" when r
// is shown as it is.
func escaped(r rune, n int) string {
	switch {
	case r == '\t':
		return ""
	case r == utf8.RuneError && n == 1:
		return `\x??` // the byte's, same width
	case r < 0x20 || r == 0x7f || 0x80 <= r && r < 0xa0:
		return hexByte(byte(r))
	case r == 0x061c, r == 0x200e, r == 0x200f, 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return `\u{` + strconv.FormatInt(int64(r), 16) + `}`
	}
	return ""
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return `\x` + string([]byte{digits[c>>4], digits[c&15]})
}
