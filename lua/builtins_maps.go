package lua

import (
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
)

// The Go helpers of the map built-ins (the others are Lua, in
// runtime_maps.lua).

func (s *state) registerMaps() {
	s.impl(builtin.Unflatten, func(L *glua.LState) int {
		// The VM's algorithm, over a copy of the map in the scratch arena.
		s.scratch.Reset()
		size := 0
		m := s.toValue(s.scratch, L.CheckTable(1), &size)
		L.Push(s.fromValue(s.scratch, s.unflatten.Unflatten(s.scratch, m, L.CheckString(2))))
		return 1
	})
}
