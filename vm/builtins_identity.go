package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/spec"
)

// severity_number (OTLP) and the identity built-ins, uuid_v4 and uuid_v7
// (docs/semantics.md, OTLP and identity).

func init() {
	builtins[builtin.SeverityNumber] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(calc.SeverityNumber(args[0].S))
		return spec.NoFault
	}
	builtins[builtin.UUIDv4] = func(m *Machine, dst *Reg, _ []Reg, _ *regexp.Regexp) spec.Reason {
		b := m.rand.Next()
		calc.UUIDv4(b)
		m.buf = calc.AppendUUID(m.buf[:0], b)
		m.newString(dst, m.buf)
		return spec.NoFault
	}
	builtins[builtin.UUIDv7] = func(m *Machine, dst *Reg, _ []Reg, _ *regexp.Regexp) spec.Reason {
		b := m.rand.Next()
		calc.UUIDv7(b, calc.FloorDiv(m.nowNanos(), 1e6))
		m.buf = calc.AppendUUID(m.buf[:0], b)
		m.newString(dst, m.buf)
		return spec.NoFault
	}
}
