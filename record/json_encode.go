package record

import (
	"encoding/base64"
	"encoding/binary"
	"math"
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
// An edited record decoded from a JSON line copies the parts of the line
// its edits left unchanged and encodes the rest (json_splice.go).
func (r *Record) AppendJSON(dst []byte) []byte {
	if r.passThrough() {
		return append(dst, r.a.raw(r.src)...)
	}
	if r.layout == layoutOTLP {
		return r.appendOTLPJSON(dst)
	}
	if lo, hi := r.decodedNodes(); hi > lo && r.text().kind() == String {
		return r.appendSpliced(dst)
	}
	return r.a.AppendJSON(dst, r.root)
}

// passThrough reports whether r's JSON line may be written for it. The
// nodes a decode made never change (edits copy them), so a root equal to
// the decoded one holds the decoded value, whatever Commit and Discard did
// in between.
func (r *Record) passThrough() bool {
	return r.text().kind() == String && r.root == r.decoded
}

// AppendJSON appends v as JSON to dst. Floats always carry a '.' or an
// exponent so that they decode as floats again; NaN and infinities, which
// JSON cannot hold, are written as null; bytes are base64 strings;
// timestamps are RFC 3339 strings in UTC with nanoseconds; invalid UTF-8 in
// strings made by a policy is written as U+FFFD.
func (a *Arena) AppendJSON(dst []byte, v Value) []byte {
	switch v.kind() {
	case String:
		return a.appendString(dst, v)
	case Int:
		return strconv.AppendInt(dst, int64(v.u), 10)
	case Map:
		dst = append(dst, '{')
		first, n := int(v.off()), int(v.n())
		slab, bufs := a.slab, a.bufs // loaded once, not per string
		for i, kv := range a.nodes[first : first+2*n : first+2*n] {
			if i&1 == 0 {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendJSONStr(dst, strBytes(slab, bufs, kv), kv.flags())
				dst = append(dst, ':')
				continue
			}
			// The common scalars inline; the rest by recursion.
			switch kv.kind() {
			case String:
				dst = appendJSONStr(dst, strBytes(slab, bufs, kv), kv.flags())
			case Int:
				dst = strconv.AppendInt(dst, int64(kv.u), 10)
			default:
				dst = a.AppendJSON(dst, kv)
			}
		}
		return append(dst, '}')
	case Array:
		dst = append(dst, '[')
		first, n := int(v.off()), int(v.n())
		for i, e := range a.nodes[first : first+n : first+n] {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = a.AppendJSON(dst, e)
		}
		return append(dst, ']')
	case Float:
		return AppendFloat(dst, v.Float())
	case Bool:
		if v.u != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case Bytes:
		raw := a.raw(v)
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, raw)
		return append(dst, '"')
	case Timestamp:
		dst = append(dst, '"')
		dst = time.Unix(0, int64(v.u)).UTC().AppendFormat(dst, time.RFC3339Nano)
		return append(dst, '"')
	}
	return append(dst, "null"...) // Absent, Null
}

// appendString appends a String value (or a map key) quoted.
func (a *Arena) appendString(dst []byte, v Value) []byte {
	return appendJSONStr(dst, a.raw(v), v.flags())
}

// strBytes is Arena.raw for the encoder's loop.
func strBytes(slab []byte, bufs [][]byte, v Value) []byte {
	off, n := v.off(), v.n()
	if v.ref == 0 {
		return slab[off : off+n]
	}
	return bufs[v.ref-1][off : off+n]
}

// strBuf returns the buffer the bytes of string v lie in.
func strBuf(slab []byte, bufs [][]byte, v Value) []byte {
	if v.ref == 0 {
		return slab
	}
	return bufs[v.ref-1]
}

// appendShort is append(dst, b...) for the short runs of JSON output (a
// key and its separators, a small value): two word copies of 16 bytes
// rather than a call of memmove, whose set-up costs more than such a
// copy. The copy may read past b and write past dst's length, within
// their capacities (the slab and the line buffers have room after most
// of their strings); where they do not, memmove it is.
func appendShort(dst, b []byte) []byte {
	n, l := len(b), len(dst)
	if n > 16 || cap(b) < 16 || cap(dst)-l < 16 {
		return append(dst, b...)
	}
	d, s := dst[l:l+16], b[:16]
	binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(s))
	binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:]))
	return dst[:l+n]
}

// appendJSONStr appends the string s, of a value with the given flags, quoted.
// Strings the decoder marked plain need no escapes: they are copied as
// they are.
func appendJSONStr(dst, s []byte, flags uint32) []byte {
	if flags&flagPlain != 0 {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	return appendQuoted(dst, s)
}

// AppendFloat appends f as records are written and to_string spells it:
// the shortest text that reads back as the same float, always with a '.'
// or an exponent (1.0, 0.1, 1e+21, 1e-07), and null for NaN and the
// infinities, which JSON cannot hold. Every float formatter reads this one.
func AppendFloat(dst []byte, f float64) []byte {
	// Most floats in logs are short decimals (12.5, 1810.542): when
	// m/10^k, for one k, is f, the digits of m are strconv's shortest
	// digits too — no other decimal of 15 or fewer digits rounds to f — and
	// 'f' formatting is only placing the point. Otherwise, strconv.
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e15 {
		k := 6
		if abs >= 1e9 {
			k = 0
			if abs < 1e12 {
				k = 3
			}
		}
		// abs*10^k is off by less than 0.5, so m is the nearest integer.
		if m := math.Round(abs * pow10[k]); m < 1e15 && m/pow10[k] == abs {
			return appendDecimal(dst, f < 0, uint64(m), k)
		}
	}
	return appendFloatStrconv(dst, f)
}

// appendFloatStrconv is AppendFloat without its fast path for short
// decimals: strconv's shortest digits.
func appendFloatStrconv(dst []byte, f float64) []byte {
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

// appendDecimal appends (-)m/10^k in the form strconv.AppendFloat(f, 'f',
// -1) gives, with ".0" when that has no point.
func appendDecimal(dst []byte, neg bool, m uint64, k int) []byte {
	for k > 0 && m%10 == 0 {
		m /= 10
		k--
	}
	var buf [20]byte
	s := strconv.AppendUint(buf[:0], m, 10)
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case k == 0:
		dst = append(dst, s...)
		return append(dst, ".0"...)
	case len(s) > k:
		dst = append(dst, s[:len(s)-k]...)
		dst = append(dst, '.')
		return append(dst, s[len(s)-k:]...)
	}
	dst = append(dst, "0."...)
	for i := len(s); i < k; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

const hexDigits = "0123456789abcdef"

// safeASCII[c] is set for the bytes that appendQuoted copies as they are:
// printable ASCII other than '"' and '\\'.
var safeASCII = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// plainJSON reports whether s needs no escapes in JSON, as the decoder
// decides for flagPlain.
func plainJSON(s []byte) bool { return strSpecial(s, 0) == len(s) }

// appendQuoted appends s as a JSON string. Runs of bytes that need no
// escape are found a word at a time (then a byte at a time, by table, for
// the tail) and copied with one append.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	i, start := 0, 0
	for {
		i = special8From(s, i)
		for i < len(s) && safeASCII[s[i]] {
			i++
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
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
