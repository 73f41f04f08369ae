package lua

import (
	glua "github.com/yuin/gopher-lua"

	"github.com/policyrun/policyrun/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/spec"
)

// The Go helper of round (the other number built-ins are Lua, in
// runtime_numbers.lua).

func init() { registrars = append(registrars, (*state).registerNumbers) }

func (s *state) registerNumbers() {
	s.R.RawSetString(builtin.Round.String(), s.L.NewFunction(func(L *glua.LState) int {
		r, ok := calc.Round(float64(L.CheckNumber(1)), luaInt(float64(L.CheckNumber(2))))
		if !ok {
			s.fault(spec.NonFinite)
		}
		L.Push(glua.LNumber(r))
		return 1
	}))
}
