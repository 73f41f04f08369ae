package vm

import (
	"strings"

	"github.com/policyrun/policyrun/record"
)

// parseKV is parse_kv(s, pairSep, kvSep): see semantics.md.
func (m *Machine) parseKV(dst *Reg, s, pairSep, kvSep string) {
	if pairSep == "" || kvSep == "" {
		*dst = Null()
		return
	}
	a := m.a
	b := a.BeginMap(strings.Count(s, pairSep) + 1)
	for len(s) > 0 {
		piece := s
		s = ""
		if i := strings.Index(piece, pairSep); i >= 0 {
			piece, s = piece[:i], piece[i+len(pairSep):]
		}
		if strings.TrimSpace(piece) == "" {
			continue
		}
		i := strings.Index(piece, kvSep)
		if i < 0 {
			*dst = Null()
			return
		}
		k, v := strings.TrimSpace(piece[:i]), strings.TrimSpace(piece[i+len(kvSep):])
		if k == "" {
			*dst = Null()
			return
		}
		b.Add(a.NewStringFrom(k), a.NewStringFrom(v))
	}
	*dst = Reg{K: record.Map, V: b.Finish()}
}

func isLogfmtSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parseLogfmt is parse_logfmt(s): key=value pairs separated by spaces,
// values optionally double-quoted with \" and \\ escapes; a bare key maps
// to ""; null on an unterminated quote or an empty key.
func (m *Machine) parseLogfmt(dst *Reg, s string) {
	a := m.a
	b := a.BeginMap(strings.Count(s, "=") + 1)
	i := 0
	for {
		for i < len(s) && isLogfmtSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		start := i
		for i < len(s) && s[i] != '=' && !isLogfmtSpace(s[i]) {
			i++
		}
		key := s[start:i]
		if key == "" {
			*dst = Null()
			return
		}
		k := a.NewStringFrom(key)
		if i == len(s) || s[i] != '=' {
			b.Add(k, a.NewStringFrom(""))
			continue
		}
		i++ // '='
		if i < len(s) && s[i] == '"' {
			i++
			a.StartString()
			closed := false
			for i < len(s) {
				c := s[i]
				if c == '"' {
					closed = true
					i++
					break
				}
				if c == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					c = s[i+1]
					i++
				}
				a.WriteByte(c)
				i++
			}
			v := a.EndString()
			if !closed {
				*dst = Null()
				return
			}
			b.Add(k, v)
			continue
		}
		start = i
		for i < len(s) && !isLogfmtSpace(s[i]) {
			i++
		}
		b.Add(k, a.NewStringFrom(s[start:i]))
	}
	*dst = Reg{K: record.Map, V: b.Finish()}
}
