package vm

import (
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/policyrun/policyrun/record"
)

// Programs are assembled by hand here; compiler tests cover the lowering.

func decode(t *testing.T, a *record.Arena, s string) *record.Record {
	t.Helper()
	rec, err := a.DecodeJSON([]byte(s), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func mustNew(t *testing.T, c Code) *Program {
	t.Helper()
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunSetAndFault(t *testing.T) {
	// r0 = 1 (const), r1 = .n; GUARD int; r2 = r1 / r0 ... then .q = r2
	p := mustNew(t, Code{
		Name:   "t",
		Consts: []Reg{Int(2)},
		Instrs: []Instr{
			{Op: GET, A: 1, B: 0},
			{Op: GUARD, A: 1, B: uint16(MaskOf(record.Int))},
			{Op: DIV_INT, A: 2, B: 0, C: 1},
			{Op: SET, A: 1, B: 2},
			{Op: KEEP},
		},
		NumRegs: 3,
		Paths:   []Path{{Steps: record.NewPath("n")}, {Steps: record.NewPath("q")}},
	})
	tests := []struct {
		in, out string
		res     Result
	}{
		{`{"n":1}`, `{"n":1,"q":2}`, Result{}},
		{`{"n":0}`, `{"n":0}`, Result{Fault: DivisionByZero}},
		{`{"n":"x"}`, `{"n":"x"}`, Result{Fault: TypeMismatch}},
		{`{}`, `{}`, Result{Fault: TypeMismatch}},
	}
	a := record.NewArena()
	for _, tt := range tests {
		rec := decode(t, a, tt.in)
		res := p.Run(rec)
		if res != tt.res || string(rec.AppendJSON(nil)) != tt.out {
			t.Errorf("%s: got %v %s, want %v %s", tt.in, res, rec.AppendJSON(nil), tt.res, tt.out)
		}
	}
	if f := p.Faults(); f[DivisionByZero] != 1 || f[TypeMismatch] != 2 {
		t.Errorf("faults = %v", f)
	}
}

func TestValidate(t *testing.T) {
	bad := []Code{
		{Instrs: []Instr{{Op: MOVE, A: 0, B: 0}}, NumRegs: 1},                                    // does not end
		{Instrs: []Instr{{Op: MOVE, A: 5, B: 0}, {Op: KEEP}}, NumRegs: 1},                        // register range
		{Instrs: []Instr{{Op: MOVE, A: 0, B: 0}, {Op: KEEP}}, NumRegs: 1, Consts: []Reg{Int(1)}}, // writes a constant
		{Instrs: []Instr{{Op: GET, A: 0, B: 3}, {Op: KEEP}}, NumRegs: 1},                         // path range
		{Instrs: []Instr{{Op: JMP, A: 9}, {Op: KEEP}}, NumRegs: 1},                               // jump range
		{Instrs: []Instr{{Op: numOps}, {Op: KEEP}}, NumRegs: 1},                                  // opcode
	}
	for i, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("%d: New accepted a bad program", i)
		}
	}
}

func TestNowFixed(t *testing.T) {
	p := mustNew(t, Code{
		Instrs:  []Instr{{Op: NOW, A: 0}, {Op: SET, A: 0, B: 0}, {Op: KEEP}},
		NumRegs: 1,
		Paths:   []Path{{Steps: record.NewPath("t")}},
	})
	m := NewMachine(p)
	m.SetNow(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	a := record.NewArena()
	rec := decode(t, a, `{}`)
	m.Run(rec)
	if got := string(rec.AppendJSON(nil)); got != `{"t":"2026-01-01T00:00:00Z"}` {
		t.Errorf("got %s", got)
	}
}

func TestBuiltins(t *testing.T) {
	re := regexp.MustCompile(`(?P<k>\w+)=(?P<v>\w*)`)
	tests := []struct {
		fn   Fn
		args []Reg
		want string // JSON of the result
	}{
		{FnLower, []Reg{String("ÀB c")}, `"àb c"`},
		{FnUpper, []Reg{String("straße")}, `"STRAßE"`},
		{FnTrim, []Reg{String(" \t x\u00a0")}, `"x"`},
		{FnReplace, []Reg{String("aaa"), String("a"), String("bb")}, `"bbbbbb"`},
		{FnReplace, []Reg{String("abc"), String(""), String("x")}, `"abc"`},
		{FnSplit, []Reg{String("a,,b"), String(",")}, `["a","","b"]`},
		{FnSplit, []Reg{String("日本"), String("")}, `["日","本"]`},
		{FnSplit, []Reg{String(""), String("")}, `[]`},
		{FnSubstr, []Reg{String("hello"), Int(-3), Int(2)}, `"he"`},
		{FnSubstr, []Reg{String("hello"), Int(4), Int(2)}, `""`},
		{FnToString, []Reg{Float(2)}, `"2.0"`},
		{FnToString, []Reg{Float(1e21)}, `"1e+21"`},
		{FnToString, []Reg{Float(math.NaN())}, `"null"`}, // as the encoder and the Lua backend write it
		{FnToString, []Reg{Null()}, `""`},
		{FnToInt, []Reg{String("+12")}, `12`},
		{FnToInt, []Reg{String("1 2")}, `null`},
		{FnToInt, []Reg{Float(-2.9)}, `-2`},
		{FnToFloat, []Reg{String("1e3")}, `1000.0`},
		{FnToFloat, []Reg{String("inf")}, `null`},
		{FnToBool, []Reg{Int(0)}, `false`},
		{FnTypeOf, []Reg{{}}, `"null"`},
		{FnHash64, []Reg{String("")}, `7175771991868484`},
		{FnSha256Hex, []Reg{String("abc")}, `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`},
		{FnParseKV, []Reg{String("a=1, b = 2,,"), String(","), String("=")}, `{"a":"1","b":"2"}`},
		{FnParseKV, []Reg{String("a=1,b"), String(","), String("=")}, `null`},
		{FnParseLogfmt, []Reg{String(`a=1 b="x \"y\"" c`)}, `{"a":"1","b":"x \"y\"","c":""}`},
		{FnParseLogfmt, []Reg{String(`a="x`)}, `null`},
		{FnParseTime, []Reg{String("10/Oct/2023:13:55:36 -0700"), String("%d/%b/%Y:%H:%M:%S %z")}, `"2023-10-10T20:55:36Z"`},
		{FnParseTime, []Reg{String("2024-02-30"), String("%F")}, `null`},
		{FnFormatTime, []Reg{Timestamp(1709211909123456789), String("%F %T.%L %j %e %I%p %a")}, `"2024-02-29 13:05:09.123 060 29 01PM Thu"`},
	}
	for _, tt := range tests {
		nargs := tt.fn.NumArgs()
		c := Code{
			Consts:  tt.args,
			NumRegs: len(tt.args) + 1,
			Instrs:  []Instr{{Op: CALL, A: uint16(len(tt.args)), B: 0, X: uint8(tt.fn)}, {Op: SET, A: 0, B: uint16(len(tt.args))}, {Op: KEEP}},
			Paths:   []Path{{Steps: record.NewPath("r")}},
			Regexps: []*regexp.Regexp{re},
		}
		if nargs != len(tt.args) {
			t.Fatalf("%s: %d args, takes %d", tt.fn, len(tt.args), nargs)
		}
		p := mustNew(t, c)
		a := record.NewArena()
		rec := decode(t, a, `{}`)
		if res := p.Run(rec); res != (Result{}) {
			t.Errorf("%s: %v", tt.fn, res)
			continue
		}
		v, _ := rec.Get(record.NewPath("r"))
		if got := string(a.AppendJSON(nil, v)); got != tt.want {
			t.Errorf("%s(%v) = %s, want %s", tt.fn, tt.args, got, tt.want)
		}
	}
}
