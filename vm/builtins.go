package vm

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/digest"
	"github.com/policyrun/policyrun/internal/grok"
	"github.com/policyrun/policyrun/internal/kvtext"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// A builtinFunc is the VM's implementation of one built-in: CALL passes it
// the registers of its value arguments and the compiled regex (nil for
// functions without one), and it writes the result to dst.
type builtinFunc func(m *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason

// builtins are the VM's implementations, by the built-in's ID. exists and
// coalesce have none: they compile to instructions of their own (EXISTS
// and a chain of JNN), since one takes a path and the other short-circuits.
var builtins = [builtin.NumIDs]builtinFunc{
	builtin.Len: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if x := &args[0]; x.K == record.String || x.K == record.Bytes {
			*dst = Int(int64(len(x.S)))
		} else {
			*dst = Int(int64(m.a.Len(x.V)))
		}
		return spec.NoFault
	},
	builtin.Lower: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		return m.mapCase(dst, &args[0], unicode.ToLower, 'A', 'Z')
	},
	builtin.Upper: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		return m.mapCase(dst, &args[0], unicode.ToUpper, 'a', 'z')
	},
	builtin.Trim: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = String(strings.TrimSpace(args[0].S))
		return m.checkLen(dst.S)
	},
	// Written out rather than made by one closure over the test: a call
	// of a func value each record is half the cost of a short search.
	builtin.Contains: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(strings.Contains(args[0].S, args[1].S))
		return spec.NoFault
	},
	builtin.StartsWith: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(strings.HasPrefix(args[0].S, args[1].S))
		return spec.NoFault
	},
	builtin.EndsWith: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(strings.HasSuffix(args[0].S, args[1].S))
		return spec.NoFault
	},
	builtin.Replace: (*Machine).replace,
	builtin.Split: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.split(dst, args[0].S, args[1].S)
		return spec.NoFault
	},
	builtin.Join: (*Machine).join,
	builtin.Substr: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		s := args[0].S
		start, end := clamp(args[1].int(), len(s)), clamp(args[2].int(), len(s))
		if start >= end {
			*dst = String("")
		} else {
			*dst = String(s[start:end])
		}
		return spec.NoFault
	},
	builtin.Matches: func(_ *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason {
		*dst = Bool(re.MatchString(args[0].S))
		return spec.NoFault
	},
	builtin.Capture: func(m *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason {
		m.capture(dst, args[0].S, re)
		return spec.NoFault
	},
	builtin.ReplaceRe: func(m *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason {
		x := &args[0]
		out := re.ReplaceAllString(x.S, args[1].S)
		if out == x.S {
			*dst = *x
		} else {
			*dst = String(out)
		}
		return m.checkLen(out)
	},
	builtin.ToString: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		return m.toString(dst, &args[0])
	},
	builtin.ToInt:    convert(toInt),
	builtin.ToFloat:  convert(toFloat),
	builtin.ToBool:   convert(toBool),
	builtin.AsString: as(record.String),
	builtin.AsInt:    as(record.Int),
	builtin.AsFloat:  as(record.Float),
	builtin.AsBool:   as(record.Bool),
	builtin.AsMap:    as(record.Map),
	builtin.AsArray:  as(record.Array),
	builtin.IsString: is(record.String),
	builtin.IsInt:    is(record.Int),
	builtin.IsFloat:  is(record.Float),
	builtin.IsBool:   is(record.Bool),
	builtin.IsNull: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(args[0].K <= record.Null) // absent too
		return spec.NoFault
	},
	builtin.IsMap:       is(record.Map),
	builtin.IsArray:     is(record.Array),
	builtin.IsTimestamp: is(record.Timestamp),
	builtin.TypeOf: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = String(typeNames[args[0].K])
		return spec.NoFault
	},
	builtin.ParseJSON: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if v, err := m.a.DecodeJSONValue(bytesOf(args[0].S)); err != nil {
			*dst = Null()
		} else {
			dst.load(m.a, v)
		}
		return spec.NoFault
	},
	builtin.ParseKV: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.parseKV(dst, args[0].S, args[1].S, args[2].S)
		return spec.NoFault
	},
	builtin.ParseLogfmt: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		m.parseLogfmt(dst, args[0].S)
		return spec.NoFault
	},
	builtin.Now: func(m *Machine, dst *Reg, _ []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Timestamp(m.nowNanos())
		return spec.NoFault
	},
	builtin.UnixNanos: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(args[0].int())
		return spec.NoFault
	},
	builtin.Hash64: func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Int(digest.Hash64(args[0].S))
		return spec.NoFault
	},
	builtin.Sha256Hex: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		var h [64]byte
		digest.SHA256Hex(&h, bytesOf(args[0].S))
		m.newString(dst, h[:])
		return spec.NoFault
	},
	builtin.Keys: func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		a, x := m.a, &args[0]
		b := a.BeginArray(a.Len(x.V))
		if x.K == record.Map {
			for it := a.Iter(x.V); it.Next(); {
				b.Append(it.Key())
			}
		}
		*dst = Reg{K: record.Array, V: b.Finish()}
		return spec.NoFault
	},
}

