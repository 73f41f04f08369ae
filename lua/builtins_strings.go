package lua

import (
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/internal/luasandbox"
	"github.com/policyrun/policyrun/internal/printf"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The Go helpers of the string built-ins (trim_prefix, trim_suffix
// and index_of are Lua, in runtime_strings.lua).

func (s *state) registerStrings() {
	s.impl(builtin.Format, func(L *glua.LState) int {
		// s.fmtBuf, not s.buf, which toString (%v) uses
		buf, ok := printf.Append(s.fmtBuf[:0], L.CheckString(1), s.lim.MaxString, func(buf []byte, v printf.Verb, n int) []byte {
			return s.appendVerb(buf, &v, L.Get(2+n))
		})
		s.fmtBuf = buf
		if !ok {
			s.fault(spec.StringTooLong)
		}
		L.Push(glua.LString(string(buf)))
		return 1
	})
	s.impl(builtin.Truncate, func(L *glua.LState) int {
		L.Push(glua.LString(calc.Truncate(L.CheckString(1), luasandbox.Int(float64(L.CheckNumber(2))))))
		return 1
	})
}

// appendVerb appends the (boxed) value x written by the verb v, as the
// VM's format does.
func (s *state) appendVerb(buf []byte, v *printf.Verb, x glua.LValue) []byte {
	k := s.kindOf(x)
	str := func() string {
		if k == record.Bytes {
			return string(x.(*glua.LTable).RawGetInt(1).(glua.LString))
		}
		str, _ := x.(glua.LString)
		return string(str)
	}
	switch v.Verb {
	case 'd':
		return printf.AppendInt(buf, v, luasandbox.Int(s.number(x)))
	case 'x':
		if k == record.Int {
			return printf.AppendInt(buf, v, luasandbox.Int(s.number(x)))
		}
		return printf.AppendHex(buf, v, str())
	case 'f':
		if k == record.Int {
			// An int as the VM holds it: Lua arithmetic can make a -0.
			return printf.AppendFloat(buf, v, float64(luasandbox.Int(s.number(x))))
		}
		return printf.AppendFloat(buf, v, s.number(x))
	case 's':
		return printf.AppendString(buf, v, str())
	case 'q':
		return printf.AppendQuote(buf, v, str())
	}
	return printf.AppendString(buf, v, s.toString(x))
}
