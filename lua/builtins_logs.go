package lua

import (
	"regexp"
	"strings"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/csvtext"
	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/logparse"
)

func init() {
	for _, id := range []builtin.ID{builtin.ParseCSV, builtin.ParseCommonLog, builtin.ParseSyslog} {
		conv[id] = plain
	}
	conv[builtin.ParseGrok] = plainIn // the pattern comes as a compiled regex, as capture's
}

// registerLogs registers the log-format parsers: each is the internal
// package the VM calls.
func (s *state) registerLogs(impl func(builtin.ID, func(*glua.LState) int)) {
	impl(builtin.ParseGrok, func(L *glua.LState) int {
		x, re := L.CheckString(1), L.CheckUserData(2).Value.(*regexp.Regexp)
		loc := re.FindStringSubmatchIndex(x)
		if loc == nil {
			L.Push(s.null)
			return 1
		}
		var pairs []kv
		grok.Fields(re, x, loc, false, func(name, value string) { pairs = append(pairs, kv{name, value}) })
		L.Push(s.strMap(pairs, true))
		return 1
	})
	impl(builtin.ParseCommonLog, func(L *glua.LState) int {
		out := tableSink{s: s}
		out.t, out.o = s.newMap(10)
		if !logparse.CommonLog(L.CheckString(1), &out) {
			L.Push(s.null)
			return 1
		}
		L.Push(out.t)
		return 1
	})
	// parse_syslog(s, now): the transpiler passes now() (RFC 3164 lines
	// take its year).
	impl(builtin.ParseSyslog, func(L *glua.LState) int {
		out := tableSink{s: s}
		out.t, out.o = s.newMap(10)
		buf, ok := logparse.Syslog(L.CheckString(1), tsNanos(L.CheckTable(2)), &out, s.buf)
		if s.buf = buf; !ok {
			L.Push(s.null)
			return 1
		}
		L.Push(out.t)
		return 1
	})
	impl(builtin.ParseCSV, func(L *glua.LState) int {
		var f csvtext.Fields
		if !f.Init(L.CheckString(1), L.CheckString(2)) {
			L.Push(s.null)
			return 1
		}
		t := s.newArr(f.Count())
		n := 0
		for f.Next() {
			v := f.Raw()
			if !f.Plain() {
				v = string(f.AppendValue(nil))
			}
			n++
			t.RawSetInt(n, glua.LString(v))
		}
		if f.Err() {
			L.Push(s.null)
			return 1
		}
		L.Push(t)
		return 1
	})
}

// tableSink is the logparse.Sink of the Lua backend: it builds a map of
// the transpiled representation.
type tableSink struct {
	s          *state
	t, o       *glua.LTable // the map and its key order
	outT, outO *glua.LTable // the outer map while an inner one is built
}

func (t *tableSink) add(key string, v glua.LValue) {
	if t.t.RawGetString(key) == glua.LNil {
		t.o.RawSetInt(t.o.Len()+1, glua.LString(key))
	}
	t.t.RawSetString(key, v)
}

func (t *tableSink) Str(key, val string)       { t.add(strings.Clone(key), glua.LString(strings.Clone(val))) }
func (t *tableSink) Int(key string, v int64)   { t.add(strings.Clone(key), glua.LNumber(v)) }
func (t *tableSink) Time(key string, ns int64) { t.add(strings.Clone(key), t.s.newTS(ns)) }
func (t *tableSink) BeginMap(key string) {
	inner, o := t.s.newMap(4)
	t.add(strings.Clone(key), inner)
	t.outT, t.outO, t.t, t.o = t.t, t.o, inner, o
}
func (t *tableSink) EndMap() { t.t, t.o = t.outT, t.outO }