var typeNames = [...]string{record.Absent: "null", record.Null: "null", record.Bool: "bool", record.Int: "int",
	record.Float: "float", record.String: "string", record.Bytes: "bytes", record.Timestamp: "timestamp",
	record.Array: "array", record.Map: "map"}

// call runs CALL in: A = X(B, B+1, ...) with C the regex, if X takes one,
// or the number of arguments, if X is variadic.
func (m *Machine) call(in Instr) spec.Reason {
	var re *regexp.Regexp
	args := m.regs[in.B:]
	switch callKinds[in.X] {
	case callRegex:
		re = m.prog.code.Regexps[in.C]
	case callVariadic:
		args = args[:in.C]
	}
	return builtins[in.X](m, &m.regs[in.A], args, re)
}

// How CALL reads its C operand, by built-in.
const (
	callPlain    = iota
	callRegex    // C is the regex
	callVariadic // C is the number of arguments
)

var callKinds [builtin.NumIDs]uint8

func callKind(x uint8) uint8 {
	if int(x) < len(callKinds) {
		return callKinds[x]
	}
	return callPlain
}

func init() {
	for _, f := range builtin.All() {
		switch {
		case f.RegexArg >= 0:
			callKinds[f.ID] = callRegex
		case f.Variadic():
			callKinds[f.ID] = callVariadic
		}
	}
}

// CallArgs is how many registers, from B on, the CALL instruction in
// passes to its built-in.
func CallArgs(in Instr) int {
	if callKind(in.X) == callVariadic {
		return int(in.C)
	}
	if f := builtin.ByID(builtin.ID(in.X)); f != nil {
		return f.ValueArgs()
	}
	return 0
}

// convert is a to_ conversion.
func convert(f func(x *Reg) Reg) builtinFunc {
	return func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = f(&args[0])
		return spec.NoFault
	}
}

// as is an as_ test: the value when it is of kind k, else null.
func as(k record.Kind) builtinFunc {
	return func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		if x := &args[0]; x.K == k {
			*dst = *x
		} else {
			*dst = Null()
		}
		return spec.NoFault
	}
}

// is is an is_ test: whether the value is of kind k.
func is(k record.Kind) builtinFunc {
	return func(_ *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(args[0].K == k)
		return spec.NoFault
	}
}

// checkLen faults string_too_long when a built string s is over the limit.
func (m *Machine) checkLen(s string) spec.Reason {
	if len(s) > m.lim.MaxString {
		return spec.StringTooLong
	}
	return spec.NoFault
}

// newString stores b in the arena as the result string.
func (m *Machine) newString(dst *Reg, b []byte) {
	v := m.a.NewString(b)
	*dst = Reg{K: record.String, S: m.a.Str(v), V: v}
}

func (m *Machine) replace(dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
	x := &args[0]
	s, old, new := x.S, args[1].S, args[2].S
	n := 0
	if old != "" {
		n = strings.Count(s, old)
	}
	if len(s)+n*(len(new)-len(old)) > m.lim.MaxString {
		return spec.StringTooLong
	}
	if n == 0 {
		*dst = *x
		return spec.NoFault
	}
	a := m.a
	a.StringBuilder().Start()
	for {
		i := strings.Index(s, old)
		if i < 0 {
			break
		}
		a.StringBuilder().WriteString(s[:i])
		a.StringBuilder().WriteString(new)
		s = s[i+len(old):]
	}
	a.StringBuilder().WriteString(s)
	m.endString(dst)
	return spec.NoFault
}

func (m *Machine) join(dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
	a, sep := m.a, args[1].S
	a.StringBuilder().Start()
	n := 0
	for it := a.Iter(args[0].V); it.Next(); {
		v := it.Value()
		if v.Kind() != record.String {
			a.StringBuilder().End()
			return spec.TypeMismatch
		}
		if it.Index() > 0 {
			a.StringBuilder().WriteString(sep)
			n += len(sep)
		}
		b := a.Bytes(v)
		n += len(b)
		if n > m.lim.MaxString {
			a.StringBuilder().End()
			return spec.StringTooLong
		}
		a.StringBuilder().WriteBytes(b)
	}
	m.endString(dst)
	return spec.NoFault
}

func clamp(i int64, n int) int {
	switch {
	case i < 0:
		return 0
	case i > int64(n):
		return n
	}
	return int(i)
}

func (m *Machine) endString(dst *Reg) {
	v := m.a.StringBuilder().End()
	*dst = Reg{K: record.String, S: m.a.Str(v), V: v}
}

