package vm

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/internal/printf"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The string built-ins: format, truncate, trim_prefix, trim_suffix,
// index_of (docs/semantics.md, Strings).

func init() {
	builtins[builtin.Format] = (*Machine).format
	builtins[builtin.Truncate] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		substring(dst, &args[0], calc.Truncate(args[0].S, args[1].int()))
		return spec.NoFault
	}
	builtins[builtin.TrimPrefix] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		substring(dst, &args[0], strings.TrimPrefix(args[0].S, args[1].S))
		return spec.NoFault
	}
	builtins[builtin.TrimSuffix] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		substring(dst, &args[0], strings.TrimSuffix(args[0].S, args[1].S))
		return spec.NoFault
	}
	builtins[builtin.IndexOf] = func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(int64(strings.Index(args[0].S, args[1].S)))
		return spec.NoFault
	}
}

// substring sets dst to s, a part of the string x: x itself (with its
// arena value) when it is all of it.
func substring(dst, x *Reg, s string) {
	if len(s) == len(x.S) {
		*dst = *x
		return
	}
	*dst = String(s)
}

// format is format(fmt, args...): the checker has paired every verb with
// an argument of a type it takes.
func (m *Machine) format(dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
	vals := args[1:]
	buf, ok := printf.Append(m.buf[:0], args[0].S, m.lim.MaxString, func(buf []byte, v printf.Verb, n int) []byte {
		if n >= len(vals) {
			return buf // not a checked program
		}
		return m.appendVerb(buf, &v, &vals[n])
	})
	m.buf = buf
	if !ok {
		return spec.StringTooLong
	}
	m.newString(dst, buf)
	return spec.NoFault
}

// appendVerb appends x written by the verb v.
func (m *Machine) appendVerb(buf []byte, v *printf.Verb, x *Reg) []byte {
	switch v.Verb {
	case 'd':
		return printf.AppendInt(buf, v, x.int())
	case 'x':
		if x.K == record.Int {
			return printf.AppendInt(buf, v, x.int())
		}
		return printf.AppendHex(buf, v, x.S)
	case 'f':
		f := x.float()
		if x.K == record.Int {
			f = float64(x.int())
		}
		return printf.AppendFloat(buf, v, f)
	case 's':
		return printf.AppendString(buf, v, x.S)
	case 'q':
		return printf.AppendQuote(buf, v, x.S)
	}
	start := len(buf)
	buf = m.appendText(buf, x)
	return printf.Pad(buf, v, start)
}

// appendText appends x as to_string writes it.
func (m *Machine) appendText(buf []byte, x *Reg) []byte {
	switch x.K {
	case record.String, record.Bytes:
		return append(buf, x.S...)
	case record.Bool:
		return strconv.AppendBool(buf, x.N != 0)
	case record.Int:
		return strconv.AppendInt(buf, x.int(), 10)
	case record.Float:
		return record.AppendFloat(buf, x.float())
	case record.Timestamp:
		return time.Unix(0, x.int()).UTC().AppendFormat(buf, time.RFC3339Nano)
	case record.Map, record.Array:
		return m.a.AppendJSON(buf, x.V)
	}
	return buf // null and absent: ""
}
