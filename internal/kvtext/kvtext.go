// Package kvtext scans key=value text — logfmt and parse_kv's separated
// pairs — without allocating: the one implementation behind the VM's and
// the Lua backend's parse_logfmt and parse_kv and the pipeline's logfmt parser.
package kvtext

import (
	"errors"
	"strings"
	"unicode"
)

// Errors of a scan.
var (
	ErrUnterminated = errors.New("unterminated quoted value")
	ErrEmptyKey     = errors.New("empty key")
	ErrNoSeparator  = errors.New("a pair without its separator")
)

// IsLogfmtSpace is the white space between logfmt pairs.
func IsLogfmtSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Logfmt walks the pairs of a logfmt line (docs/semantics.md, parse_logfmt):
// key=value pairs separated by white space, values optionally double-quoted
// with \" and \\ escapes, a bare key with the value "".
//
//	var sc kvtext.Logfmt
//	sc.Init(s)
//	for sc.Next() { use(sc.Key(), sc.AppendValue(buf[:0])) }
//	if sc.Err() != nil { ... }
type Logfmt struct {
	s      string
	i      int
	key    string
	raw    string // the value as written, without its quotes
	quoted bool
	err    error
}

// Init starts a scan of s.
func (sc *Logfmt) Init(s string) { *sc = Logfmt{s: s} }

// Next moves to the next pair; false at the end or on an error (Err).
func (sc *Logfmt) Next() bool {
	s, i := sc.s, sc.i
	for i < len(s) && IsLogfmtSpace(s[i]) {
		i++
	}
	if i == len(s) {
		sc.i = i
		return false
	}
	start := i
	for i < len(s) && s[i] != '=' && !IsLogfmtSpace(s[i]) {
		i++
	}
	sc.key, sc.raw, sc.quoted = s[start:i], "", false
	if sc.key == "" {
		sc.err = ErrEmptyKey
		return false
	}
	if i == len(s) || s[i] != '=' {
		sc.i = i
		return true
	}
	i++ // '='
	if i < len(s) && s[i] == '"' {
		i++
		start = i
		for ; i < len(s); i++ {
			if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
				i++
				continue
			}
			if s[i] == '"' {
				sc.raw, sc.quoted, sc.i = s[start:i], true, i+1
				return true
			}
		}
		sc.err = ErrUnterminated
		return false
	}
	start = i
	for i < len(s) && !IsLogfmtSpace(s[i]) {
		i++
	}
	sc.raw, sc.i = s[start:i], i
	return true
}

// Key is the current pair's key.
func (sc *Logfmt) Key() string { return sc.key }

// Plain reports whether the current value needs no unescaping; Raw is then
// the value itself.
func (sc *Logfmt) Plain() bool { return !sc.quoted || !strings.ContainsRune(sc.raw, '\\') }

// Raw is the current value as written, without its quotes.
func (sc *Logfmt) Raw() string { return sc.raw }

// AppendValue appends the current value, escapes resolved, to dst.
func (sc *Logfmt) AppendValue(dst []byte) []byte {
	if sc.Plain() {
		return append(dst, sc.raw...)
	}
	r := sc.raw
	for i := 0; i < len(r); i++ {
		if r[i] == '\\' && i+1 < len(r) && (r[i+1] == '"' || r[i+1] == '\\') {
			i++
		}
		dst = append(dst, r[i])
	}
	return dst
}

// Err is the error that ended the scan, or nil.
func (sc *Logfmt) Err() error { return sc.err }

// Pairs walks parse_kv's pairs (docs/semantics.md): pieces separated by
// pairSep, empty and all-space pieces skipped, each split at its first kvSep,
// keys and values trimmed of white space.
type Pairs struct {
	s, pairSep, kvSep string
	key, value        string
	err               error
}

// Init starts a scan of s; empty separators make the scan fail at once.
func (sc *Pairs) Init(s, pairSep, kvSep string) {
	*sc = Pairs{s: s, pairSep: pairSep, kvSep: kvSep}
	if pairSep == "" || kvSep == "" {
		sc.err = ErrNoSeparator
	}
}

// Next moves to the next pair; false at the end or on an error (Err).
func (sc *Pairs) Next() bool {
	if sc.err != nil {
		return false
	}
	for sc.s != "" {
		piece, rest, _ := strings.Cut(sc.s, sc.pairSep)
		sc.s = rest
		if strings.TrimFunc(piece, unicode.IsSpace) == "" {
			continue
		}
		k, v, ok := strings.Cut(piece, sc.kvSep)
		if !ok {
			sc.err = ErrNoSeparator
			return false
		}
		sc.key, sc.value = strings.TrimFunc(k, unicode.IsSpace), strings.TrimFunc(v, unicode.IsSpace)
		if sc.key == "" {
			sc.err = ErrEmptyKey
			return false
		}
		return true
	}
	return false
}

// Key and Value are the current pair.
func (sc *Pairs) Key() string   { return sc.key }
func (sc *Pairs) Value() string { return sc.value }

// Err is the error that ended the scan, or nil.
func (sc *Pairs) Err() error { return sc.err }

// IsDecimal reports whether s is a plain decimal number: a sign, digits, an
// optional fraction and exponent; no hex, inf, nan or underscores (to_float).
func IsDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	digits, i := 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}
