// Package urltext is the policy built-ins parse_url and parse_query: the one
// parser behind the VM's and the Lua backend's. It splits without
// allocating: the parts are substrings of the input, still percent-encoded,
// and Parse has checked that every escape in them decodes, so that a caller
// decodes each into its own buffer (textenc.AppendURLDecode) and cannot fail.
package urltext

import (
	"strings"

	"github.com/policyrun/policyrun/internal/textenc"
)

// URL is an absolute URL split into the parts parse_url gives.
type URL struct {
	Scheme   string // as written: parse_url lower-cases it
	User     string // the userinfo up to its first ':' (the password is dropped)
	Host     string // without the brackets of an IPv6 literal
	Port     int    // when HasPort
	HasPort  bool
	Path     string
	Query    string // after '?', without it
	Fragment string // after '#', without it
}

// Parse splits s, an absolute URL (RFC 3986: scheme ":" ["//" authority]
// path ["?" query] ["#" fragment]). It fails when s has no scheme, has a
// space or an ASCII control character, a malformed escape (% not followed
// by two hex digits), a port that is not a decimal number up to 65535, an
// unclosed IPv6 literal or a second ':' in a host.
func Parse(s string) (URL, bool) {
	var u URL
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f {
			return u, false
		}
	}
	if !validEscapes(s) {
		return u, false
	}
	i := schemeEnd(s)
	if i < 0 {
		return u, false
	}
	u.Scheme, s = s[:i], s[i+1:]
	if j := strings.IndexByte(s, '#'); j >= 0 {
		u.Fragment, s = s[j+1:], s[:j]
	}
	if j := strings.IndexByte(s, '?'); j >= 0 {
		u.Query, s = s[j+1:], s[:j]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		auth := s
		if j := strings.IndexByte(s, '/'); j >= 0 {
			auth, s = s[:j], s[j:]
		} else {
			s = ""
		}
		if !u.authority(auth) {
			return u, false
		}
	}
	u.Path = s
	return u, true
}

// authority reads [userinfo "@"] host [":" port].
func (u *URL) authority(a string) bool {
	if j := strings.LastIndexByte(a, '@'); j >= 0 {
		info := a[:j]
		if k := strings.IndexByte(info, ':'); k >= 0 {
			info = info[:k]
		}
		u.User, a = info, a[j+1:]
	}
	port := ""
	if strings.HasPrefix(a, "[") {
		j := strings.IndexByte(a, ']')
		if j < 0 {
			return false
		}
		u.Host, a = a[1:j], a[j+1:]
		switch {
		case a == "":
		case a[0] == ':':
			port = a[1:]
		default:
			return false
		}
	} else {
		u.Host = a
		if j := strings.IndexByte(a, ':'); j >= 0 {
			u.Host, port = a[:j], a[j+1:]
			if strings.IndexByte(port, ':') >= 0 {
				return false
			}
		}
	}
	if port == "" {
		return true
	}
	n := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return false
		}
		n = 10*n + int(c-'0')
		if n > 65535 {
			return false
		}
	}
	u.Port, u.HasPort = n, true
	return true
}

// schemeEnd is the index of the ':' after s's scheme (ALPHA *( ALPHA /
// DIGIT / "+" / "-" / "." )), or -1.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return -1
			}
		case c == ':' && i > 0:
			return i
		default:
			return -1
		}
	}
	return -1
}

func validEscapes(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0; {
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return false
		}
		j := strings.IndexByte(s[i+3:], '%')
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// LowerScheme reports whether the scheme needs lower-casing.
func LowerScheme(scheme string) bool {
	for i := 0; i < len(scheme); i++ {
		if 'A' <= scheme[i] && scheme[i] <= 'Z' {
			return true
		}
	}
	return false
}

// Query iterates over the pairs of a query string (parse_query): pieces
// between '&', empty ones skipped, each split at its first '=' (a piece
// without one is a key with the value ""). Key and Value are still encoded:
// decode them with textenc.AppendURLDecode(dst, x, true), which reads '+'
// as a space.
type Query struct {
	s          string
	key, value string
}

// InitQuery starts iterating over s; one leading '?' is skipped. It fails
// when an escape of s is malformed.
func (q *Query) Init(s string) bool {
	s = strings.TrimPrefix(s, "?")
	*q = Query{s: s}
	return validEscapes(s)
}

// Next moves to the next pair and reports whether there is one.
func (q *Query) Next() bool {
	for q.s != "" {
		piece := q.s
		if j := strings.IndexByte(q.s, '&'); j >= 0 {
			piece, q.s = q.s[:j], q.s[j+1:]
		} else {
			q.s = ""
		}
		if piece == "" {
			continue
		}
		q.key, q.value, _ = strings.Cut(piece, "=")
		return true
	}
	return false
}

// Key is the pair's key, encoded.
func (q *Query) Key() string { return q.key }

// Value is the pair's value, encoded.
func (q *Query) Value() string { return q.value }

// Count is the number of non-empty pieces of a query string, for sizing a
// map.
func Count(s string) int { return strings.Count(s, "&") + 1 }

// Decode is textenc.AppendURLDecode for parts Parse or Init checked.
func Decode(dst []byte, s string, plus bool) []byte {
	out, _ := textenc.AppendURLDecode(dst, s, plus)
	return out
}

// NeedsDecode reports whether decoding s changes it.
func NeedsDecode(s string, plus bool) bool { return textenc.NeedsURLDecode(s, plus) }
