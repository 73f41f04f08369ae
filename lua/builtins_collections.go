package lua

import (
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/record/coll"
)

// The Go helpers of the array and map built-ins whose algorithms are the
// VM's (record/coll: equality, unique, unflatten), run over copies in the
// scratch arena; the others are Lua, in runtime_arrays.lua and
// runtime_maps.lua.

func (s *state) registerCollections() {
	s.impl(builtin.Includes, func(L *glua.LState) int {
		arr := s.scratchValue(L.CheckTable(1))
		size := 0
		v := s.toValue(s.scratch, L.Get(2), &size)
		L.Push(glua.LBool(coll.Includes(s.scratch, arr, v)))
		return 1
	})
	s.impl(builtin.Unique, func(L *glua.LState) int {
		arr := s.scratchValue(L.CheckTable(1))
		L.Push(s.fromValue(s.scratch, s.unique.Unique(s.scratch, arr)))
		return 1
	})
	s.impl(builtin.Unflatten, func(L *glua.LState) int {
		m := s.scratchValue(L.CheckTable(1))
		L.Push(s.fromValue(s.scratch, s.unflatten.Unflatten(s.scratch, m, L.CheckString(2))))
		return 1
	})
}

// scratchValue resets the scratch arena and copies v into it, as the VM
// would hold it.
func (s *state) scratchValue(v glua.LValue) record.Value {
	s.scratch.Reset()
	size := 0
	return s.toValue(s.scratch, v, &size)
}
