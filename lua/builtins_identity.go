package lua

import (
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
)

// The Go helpers of severity_number and of uuid_v4 and uuid_v7 (the
// transpiler passes uuid_v7 the run's now, M.now).

func (s *state) registerIdentity() {
	s.impl(builtin.SeverityNumber, func(L *glua.LState) int {
		L.Push(glua.LNumber(calc.SeverityNumber(L.CheckString(1))))
		return 1
	})
	s.impl(builtin.UUIDv4, func(L *glua.LState) int {
		b := s.rand.Next()
		calc.UUIDv4(b)
		s.buf = calc.AppendUUID(s.buf[:0], b)
		L.Push(glua.LString(string(s.buf)))
		return 1
	})
	s.impl(builtin.UUIDv7, func(L *glua.LState) int {
		b := s.rand.Next()
		calc.UUIDv7(b, calc.FloorDiv(tsNanos(L.CheckTable(1)), 1e6))
		s.buf = calc.AppendUUID(s.buf[:0], b)
		L.Push(glua.LString(string(s.buf)))
		return 1
	})
}
