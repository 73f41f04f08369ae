package lua

import (
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record/coll"
)

// The Go helpers of the array built-ins that compare elements: the VM's
// equality (record/coll) over copies in the scratch arena.

func (s *state) registerArrays() {
	s.impl(builtin.Includes, func(L *glua.LState) int {
		s.scratch.Reset()
		size := 0
		arr := s.toValue(s.scratch, L.CheckTable(1), &size)
		v := s.toValue(s.scratch, L.Get(2), &size)
		L.Push(glua.LBool(coll.Includes(s.scratch, arr, v)))
		return 1
	})
	s.impl(builtin.Unique, func(L *glua.LState) int {
		s.scratch.Reset()
		size := 0
		arr := s.toValue(s.scratch, L.CheckTable(1), &size)
		L.Push(s.fromValue(s.scratch, s.unique.Unique(s.scratch, arr)))
		return 1
	})
}
