package vm

import (
	"strings"

	"github.com/policyrun/policyrun/internal/kvtext"
	"github.com/policyrun/policyrun/record"
)

// parseKV is parse_kv(s, pairSep, kvSep): see semantics.md.
func (m *Machine) parseKV(dst *Reg, s, pairSep, kvSep string) {
	var sc kvtext.Pairs
	if sc.Init(s, pairSep, kvSep); sc.Err() != nil {
		*dst = Null()
		return
	}
	a := m.a
	b := a.BeginMap(strings.Count(s, pairSep) + 1)
	for sc.Next() {
		b.Add(a.NewStringFrom(sc.Key()), a.NewStringFrom(sc.Value()))
	}
	if sc.Err() != nil {
		*dst = Null()
		return
	}
	*dst = Reg{K: record.Map, V: b.Finish()}
}

// parseLogfmt is parse_logfmt(s): see semantics.md.
func (m *Machine) parseLogfmt(dst *Reg, s string) {
	var sc kvtext.Logfmt
	sc.Init(s)
	a := m.a
	b := a.BeginMap(strings.Count(s, "=") + 1)
	for sc.Next() {
		k := a.NewStringFrom(sc.Key())
		if sc.Plain() {
			b.Add(k, a.NewStringFrom(sc.Raw()))
			continue
		}
		m.buf = sc.AppendValue(m.buf[:0])
		b.Add(k, a.NewString(m.buf))
	}
	if sc.Err() != nil {
		*dst = Null()
		return
	}
	*dst = Reg{K: record.Map, V: b.Finish()}
}
