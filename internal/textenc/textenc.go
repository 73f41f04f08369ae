// Package textenc is the policy built-ins encode_base64, decode_base64,
// encode_hex, decode_hex, encode_url and decode_url: the one implementation
// of each behind the VM's and the Lua backend's. Every function appends to
// a caller's buffer, so that the VM allocates nothing once its buffer has
// grown.
package textenc

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unsafe"
)

// AppendBase64 appends s in standard base64 (RFC 4648 §4) with padding.
func AppendBase64(dst []byte, s string) []byte {
	return base64.StdEncoding.AppendEncode(dst, bytesOf(s))
}

// Base64Len is the length of the base64 of n bytes, padding included.
func Base64Len(n int) int { return base64.StdEncoding.EncodedLen(n) }

// AppendDecodeBase64 appends the bytes the standard base64 s holds. The
// padding may be left out; anything outside the alphabet (white space,
// line breaks, the URL-safe - and _ included) is an error, and so is a
// length no encoding has (one character over a multiple of four).
func AppendDecodeBase64(dst []byte, s string) ([]byte, bool) {
	if strings.ContainsAny(s, "\r\n") {
		return dst, false // encoding/base64 skips these
	}
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	out, err := enc.AppendDecode(dst, bytesOf(s))
	if err != nil {
		return dst, false
	}
	return out, true
}

// AppendHex appends s in lower-case hex.
func AppendHex(dst []byte, s string) []byte {
	return hex.AppendEncode(dst, bytesOf(s))
}

// HexLen is the length of the hex of n bytes.
func HexLen(n int) int { return hex.EncodedLen(n) }

// AppendDecodeHex appends the bytes the hex s holds (either case); an odd
// length or a character that is no hex digit is an error.
func AppendDecodeHex(dst []byte, s string) ([]byte, bool) {
	out, err := hex.AppendDecode(dst, bytesOf(s))
	if err != nil {
		return dst, false
	}
	return out, true
}

// Unreserved reports whether c is in RFC 3986's unreserved set:
// ALPHA DIGIT - . _ ~.
func Unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

const upperHex = "0123456789ABCDEF"

// URLEncodedLen is the length of encode_url(s).
func URLEncodedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if !Unreserved(s[i]) {
			n += 2
		}
	}
	return n
}

// AppendURLEncode appends s with every byte outside the unreserved set
// written %XX, in upper-case hex (RFC 3986 §2.1): a space is %20, never +.
func AppendURLEncode(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if Unreserved(c) {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst
}

// AppendURLDecode appends s with every %XX (either case) decoded; with
// plus set, + is a space (form encoding), else it is kept. A % not
// followed by two hex digits is an error.
func AppendURLDecode(dst []byte, s string, plus bool) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) {
				return dst, false
			}
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return dst, false
			}
			dst = append(dst, hi<<4|lo)
			i += 2
		case c == '+' && plus:
			dst = append(dst, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

// NeedsURLDecode reports whether decoding s changes it: whether it has a %
// (or, with plus, a +).
func NeedsURLDecode(s string, plus bool) bool {
	if plus {
		return strings.ContainsAny(s, "%+")
	}
	return strings.IndexByte(s, '%') >= 0
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// bytesOf is s's bytes without a copy, for the encoders that only read them.
func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
