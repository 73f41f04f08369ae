package record

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the record's map (edits included) as one line of JSON,
// without the newline, to dst.
//
// A record decoded from a JSON line and not changed since is written as the
// line itself, without its surrounding whitespace: the same value, spelled
// as its source spelled it (key spacing, escapes, number forms), at the
// cost of a copy. Lines whose decoding normalised something are re-encoded.
func (r *Record) AppendJSON(dst []byte) []byte {
	if r.passThrough() {
		return append(dst, r.a.raw(r.text)...)
	}
	return r.a.AppendJSON(dst, r.root)
}

// passThrough reports whether r's JSON line may be written for it. The
// nodes a decode made never change (edits copy them), so a root equal to
// the decoded one holds the decoded value, whatever Commit and Discard did
// in between.
func (r *Record) passThrough() bool {
	return r.text.kind == String && r.root == r.decoded
}

// AppendJSON appends v as JSON to dst. Floats always carry a '.' or an
// exponent so that they decode as floats again; NaN and infinities, which
// JSON cannot hold, are written as null; bytes are base64 strings;
// timestamps are RFC 3339 strings in UTC with nanoseconds; invalid UTF-8 in
// strings made by a policy is written as U+FFFD.
func (a *Arena) AppendJSON(dst []byte, v Value) []byte {
	switch v.kind {
	case Absent, Null:
		return append(dst, "null"...)
	case Bool:
		if v.u != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Int:
		return strconv.AppendInt(dst, int64(v.u), 10)
	case Float:
		return appendFloat(dst, v.Float())
	case String:
		return appendQuoted(dst, a.raw(v))
	case Bytes:
		raw := a.raw(v)
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, raw)
		return append(dst, '"')
	case Timestamp:
		dst = append(dst, '"')
		dst = time.Unix(0, int64(v.u)).UTC().AppendFormat(dst, time.RFC3339Nano)
		return append(dst, '"')
	case Array:
		dst = append(dst, '[')
		first, n := int(v.off()), int(v.n())
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = a.AppendJSON(dst, a.nodes[first+i])
		}
		return append(dst, ']')
	case Map:
		dst = append(dst, '{')
		first, n := int(v.off()), int(v.n())
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, a.raw(a.nodes[first+2*i]))
			dst = append(dst, ':')
			dst = a.AppendJSON(dst, a.nodes[first+2*i+1])
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}

func appendFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	fmt := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, fmt, -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

const hexDigits = "0123456789abcdef"

func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	i, start := 0, 0
	for i < len(s) {
		for i+8 <= len(s) {
			if m := special8(binary.LittleEndian.Uint64(s[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
