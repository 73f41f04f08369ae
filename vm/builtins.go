package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/policyrun/policyrun/internal/hash64"
	"github.com/policyrun/policyrun/internal/kvtext"
	"github.com/policyrun/policyrun/internal/strftime"
	"github.com/policyrun/policyrun/record"
)

// Fn is a built-in function the CALL instruction runs. exists, coalesce and
// now are instructions of their own (EXISTS, JNN chains, NOW).
type Fn uint8

const (
	FnLen Fn = iota
	FnLower
	FnUpper
	FnTrim
	FnContains
	FnStartsWith
	FnEndsWith
	FnReplace
	FnSplit
	FnJoin
	FnSubstr
	FnMatches
	FnCapture
	FnReplaceRe
	FnToString
	FnToInt
	FnToFloat
	FnToBool
	FnAsString
	FnAsInt
	FnAsFloat
	FnAsBool
	FnAsMap
	FnAsArray
	FnIsString
	FnIsInt
	FnIsFloat
	FnIsBool
	FnIsNull
	FnIsMap
	FnIsArray
	FnIsTimestamp
	FnTypeOf
	FnParseJSON
	FnParseKV
	FnParseLogfmt
	FnParseTime
	FnFormatTime
	FnUnixNanos
	FnHash64
	FnSha256Hex
	FnKeys
	numFns
)

type fnInfo struct {
	name  string
	nargs int
	regex bool // the second argument is a compiled regex (CALL's C)
}

var fns = [numFns]fnInfo{
	FnLen: {"len", 1, false}, FnLower: {"lower", 1, false}, FnUpper: {"upper", 1, false},
	FnTrim: {"trim", 1, false}, FnContains: {"contains", 2, false}, FnStartsWith: {"starts_with", 2, false},
	FnEndsWith: {"ends_with", 2, false}, FnReplace: {"replace", 3, false}, FnSplit: {"split", 2, false},
	FnJoin: {"join", 2, false}, FnSubstr: {"substr", 3, false},
	FnMatches: {"matches", 1, true}, FnCapture: {"capture", 1, true}, FnReplaceRe: {"replace_re", 2, true},
	FnToString: {"to_string", 1, false}, FnToInt: {"to_int", 1, false}, FnToFloat: {"to_float", 1, false},
	FnToBool: {"to_bool", 1, false}, FnAsString: {"as_string", 1, false}, FnAsInt: {"as_int", 1, false},
	FnAsFloat: {"as_float", 1, false}, FnAsBool: {"as_bool", 1, false}, FnAsMap: {"as_map", 1, false},
	FnAsArray: {"as_array", 1, false}, FnIsString: {"is_string", 1, false}, FnIsInt: {"is_int", 1, false},
	FnIsFloat: {"is_float", 1, false}, FnIsBool: {"is_bool", 1, false}, FnIsNull: {"is_null", 1, false},
	FnIsMap: {"is_map", 1, false}, FnIsArray: {"is_array", 1, false}, FnIsTimestamp: {"is_timestamp", 1, false},
	FnTypeOf: {"type_of", 1, false}, FnParseJSON: {"parse_json", 1, false}, FnParseKV: {"parse_kv", 3, false},
	FnParseLogfmt: {"parse_logfmt", 1, false}, FnParseTime: {"parse_time", 2, false},
	FnFormatTime: {"format_time", 2, false}, FnUnixNanos: {"unix_nanos", 1, false},
	FnHash64: {"hash64", 1, false}, FnSha256Hex: {"sha256_hex", 1, false}, FnKeys: {"keys", 1, false},
}

func (f Fn) String() string {
	if f < numFns {
		return fns[f].name
	}
	return "fn(" + strconv.Itoa(int(f)) + ")"
}

// NumArgs is the number of register arguments CALL passes to f (a regex
// argument is not one: it is CALL's C operand).
func (f Fn) NumArgs() int { return fns[f].nargs }

// TakesRegex reports whether f's pattern is a compiled regex operand.
func (f Fn) TakesRegex() bool { return fns[f].regex }

// FnByName returns the function called name.
func FnByName(name string) (Fn, bool) {
	for i, f := range fns {
		if f.name == name {
			return Fn(i), true
		}
	}
	return 0, false
}

