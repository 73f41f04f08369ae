package lua

import (
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/internal/luasandbox"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The Go helpers of round, min and max, which take boxed arguments so that
// an int is read as the VM holds it (Lua arithmetic on ints can make a -0,
// which would show as a float); floor, ceil and abs are Lua, in
// runtime_numbers.lua.

func (s *state) registerNumbers() {
	s.impl(builtin.Round, func(L *glua.LState) int {
		r, ok := calc.Round(s.float(L.Get(1)), luasandbox.Int(s.number(L.Get(2))))
		if !ok {
			s.fault(spec.NonFinite)
		}
		L.Push(s.box(r))
		return 1
	})
	minMax := func(id builtin.ID, less bool) {
		s.impl(id, func(L *glua.LState) int {
			a, b := L.Get(1), L.Get(2)
			if s.kindOf(a) == record.Int && s.kindOf(b) == record.Int {
				x, y := luasandbox.Int(s.number(a)), luasandbox.Int(s.number(b))
				if (y < x) == less && y != x {
					x = y
				}
				L.Push(glua.LNumber(x))
				return 1
			}
			x, y := s.float(a), s.float(b)
			if less {
				L.Push(s.box(min(x, y)))
			} else {
				L.Push(s.box(max(x, y)))
			}
			return 1
		})
	}
	minMax(builtin.Min, true)
	minMax(builtin.Max, false)
}

// float is the value of an int (as the VM holds it) or a boxed float.
func (s *state) float(v glua.LValue) float64 {
	if s.kindOf(v) == record.Int {
		return float64(luasandbox.Int(s.number(v)))
	}
	return s.number(v)
}
