// Package printf reads and writes the format strings of the format
// built-in: the one implementation behind the checker (which checks the
// verbs against the argument types), the VM and the Lua backend.
//
// A format is text with directives %[flags][width][.prec]verb, verb one of
// s d f v q x, and %% for a percent sign. The flags are - (pad on the
// right), 0 (pad with zeros: d f x), + and space (a sign for non-negative
// numbers: d f); width and precision are decimal, at most MaxWidth; the
// precision is for f alone (digits after the point, 6 by default). What a
// directive writes is what Go's fmt writes for the same directive and
// value, with the width counted in UTF-8 characters; %v writes to_string's
// text, which the caller gives.
package printf

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxWidth bounds widths and precisions.
const MaxWidth = 1000

// Verb is one directive of a format.
type Verb struct {
	Start, End int  // the directive's bytes in the format
	Verb       byte // s d f v q x, or % for %%
	Minus      bool // -: pad on the right
	Zero       bool // 0: pad with zeros after the sign
	Plus       bool // +: a + before non-negative numbers
	Space      bool // space: a space before non-negative numbers
	Width      int  // -1 when none
	Prec       int  // -1 when none
}

// Error is a mistake in a format, at the bytes [Start, End) of it.
type Error struct {
	Start, End int
	Msg        string
}

func (e *Error) Error() string { return e.Msg }

// Next scans format from offset i: lit is the text up to the next
// directive (with %% left in as a directive of its own), v that
// directive and next the offset after it. At the end of the format v.Verb
// is 0. A malformed directive is an error; formats are checked before they
// run, so backends may ignore it.
func Next(format string, i int) (lit string, v Verb, next int, err *Error) {
	j := i
	for j < len(format) && format[j] != '%' {
		j++
	}
	lit = format[i:j]
	if j == len(format) {
		return lit, Verb{}, j, nil
	}
	v = Verb{Start: j, Width: -1, Prec: -1}
	k := j + 1
flags:
	for ; k < len(format); k++ {
		switch format[k] {
		case '-':
			v.Minus = true
		case '0':
			v.Zero = true
		case '+':
			v.Plus = true
		case ' ':
			v.Space = true
		default:
			break flags
		}
	}
	num := func() int {
		n := 0
		for k < len(format) && '0' <= format[k] && format[k] <= '9' {
			if n <= MaxWidth {
				n = n*10 + int(format[k]-'0')
			}
			k++
		}
		return n
	}
	if k < len(format) && '1' <= format[k] && format[k] <= '9' {
		v.Width = num()
	}
	if k < len(format) && format[k] == '.' {
		k++
		v.Prec = num()
	}
	if k == len(format) {
		return lit, v, k, &Error{j, k, "the format ends inside a directive"}
	}
	c := format[k]
	k++
	v.End = k
	bad := func(format string, args ...any) (string, Verb, int, *Error) {
		return lit, v, k, &Error{j, k, fmt.Sprintf(format, args...)}
	}
	switch c {
	case 's', 'd', 'f', 'v', 'q', 'x':
	case '%':
		if k-j > 2 {
			return bad("%%%% takes no flags, width or precision")
		}
	default:
		r, _ := utf8.DecodeRuneInString(format[k-1:])
		return bad("%%%c is not a verb: the verbs are %%s %%d %%f %%v %%q %%x, and %%%% writes a %%", r)
	}
	v.Verb = c
	switch {
	case v.Width > MaxWidth || v.Prec > MaxWidth:
		return bad("width and precision are at most %d", MaxWidth)
	case v.Prec >= 0 && c != 'f':
		return bad("a precision applies to %%f only")
	case v.Zero && c != 'd' && c != 'f' && c != 'x':
		return bad("the 0 flag applies to %%d, %%f and %%x only")
	case (v.Plus || v.Space) && c != 'd' && c != 'f':
		return bad("the + and space flags apply to %%d and %%f only")
	}
	return lit, v, k, nil
}

// Append appends format written out to dst, arg appending the n-th
// argument (from 0) as verb v writes it. It stops when dst is longer
// than max bytes, returning false: the format built-in's string limit,
// kept while the text grows.
func Append(dst []byte, format string, max int, arg func(dst []byte, v Verb, n int) []byte) ([]byte, bool) {
	n := 0
	for i := 0; i < len(format); {
		lit, v, next, _ := Next(format, i)
		dst = append(dst, lit...)
		i = next
		switch v.Verb {
		case 0:
		case '%':
			dst = append(dst, '%')
		default:
			dst = arg(dst, v, n)
			n++
		}
		if len(dst) > max {
			return dst, false
		}
	}
	return dst, true
}