var typeNames = [...]string{record.Absent: "null", record.Null: "null", record.Bool: "bool", record.Int: "int",
	record.Float: "float", record.String: "string", record.Bytes: "bytes", record.Timestamp: "timestamp",
	record.Array: "array", record.Map: "map"}

// call runs CALL in.
func (m *Machine) call(in Instr) Reason {
	a := m.a
	args := m.regs[in.B:]
	dst := &m.regs[in.A]
	x := &args[0]
	switch Fn(in.X) {
	case FnLen:
		if x.K == record.String || x.K == record.Bytes {
			*dst = Int(int64(len(x.S)))
		} else {
			*dst = Int(int64(a.Len(x.V)))
		}
	case FnLower:
		return m.mapCase(dst, x, unicode.ToLower, 'A', 'Z')
	case FnUpper:
		return m.mapCase(dst, x, unicode.ToUpper, 'a', 'z')
	case FnTrim:
		*dst = String(strings.TrimSpace(x.S))
		if len(dst.S) > MaxString {
			return StringTooLong
		}
	case FnContains:
		*dst = Bool(strings.Contains(x.S, args[1].S))
	case FnStartsWith:
		*dst = Bool(strings.HasPrefix(x.S, args[1].S))
	case FnEndsWith:
		*dst = Bool(strings.HasSuffix(x.S, args[1].S))
	case FnReplace:
		s, old, new := x.S, args[1].S, args[2].S
		n := 0
		if old != "" {
			n = strings.Count(s, old)
		}
		if len(s)+n*(len(new)-len(old)) > MaxString {
			return StringTooLong
		}
		if n == 0 {
			*dst = *x
			return NoFault
		}
		a.StartString()
		for {
			i := strings.Index(s, old)
			if i < 0 {
				break
			}
			a.WriteString(s[:i])
			a.WriteString(new)
			s = s[i+len(old):]
		}
		a.WriteString(s)
		m.endString(dst)
	case FnSplit:
		m.split(dst, x.S, args[1].S)
	case FnJoin:
		sep := args[1].S
		a.StartString()
		n := 0
		for it := a.Iter(x.V); it.Next(); {
			v := it.Value()
			if v.Kind() != record.String {
				a.EndString()
				return TypeMismatch
			}
			if it.Index() > 0 {
				a.WriteString(sep)
				n += len(sep)
			}
			b := a.Bytes(v)
			n += len(b)
			if n > MaxString {
				a.EndString()
				return StringTooLong
			}
			a.WriteBytes(b)
		}
		m.endString(dst)
	case FnSubstr:
		s := x.S
		start, end := clamp(args[1].int(), len(s)), clamp(args[2].int(), len(s))
		if start >= end {
			*dst = String("")
		} else {
			*dst = String(s[start:end])
		}
	case FnMatches:
		*dst = Bool(m.prog.code.Regexps[in.C].MatchString(x.S))
	case FnCapture:
		m.capture(dst, x.S, m.prog.code.Regexps[in.C])
	case FnReplaceRe:
		out := m.prog.code.Regexps[in.C].ReplaceAllString(x.S, args[1].S)
		if len(out) > MaxString {
			return StringTooLong
		}
		if out == x.S {
			*dst = *x
		} else {
			*dst = String(out)
		}
	case FnToString:
		return m.toString(dst, x)
	case FnToInt:
		*dst = toInt(x)
	case FnToFloat:
		*dst = toFloat(x)
	case FnToBool:
		*dst = toBool(x)
	case FnAsString:
		m.as(dst, x, record.String)
	case FnAsInt:
		m.as(dst, x, record.Int)
	case FnAsFloat:
		m.as(dst, x, record.Float)
	case FnAsBool:
		m.as(dst, x, record.Bool)
	case FnAsMap:
		m.as(dst, x, record.Map)
	case FnAsArray:
		m.as(dst, x, record.Array)
	case FnIsString:
		*dst = Bool(x.K == record.String)
	case FnIsInt:
		*dst = Bool(x.K == record.Int)
	case FnIsFloat:
		*dst = Bool(x.K == record.Float)
	case FnIsBool:
		*dst = Bool(x.K == record.Bool)
	case FnIsNull:
		*dst = Bool(x.K <= record.Null)
	case FnIsMap:
		*dst = Bool(x.K == record.Map)
	case FnIsArray:
		*dst = Bool(x.K == record.Array)
	case FnIsTimestamp:
		*dst = Bool(x.K == record.Timestamp)
	case FnTypeOf:
		*dst = String(typeNames[x.K])
	case FnParseJSON:
		v, err := a.DecodeJSONValue(bytesOf(x.S))
		if err != nil {
			*dst = Null()
		} else {
			dst.load(a, v)
		}
	case FnParseKV:
		m.parseKV(dst, x.S, args[1].S, args[2].S)
	case FnParseLogfmt:
		m.parseLogfmt(dst, x.S)
	case FnParseTime:
		if ns, ok := strftime.Parse(x.S, args[1].S); ok {
			*dst = Timestamp(ns)
		} else {
			*dst = Null()
		}
	case FnFormatTime:
		m.buf = strftime.AppendFormat(m.buf[:0], x.int(), args[1].S)
		if len(m.buf) > MaxString {
			return StringTooLong
		}
		v := a.NewString(m.buf)
		*dst = Reg{K: record.String, S: a.Str(v), V: v}
	case FnUnixNanos:
		*dst = Int(x.int())
	case FnHash64:
		*dst = Int(hash64.Sum(x.S))
	case FnSha256Hex:
		sum := sha256.Sum256(bytesOf(x.S))
		var h [64]byte
		hex.Encode(h[:], sum[:])
		v := a.NewString(h[:])
		*dst = Reg{K: record.String, S: a.Str(v), V: v}
	case FnKeys:
		b := a.BeginArray(a.Len(x.V))
		if x.K == record.Map {
			for it := a.Iter(x.V); it.Next(); {
				b.Append(it.Key())
			}
		}
		*dst = Reg{K: record.Array, V: b.Finish()}
	}
	return NoFault
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
	v := m.a.EndString()
	*dst = Reg{K: record.String, S: m.a.Str(v), V: v}
}

