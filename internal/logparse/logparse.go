// Package logparse is the policy built-ins parse_common_log and
// parse_syslog: the one parser of each behind the VM's and the Lua
// backend's. A parser checks the whole line first and then gives its
// fields, in order, to a Sink of the backend's, which builds the map in
// its own representation; so the backends agree by construction, and the
// VM's sink builds straight into the record's arena.
package logparse

import (
	"strings"
	"unsafe"

	"github.com/policyrun/policyrun/internal/strftime"
)

// A Sink receives the fields of a parsed line. A string passed to it is
// valid only during the call: a sink that keeps it copies it.
type Sink interface {
	Str(key, val string)
	Int(key string, v int64)
	Time(key string, unixNanos int64)
	// BeginMap starts a map<string> under key: the Str calls up to EndMap
	// are its entries.
	BeginMap(key string)
	EndMap()
}

// CommonLog is parse_common_log(s): the Common Log Format line
//
//	host identity user [timestamp] "request" status size
//
// as Apache and nginx write it (docs/semantics.md). It reports false,
// calling nothing, when s is not such a line.
func CommonLog(s string, out Sink) bool {
	var f [7]string
	rest := strings.TrimLeft(s, " \t")
	for i := 0; i < 3; i++ {
		if f[i], rest = token(rest); f[i] == "" {
			return false
		}
	}
	// [timestamp] or -
	var ts int64
	ok := true
	switch {
	case strings.HasPrefix(rest, "-"):
		f[3], rest = "-", rest[1:]
	case strings.HasPrefix(rest, "["):
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return false
		}
		f[3], rest = rest[1:j], rest[j+1:]
		if ts, ok = strftime.Parse(f[3], "%d/%b/%Y:%H:%M:%S %z"); !ok {
			return false
		}
	default:
		return false
	}
	if rest, ok = space(rest); !ok {
		return false
	}
	// "request" or -
	switch {
	case strings.HasPrefix(rest, "-"):
		f[4], rest = "-", rest[1:]
	case strings.HasPrefix(rest, `"`):
		j := closingQuote(rest)
		if j < 0 {
			return false
		}
		f[4], rest = rest[1:j], rest[j+1:]
	default:
		return false
	}
	if rest, ok = space(rest); !ok {
		return false
	}
	if f[5], rest = token(rest); !numOrDash(f[5]) {
		return false
	}
	if f[6], rest = token(rest); !numOrDash(f[6]) || strings.Trim(rest, " \t") != "" {
		return false
	}
	str := func(k, v string) {
		if v != "-" {
			out.Str(k, v)
		}
	}
	str("host", f[0])
	str("identity", f[1])
	str("user", f[2])
	if f[3] != "-" {
		out.Time("timestamp", ts)
	}
	if f[4] != "-" {
		out.Str("message", f[4])
		if m, p, pr, ok := request(f[4]); ok {
			out.Str("method", m)
			out.Str("path", p)
			out.Str("protocol", pr)
		}
	}
	if f[5] != "-" {
		out.Int("status", atoi(f[5]))
	}
	if f[6] != "-" {
		out.Int("size", atoi(f[6]))
	}
	return true
}

// request splits a request line "GET /path HTTP/1.1" into its three parts.
func request(r string) (method, path, protocol string, ok bool) {
	method, rest, ok1 := strings.Cut(r, " ")
	path, protocol, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || method == "" || path == "" || protocol == "" || strings.IndexByte(protocol, ' ') >= 0 {
		return "", "", "", false
	}
	return method, path, protocol, true
}

// closingQuote is the index of the quote that closes the one at s[0]; a
// quote after a backslash is part of the text.
func closingQuote(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// token returns the run of s up to the next space or tab, and what follows
// it with the white space skipped.
func token(s string) (string, string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], skipSpace(s[i:])
}

func skipSpace(s string) string { return strings.TrimLeft(s, " \t") }

// space skips the white space that must start s.
func space(s string) (string, bool) {
	if s == "" || s[0] != ' ' && s[0] != '\t' {
		return s, false
	}
	return skipSpace(s), true
}

// numOrDash: "-", or 1 to 18 decimal digits (an int64 without overflow).
func numOrDash(s string) bool {
	if s == "-" {
		return true
	}
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int64 {
	var n int64
	for i := 0; i < len(s); i++ {
		n = 10*n + int64(s[i]-'0')
	}
	return n
}

// str is the bytes of b as a string without a copy, for a Sink call.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