// mapCase is lower and upper: ASCII strings that need no change are
// returned as they are, others are rebuilt in the arena rune by rune
// (invalid UTF-8 becoming U+FFFD, as in strings.ToLower).
func (m *Machine) mapCase(dst, x *Reg, f func(rune) rune, lo, hi byte) spec.Reason {
	s := x.S
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || lo <= c && c <= hi {
			break
		}
	}
	if len(s) > m.lim.MaxString {
		return spec.StringTooLong // the result is as long as s, or longer
	}
	if i == len(s) {
		*dst = *x
		return spec.NoFault
	}
	a := m.a
	a.StringBuilder().Start()
	a.StringBuilder().WriteString(s[:i])
	var rb [utf8.UTFMax]byte
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if lo <= c && c <= hi {
				c ^= 0x20
			}
			a.StringBuilder().WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			a.StringBuilder().WriteString("\uFFFD") // as strings.ToLower does
		} else {
			k := utf8.EncodeRune(rb[:], f(r))
			a.StringBuilder().WriteBytes(rb[:k])
		}
		i += n
	}
	m.endString(dst)
	if len(dst.S) > m.lim.MaxString {
		return spec.StringTooLong
	}
	return spec.NoFault
}

func (m *Machine) split(dst *Reg, s, sep string) {
	a := m.a
	var b record.Builder
	if sep == "" {
		b = a.BeginArray(utf8.RuneCountInString(s))
		for len(s) > 0 {
			_, n := utf8.DecodeRuneInString(s)
			b.Append(a.NewStringFrom(s[:n]))
			s = s[n:]
		}
	} else {
		b = a.BeginArray(strings.Count(s, sep) + 1)
		for {
			i := strings.Index(s, sep)
			if i < 0 {
				break
			}
			b.Append(a.NewStringFrom(s[:i]))
			s = s[i+len(sep):]
		}
		b.Append(a.NewStringFrom(s))
	}
	*dst = Reg{K: record.Array, V: b.Finish()}
}

func (m *Machine) capture(dst *Reg, s string, re *regexp.Regexp) {
	loc := re.FindStringSubmatchIndex(s)
	if loc == nil {
		*dst = Null()
		return
	}
	a := m.a
	b := a.BeginMap(re.NumSubexp())
	grok.Fields(re, s, loc, true, func(name, value string) {
		b.Add(a.NewStringFrom(name), a.NewStringFrom(value))
	})
	*dst = Reg{K: record.Map, V: b.Finish()}
}

func (m *Machine) toString(dst, x *Reg) spec.Reason {
	a := m.a
	buf := m.buf[:0]
	switch x.K {
	case record.String, record.Bytes:
		if len(x.S) > m.lim.MaxString {
			return spec.StringTooLong
		}
		*dst = Reg{K: record.String, S: x.S}
		if x.K == record.String {
			dst.V = x.V
		}
		return spec.NoFault
	case record.Absent, record.Null:
		*dst = String("")
		return spec.NoFault
	case record.Bool:
		if x.N != 0 {
			*dst = String("true")
		} else {
			*dst = String("false")
		}
		return spec.NoFault
	case record.Int:
		buf = strconv.AppendInt(buf, x.int(), 10)
	case record.Float:
		buf = record.AppendFloat(buf, x.float())
	case record.Timestamp:
		buf = time.Unix(0, x.int()).UTC().AppendFormat(buf, time.RFC3339Nano)
	case record.Map, record.Array:
		buf = a.AppendJSON(buf, x.V)
	}
	m.buf = buf
	if len(buf) > m.lim.MaxString {
		return spec.StringTooLong
	}
	v := a.NewString(buf)
	*dst = Reg{K: record.String, S: a.Str(v), V: v}
	return spec.NoFault
}

func toInt(x *Reg) Reg {
	switch x.K {
	case record.Int:
		return *x
	case record.Float:
		f := math.Trunc(x.float())
		if math.IsNaN(f) || f < -9223372036854775808 || f >= 9223372036854775808 {
			return Null()
		}
		return Int(int64(f))
	case record.String:
		if !isDecimalInt(x.S) {
			return Null()
		}
		i, err := strconv.ParseInt(x.S, 10, 64)
		if err != nil {
			return Null()
		}
		return Int(i)
	case record.Bool:
		return Int(int64(x.N))
	case record.Timestamp:
		return Int(x.int())
	}
	return Null()
}

func isDecimalInt(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func toFloat(x *Reg) Reg {
	switch x.K {
	case record.Int:
		return Float(float64(x.int()))
	case record.Float:
		return *x
	case record.String:
		if !kvtext.IsDecimal(x.S) {
			return Null()
		}
		f, err := strconv.ParseFloat(x.S, 64)
		if err != nil || math.IsInf(f, 0) {
			return Null()
		}
		return Float(f)
	case record.Bool:
		return Float(float64(x.N))
	}
	return Null()
}

func toBool(x *Reg) Reg {
	switch x.K {
	case record.Bool:
		return *x
	case record.String:
		switch x.S {
		case "true":
			return Bool(true)
		case "false":
			return Bool(false)
		}
	case record.Int:
		return Bool(x.N != 0)
	}
	return Null()
}