func (m *Machine) as(dst, x *Reg, k record.Kind) {
	if x.K == k {
		*dst = *x
	} else {
		*dst = Null()
	}
}

// mapCase is lower and upper: ASCII strings that need no change are
// returned as they are, others are rebuilt in the arena rune by rune
// (invalid UTF-8 becoming U+FFFD, as in strings.ToLower).
func (m *Machine) mapCase(dst, x *Reg, f func(rune) rune, lo, hi byte) Reason {
	s := x.S
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || lo <= c && c <= hi {
			break
		}
	}
	if len(s) > MaxString {
		return StringTooLong // the result is as long as s, or longer
	}
	if i == len(s) {
		*dst = *x
		return NoFault
	}
	a := m.a
	a.StartString()
	a.WriteString(s[:i])
	var rb [utf8.UTFMax]byte
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if lo <= c && c <= hi {
				c ^= 0x20
			}
			a.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			a.WriteString("\uFFFD") // as strings.ToLower does
		} else {
			k := utf8.EncodeRune(rb[:], f(r))
			a.WriteBytes(rb[:k])
		}
		i += n
	}
	m.endString(dst)
	if len(dst.S) > MaxString {
		return StringTooLong
	}
	return NoFault
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
	names := re.SubexpNames()
	b := a.BeginMap(len(names))
	for i, name := range names {
		if i == 0 || name == "" {
			continue
		}
		v := ""
		if loc[2*i] >= 0 {
			v = s[loc[2*i]:loc[2*i+1]]
		}
		b.Add(a.NewStringFrom(name), a.NewStringFrom(v))
	}
	*dst = Reg{K: record.Map, V: b.Finish()}
}

func (m *Machine) toString(dst, x *Reg) Reason {
	a := m.a
	buf := m.buf[:0]
	switch x.K {
	case record.String, record.Bytes:
		if len(x.S) > MaxString {
			return StringTooLong
		}
		*dst = Reg{K: record.String, S: x.S}
		if x.K == record.String {
			dst.V = x.V
		}
		return NoFault
	case record.Absent, record.Null:
		*dst = String("")
		return NoFault
	case record.Bool:
		if x.N != 0 {
			*dst = String("true")
		} else {
			*dst = String("false")
		}
		return NoFault
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
	if len(buf) > MaxString {
		return StringTooLong
	}
	v := a.NewString(buf)
	*dst = Reg{K: record.String, S: a.Str(v), V: v}
	return NoFault
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