// Verbs returns the directives of format other than %%, or the first
// mistake in it.
func Verbs(format string) ([]Verb, *Error) {
	var out []Verb
	for i := 0; i < len(format); {
		_, v, next, err := Next(format, i)
		if err != nil {
			return nil, err
		}
		if v.Verb != 0 && v.Verb != '%' {
			out = append(out, v)
		}
		i = next
	}
	return out, nil
}

// AppendInt appends x written by %d (or, with v.Verb 'x', in hex).
func AppendInt(dst []byte, v *Verb, x int64) []byte {
	var b [24]byte
	base := 10
	if v.Verb == 'x' {
		base = 16
	}
	digits := strconv.AppendInt(b[:0], x, base)
	return appendNumber(dst, v, digits)
}

// AppendFloat appends x written by %f.
func AppendFloat(dst []byte, v *Verb, x float64) []byte {
	prec := v.Prec
	if prec < 0 {
		prec = 6
	}
	var b [64]byte
	return appendNumber(dst, v, strconv.AppendFloat(b[:0], x, 'f', prec, 64))
}

// appendNumber appends the digits of a number (with its - sign, if any)
// with the sign flags and the padding of v.
func appendNumber(dst []byte, v *Verb, digits []byte) []byte {
	sign := byte(0)
	if len(digits) > 0 && digits[0] == '-' {
		sign, digits = '-', digits[1:]
	} else if v.Plus {
		sign = '+'
	} else if v.Space {
		sign = ' '
	}
	n := len(digits)
	if sign != 0 {
		n++
	}
	pad := v.Width - n
	dst = append(padBefore(dst, v, pad, v.Zero, sign), digits...)
	return padAfter(dst, v, pad)
}

// AppendString appends s written by %s (or %v, s being the value's text).
func AppendString(dst []byte, v *Verb, s string) []byte {
	pad := v.Width - utf8.RuneCountInString(s)
	dst = append(padBefore(dst, v, pad, false, 0), s...)
	return padAfter(dst, v, pad)
}

// padBefore appends what comes before a text that is pad characters
// short of v's width: spaces, then the sign (unless 0), then with zeros
// zeros instead; nothing but the sign with the - flag (padAfter pads).
func padBefore(dst []byte, v *Verb, pad int, zeros bool, sign byte) []byte {
	if pad > 0 && !v.Minus && !zeros {
		dst = appendPad(dst, ' ', pad)
	}
	if sign != 0 {
		dst = append(dst, sign)
	}
	if pad > 0 && !v.Minus && zeros {
		dst = appendPad(dst, '0', pad)
	}
	return dst
}

// padAfter appends the spaces after such a text with the - flag.
func padAfter(dst []byte, v *Verb, pad int) []byte {
	if pad > 0 && v.Minus {
		dst = appendPad(dst, ' ', pad)
	}
	return dst
}

// AppendQuote appends s written by %q: a Go string literal, as
// strconv.Quote writes it.
func AppendQuote(dst []byte, v *Verb, s string) []byte {
	if v.Width <= 0 {
		return strconv.AppendQuote(dst, s)
	}
	start := len(dst)
	dst = strconv.AppendQuote(dst, s)
	return Pad(dst, v, start)
}

// AppendHex appends the bytes of s in lower-case hex, as %x does.
func AppendHex(dst []byte, v *Verb, s string) []byte {
	const hex = "0123456789abcdef"
	pad := v.Width - 2*len(s)
	dst = padBefore(dst, v, pad, v.Zero, 0)
	for i := 0; i < len(s); i++ {
		dst = append(dst, hex[s[i]>>4], hex[s[i]&15])
	}
	return padAfter(dst, v, pad)
}

// Pad pads the text dst[start:], just written, to v's width, counted in
// UTF-8 characters (%v writes its text, then pads it).
func Pad(dst []byte, v *Verb, start int) []byte {
	pad := v.Width - utf8.RuneCount(dst[start:])
	if pad <= 0 {
		return dst
	}
	if v.Minus {
		return appendPad(dst, ' ', pad)
	}
	n := len(dst)
	dst = appendPad(dst, ' ', pad)
	copy(dst[start+pad:], dst[start:n])
	for i := start; i < start+pad; i++ {
		dst[i] = ' '
	}
	return dst
}

func appendPad(dst []byte, c byte, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, c)
	}
	return dst
}
