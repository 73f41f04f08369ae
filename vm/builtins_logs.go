package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/csvtext"
	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/logparse"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The log-format built-ins (docs/semantics.md, "Log formats"): each
// parser is an internal package that the Lua backend calls too.
func init() {
	builtins[builtin.ParseCommonLog] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.sink.start(m)
		if !logparse.CommonLog(args[0].S, &m.sink) {
			*dst = Null()
			return spec.NoFault
		}
		*dst = Reg{K: record.Map, V: m.sink.finish()}
		return spec.NoFault
	}
	builtins[builtin.ParseSyslog] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.sink.start(m)
		buf, ok := logparse.Syslog(args[0].S, m.nowNanos(), &m.sink, m.buf)
		if m.buf = buf; !ok {
			*dst = Null()
			return spec.NoFault
		}
		*dst = Reg{K: record.Map, V: m.sink.finish()}
		return spec.NoFault
	}
	builtins[builtin.ParseCSV] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.parseCSV(dst, args[0].S, args[1].S)
		return spec.NoFault
	}
}

func (m *Machine) parseCSV(dst *Reg, s, sep string) {
	var f csvtext.Fields
	if !f.Init(s, sep) {
		*dst = Null()
		return
	}
	a := m.a
	b := a.BeginArray(f.Count())
	for f.Next() {
		if f.Plain() {
			b.Append(a.NewStringFrom(f.Raw()))
		} else {
			m.buf = f.AppendValue(m.buf[:0])
			b.Append(a.NewString(m.buf))
		}
	}
	if f.Err() {
		*dst = Null()
		return
	}
	*dst = Reg{K: record.Array, V: b.Finish()}
}

// mapSink is the logparse.Sink of the VM: it builds the map in the arena.
// It lives in the Machine, so that passing it as an interface allocates
// nothing.
type mapSink struct {
	a        *record.Arena
	b, inner record.Builder
	innerKey record.Value
	nested   bool
}

func (s *mapSink) start(m *Machine) {
	*s = mapSink{a: m.a, b: m.a.BeginMap(10)}
}

func (s *mapSink) add(key string, v record.Value) {
	if s.nested {
		s.inner.Add(s.a.NewStringFrom(key), v)
	} else {
		s.b.Add(s.a.NewStringFrom(key), v)
	}
}

func (s *mapSink) Str(key, val string)       { s.add(key, s.a.NewStringFrom(val)) }
func (s *mapSink) Int(key string, v int64)   { s.add(key, record.IntValue(v)) }
func (s *mapSink) Time(key string, ns int64) { s.add(key, record.TimestampValue(ns)) }
func (s *mapSink) BeginMap(key string) {
	s.innerKey, s.inner, s.nested = s.a.NewStringFrom(key), s.a.BeginMap(4), true
}
func (s *mapSink) EndMap() {
	s.nested = false
	s.b.Add(s.innerKey, s.inner.Finish())
}

func (s *mapSink) finish() record.Value {
	v := s.b.Finish()
	*s = mapSink{}
	return v
}

func init() {
	builtins[builtin.ParseGrok] = func(m *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason {
		s := args[0].S
		loc := re.FindStringSubmatchIndex(s)
		if loc == nil {
			*dst = Null()
			return spec.NoFault
		}
		a := m.a
		b := a.BeginMap(re.NumSubexp())
		grok.Fields(re, s, loc, false, func(name, value string) {
			b.Add(a.NewStringFrom(name), a.NewStringFrom(value))
		})
		*dst = Reg{K: record.Map, V: b.Finish()}
		return spec.NoFault
	}
}
