package lua

import (
	"time"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/internal/luasandbox"
	"github.com/policyrun/policyrun/internal/strftime"
	"github.com/policyrun/policyrun/record"
)

// The Go helpers of the time built-ins (unix_seconds and unix_millis are
// Lua, in runtime_time.lua).

func (s *state) registerTime() {
	s.impl(builtin.ParseTime, func(L *glua.LState) int {
		ns, ok := strftime.ParseIn(L.CheckString(1), L.CheckString(2), zone(L.CheckString(3)))
		if !ok {
			L.Push(s.null)
			return 1
		}
		L.Push(s.newTS(ns))
		return 1
	})
	s.impl(builtin.FormatTime, func(L *glua.LState) int {
		t := L.CheckTable(1)
		s.buf = strftime.AppendFormatIn(s.buf[:0], tsNanos(t), L.CheckString(2), zone(L.CheckString(3)))
		L.Push(s.str(string(s.buf)))
		return 1
	})
	s.impl(builtin.FromUnix, func(L *glua.LState) int {
		unit := calc.UnixUnit(L.CheckString(2))
		var ns int64
		if v := L.Get(1); s.kindOf(v) == record.Int {
			ns = calc.FromUnixInt(luasandbox.Int(float64(v.(glua.LNumber))), unit)
		} else {
			ns = calc.FromUnixFloat(s.number(v), unit)
		}
		L.Push(s.newTS(ns))
		return 1
	})
	s.impl(builtin.ParseDuration, func(L *glua.LState) int {
		d, err := time.ParseDuration(L.CheckString(1))
		if err != nil {
			L.Push(s.null)
			return 1
		}
		L.Push(glua.LNumber(d))
		return 1
	})
}

// zone is the location of a zone name the checker has accepted.
func zone(name string) *time.Location {
	loc, err := strftime.Zone(name)
	if err != nil {
		return time.UTC // not a checked program
	}
	return loc
}

// number is the value of an int or a (boxed) float.
func (s *state) number(v glua.LValue) float64 {
	switch v := v.(type) {
	case glua.LNumber:
		return float64(v)
	case *glua.LTable:
		if n, ok := v.RawGetInt(1).(glua.LNumber); ok && v.Metatable == s.flt {
			return float64(n)
		}
	}
	return 0
}
