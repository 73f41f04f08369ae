package lua

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Quoting: Go values written as Lua literals.

// quote writes s as a Lua string literal, escaping every byte outside
// printable ASCII.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "\\%03d", c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// number writes a Lua numeral for f (finite).
func number(f float64) string {
	if f == 0 && math.Signbit(f) {
		return "(-0.0)"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if f < 0 {
		return "(" + s + ")"
	}
	return s
}
