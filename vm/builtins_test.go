package vm

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// callOne runs the built-in fn over args (re its regex, if it takes one)
// and returns the result as JSON, or the fault.
func callOne(t *testing.T, fn builtin.ID, re *regexp.Regexp, args ...Reg) (string, spec.Reason) {
	t.Helper()
	in := Instr{Op: CALL, A: uint16(len(args)), B: 0, X: uint8(fn)}
	if builtin.ByID(fn).Variadic() {
		in.C = uint16(len(args))
	} else if n := builtin.ByID(fn).ValueArgs(); n != len(args) {
		t.Fatalf("%s: %d args, takes %d", fn, len(args), n)
	}
	c := Code{
		Consts:  args,
		NumRegs: len(args) + 1,
		Instrs:  []Instr{in, {Op: SET, A: 0, B: uint16(len(args))}, {Op: KEEP}},
		Paths:   []Path{{Steps: record.NewPath("r")}},
	}
	if re != nil {
		c.Regexps = []*regexp.Regexp{re}
	}
	p := mustNew(t, c)
	a := record.NewArena()
	rec := decode(t, a, `{}`)
	if res := p.Run(rec); res.Fault != spec.NoFault {
		return "", res.Fault
	}
	v, _ := rec.Get(record.NewPath("r"))
	return string(a.AppendJSON(nil, v)), spec.NoFault
}

// callCase is a call of built-in fn with args and the JSON of its result.
type callCase struct {
	fn   builtin.ID
	args []Reg
	want string
}

// checkCalls makes each call of tests and wants its result, no fault.
func checkCalls(t *testing.T, tests []callCase) {
	t.Helper()
	for _, tt := range tests {
		got, r := callOne(t, tt.fn, nil, tt.args...)
		if r != spec.NoFault || got != tt.want {
			t.Errorf("%s(%v) = %s %v, want %s", tt.fn, tt.args, got, r, tt.want)
		}
	}
}

func TestBuiltinsTime(t *testing.T) {
	tests := []callCase{
		{builtin.ParseTime, []Reg{String("2026-07-01 14:00"), String("%Y-%m-%d %H:%M"), String("Europe/Paris")}, `"2026-07-01T12:00:00Z"`},
		{builtin.FormatTime, []Reg{Timestamp(0), String("%F %T %Z %z"), String("Asia/Kolkata")}, `"1970-01-01 05:30:00 IST +0530"`},
		{builtin.UnixSeconds, []Reg{Timestamp(-1)}, `-1`},
		{builtin.UnixSeconds, []Reg{Timestamp(1999999999)}, `1`},
		{builtin.UnixMillis, []Reg{Timestamp(-1)}, `-1`},
		{builtin.UnixMillis, []Reg{Timestamp(1999999)}, `1`},
		{builtin.FromUnix, []Reg{Int(2), String("s")}, `"1970-01-01T00:00:02Z"`},
		{builtin.FromUnix, []Reg{Int(math.MaxInt64), String("ms")}, `"2262-04-11T23:47:16.854775807Z"`},
		{builtin.FromUnix, []Reg{Int(math.MinInt64), String("ns")}, `"1677-09-21T00:12:43.145224192Z"`},
		{builtin.FromUnix, []Reg{Float(-0.5), String("s")}, `"1969-12-31T23:59:59.5Z"`},
		{builtin.FromUnix, []Reg{Float(9223372036.5), String("s")}, `"2262-04-11T23:47:16.5Z"`},
		{builtin.FromUnix, []Reg{Float(9.3e9), String("s")}, `"2262-04-11T23:47:16.854775807Z"`},
		{builtin.ParseDuration, []Reg{String("1m30s")}, `90000000000`},
		{builtin.ParseDuration, []Reg{String("1")}, `null`},
	}
	checkCalls(t, tests)
}

func TestBuiltinsStrings(t *testing.T) {
	tests := []callCase{
		{builtin.Format, []Reg{String("%s=%d %.1f %x %q %v %v%%"), String("k"), Int(-3), Float(2.25), String("hi"), String("a\tb"), Float(2), Null()}, `"k=-3 2.2 6869 \"a\\tb\" 2.0 %"`},
		{builtin.Format, []Reg{String("no verbs")}, `"no verbs"`},
		{builtin.Format, []Reg{String("%5v|%-4v|"), Bool(true), Int(7)}, `" true|7   |"`},
		{builtin.Truncate, []Reg{String("héllo"), Int(2)}, `"h"`},
		{builtin.TrimPrefix, []Reg{String("abab"), String("ab")}, `"ab"`},
		{builtin.TrimSuffix, []Reg{String("abab"), String("b")}, `"aba"`},
		{builtin.IndexOf, []Reg{String("héllo"), String("l")}, `3`},
		{builtin.IndexOf, []Reg{String("abc"), String("z")}, `-1`},
	}
	checkCalls(t, tests)
}

func TestBuiltinsNumbers(t *testing.T) {
	tests := []callCase{
		{builtin.Round, []Reg{Float(0.5), Int(0)}, `1.0`},
		{builtin.Round, []Reg{Float(-0.5), Int(0)}, `-1.0`},
		{builtin.Round, []Reg{Int(15), Int(-1)}, `20.0`},
		{builtin.Round, []Reg{Float(1e-320), Int(400)}, `1e-320`},
		{builtin.Round, []Reg{Float(123.456), Int(-400)}, `0.0`},
		{builtin.Floor, []Reg{Float(-0.5)}, `-1`},
		{builtin.Floor, []Reg{Float(-1e300)}, `-9223372036854775808`},
		{builtin.Ceil, []Reg{Float(-0.5)}, `0`},
		{builtin.Abs, []Reg{Int(math.MinInt64)}, `-9223372036854775808`},
		{builtin.Abs, []Reg{Float(-2)}, `2.0`},
		{builtin.Min, []Reg{Int(2), Float(1.5)}, `1.5`},
		{builtin.Max, []Reg{Int(2), Int(-5)}, `2`},
	}
	checkCalls(t, tests)
	if _, r := callOne(t, builtin.Round, nil, Float(1.7e308), Int(-308)); r != spec.NonFinite {
		t.Errorf("round(1.7e308, -308): %v, want non_finite", r)
	}
}

func TestSeverityNumber(t *testing.T) {
	for s, want := range map[string]int64{"T": 1, "t": 1, "D": 5, "I": 9, "W": 13, "E": 17, "F": 21, "TRACE": 1, "Informational": 9,
		"notice": 10, "Warning": 13, "ERR": 17, "crit": 18, "alert": 19, "EMERG": 21, "panic": 21, "x": 0, "": 0, "informationalx": 0, "C": 0} {
		got, _ := callOne(t, builtin.SeverityNumber, nil, String(s))
		if got != strconv.FormatInt(want, 10) {
			t.Errorf("severity_number(%q) = %s, want %d", s, got, want)
		}
	}
}

// TestLongStrings: every built-in whose result is a string over 1 MiB
// faults with string_too_long, even when it returns its input unchanged.
func TestLongStrings(t *testing.T) {
	long := strings.Repeat("a", spec.DefaultLimits.MaxString+1)
	for _, tt := range []struct {
		fn   builtin.ID
		args []Reg
	}{
		{builtin.Lower, []Reg{String(long)}},
		{builtin.Upper, []Reg{String(strings.ToUpper(long))}},
		{builtin.Trim, []Reg{String(long)}},
		{builtin.Replace, []Reg{String(long), String("x"), String("y")}},
		{builtin.Replace, []Reg{String(long[1:]), String("a"), String("aa")}},
		{builtin.ToString, []Reg{String(long)}},
	} {
		p := mustNew(t, Code{
			Consts:  tt.args,
			NumRegs: len(tt.args) + 1,
			Instrs:  []Instr{{Op: CALL, A: uint16(len(tt.args)), B: 0, X: uint8(tt.fn)}, {Op: KEEP}},
		})
		a := record.NewArena()
		if res := p.Run(decode(t, a, `{}`)); res.Fault != spec.StringTooLong {
			t.Errorf("%s: %v, want string_too_long", tt.fn, res)
		}
	}
}
