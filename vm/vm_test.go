package vm

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
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
		res     spec.Result
	}{
		{`{"n":1}`, `{"n":1,"q":2}`, spec.Result{}},
		{`{"n":0}`, `{"n":0}`, spec.Result{Fault: spec.DivisionByZero}},
		{`{"n":"x"}`, `{"n":"x"}`, spec.Result{Fault: spec.TypeMismatch}},
		{`{}`, `{}`, spec.Result{Fault: spec.TypeMismatch}},
	}
	a := record.NewArena()
	var counts spec.Counts
	for _, tt := range tests {
		rec := decode(t, a, tt.in)
		res := p.Run(rec)
		counts.Add(res)
		if res != tt.res || string(rec.AppendJSON(nil)) != tt.out {
			t.Errorf("%s: got %v %s, want %v %s", tt.in, res, rec.AppendJSON(nil), tt.res, tt.out)
		}
	}
	if f := counts.Faults; f[spec.DivisionByZero] != 1 || f[spec.TypeMismatch] != 2 || counts.Runs != 4 {
		t.Errorf("counts = %+v", counts)
	}
}

func TestValidate(t *testing.T) {
	bad := []Code{
		{Instrs: []Instr{{Op: MOVE, A: 0, B: 0}}, NumRegs: 1},                                        // does not end
		{Instrs: []Instr{{Op: MOVE, A: 5, B: 0}, {Op: KEEP}}, NumRegs: 1},                            // register range
		{Instrs: []Instr{{Op: MOVE, A: 0, B: 0}, {Op: KEEP}}, NumRegs: 1, Consts: []Reg{Int(1)}},     // writes a constant
		{Instrs: []Instr{{Op: GET, A: 0, B: 3}, {Op: KEEP}}, NumRegs: 1},                             // path range
		{Instrs: []Instr{{Op: JMP, A: 9}, {Op: KEEP}}, NumRegs: 1},                                   // jump range
		{Instrs: []Instr{{Op: numOps}, {Op: KEEP}}, NumRegs: 1},                                      // opcode
		{Instrs: []Instr{{Op: CALL, A: 0, B: 0, X: uint8(builtin.Exists)}, {Op: KEEP}}, NumRegs: 1},  // no VM function
		{Instrs: []Instr{{Op: CALL, A: 0, B: 0, X: 200}, {Op: KEEP}}, NumRegs: 1},                    // no built-in
		{Instrs: []Instr{{Op: CALL, A: 0, B: 0, X: uint8(builtin.Replace)}, {Op: KEEP}}, NumRegs: 1}, // argument range
	}
	for i, c := range bad {
		if _, err := New(c); err == nil {
			t.Errorf("%d: New accepted a bad program", i)
		}
	}
}

func TestNowFixed(t *testing.T) {
	p := mustNew(t, Code{
		Instrs:  []Instr{{Op: CALL, A: 0, X: uint8(builtin.Now)}, {Op: SET, A: 0, B: 0}, {Op: KEEP}},
		NumRegs: 1,
		Paths:   []Path{{Steps: record.NewPath("t")}},
		Options: spec.Options{Clock: spec.FixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))},
	})
	m := NewMachine(p)
	a := record.NewArena()
	rec := decode(t, a, `{}`)
	m.Run(rec)
	if got := string(rec.AppendJSON(nil)); got != `{"t":"2026-01-01T00:00:00Z"}` {
		t.Errorf("got %s", got)
	}
}

// TestEveryBuiltin fails when the VM lacks a built-in that the compiler
// sends to CALL: every one but exists and coalesce, which compile to
// instructions of their own.
func TestEveryBuiltin(t *testing.T) {
	for _, f := range builtin.All() {
		special := f.ID == builtin.Exists || f.ID == builtin.Coalesce
		if (builtins[f.ID] == nil) != special {
			t.Errorf("%s: VM implementation present = %v", f.Name, builtins[f.ID] != nil)
		}
	}
}

func TestBuiltins(t *testing.T) {
	re := regexp.MustCompile(`(?P<k>\w+)=(?P<v>\w*)`)
	tests := []struct {
		fn   builtin.ID
		args []Reg
		want string // JSON of the result
	}{
		{builtin.Lower, []Reg{String("ÀB c")}, `"àb c"`},
		{builtin.Upper, []Reg{String("straße")}, `"STRAßE"`},
		{builtin.Trim, []Reg{String(" \t x\u00a0")}, `"x"`},
		{builtin.Replace, []Reg{String("aaa"), String("a"), String("bb")}, `"bbbbbb"`},
		{builtin.Replace, []Reg{String("abc"), String(""), String("x")}, `"abc"`},
		{builtin.Split, []Reg{String("a,,b"), String(",")}, `["a","","b"]`},
		{builtin.Split, []Reg{String("日本"), String("")}, `["日","本"]`},
		{builtin.Split, []Reg{String(""), String("")}, `[]`},
		{builtin.Substr, []Reg{String("hello"), Int(-3), Int(2)}, `"he"`},
		{builtin.Substr, []Reg{String("hello"), Int(4), Int(2)}, `""`},
		{builtin.ToString, []Reg{Float(2)}, `"2.0"`},
		{builtin.ToString, []Reg{Float(1e21)}, `"1e+21"`},
		{builtin.ToString, []Reg{Float(math.NaN())}, `"null"`}, // as the encoder and the Lua backend write it
		{builtin.ToString, []Reg{Null()}, `""`},
		{builtin.ToInt, []Reg{String("+12")}, `12`},
		{builtin.ToInt, []Reg{String("1 2")}, `null`},
		{builtin.ToInt, []Reg{Float(-2.9)}, `-2`},
		{builtin.ToFloat, []Reg{String("1e3")}, `1000.0`},
		{builtin.ToFloat, []Reg{String("inf")}, `null`},
		{builtin.ToBool, []Reg{Int(0)}, `false`},
		{builtin.TypeOf, []Reg{{}}, `"null"`},
		{builtin.Hash64, []Reg{String("")}, `7175771991868484`},
		{builtin.Sha256Hex, []Reg{String("abc")}, `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`},
		{builtin.ParseKV, []Reg{String("a=1, b = 2,,"), String(","), String("=")}, `{"a":"1","b":"2"}`},
		{builtin.ParseKV, []Reg{String("a=1,b"), String(","), String("=")}, `null`},
		{builtin.ParseLogfmt, []Reg{String(`a=1 b="x \"y\"" c`)}, `{"a":"1","b":"x \"y\"","c":""}`},
		{builtin.ParseLogfmt, []Reg{String(`a="x`)}, `null`},
		{builtin.ParseTime, []Reg{String("10/Oct/2023:13:55:36 -0700"), String("%d/%b/%Y:%H:%M:%S %z"), String("UTC")}, `"2023-10-10T20:55:36Z"`},
		{builtin.ParseTime, []Reg{String("2024-02-30"), String("%F"), String("UTC")}, `null`},
		{builtin.FormatTime, []Reg{Timestamp(1709211909123456789), String("%F %T.%L %j %e %I%p %a"), String("UTC")}, `"2024-02-29 13:05:09.123 060 29 01PM Thu"`},
	}
	for _, tt := range tests {
		nargs := builtin.ByID(tt.fn).ValueArgs()
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
		if res := p.Run(rec); res != (spec.Result{}) {
			t.Errorf("%s: %v", tt.fn, res)
			continue
		}
		v, _ := rec.Get(record.NewPath("r"))
		if got := string(a.AppendJSON(nil, v)); got != tt.want {
			t.Errorf("%s(%v) = %s, want %s", tt.fn, tt.args, got, tt.want)
		}
	}
}

// TestConstantsSharedInAGeneration: a constant string and an added key are
// copied into a run's arena once for the records of its generation and
// shared by them; after the arena's Reset, or in another arena, they are
// copied again (and read right).
func TestConstantsSharedInAGeneration(t *testing.T) {
	p := mustNew(t, Code{
		Name:    "t",
		Consts:  []Reg{{K: record.String, S: "prod"}},
		NumRegs: 1,
		Instrs:  []Instr{{Op: SET, A: 0, B: 0}, {Op: KEEP}},
		Paths:   []Path{{Steps: record.NewPath("env")}},
	})
	m := NewMachine(p)
	run := func(a *record.Arena) (val, key []byte) {
		rec := decode(t, a, `{"a":1}`)
		if res := m.Run(rec); res.Fault != spec.NoFault {
			t.Fatalf("fault %v", res.Fault)
		}
		if got := string(rec.AppendJSON(nil)); got != `{"a":1,"env":"prod"}` {
			t.Fatalf("got %s", got)
		}
		it := a.Iter(rec.Root())
		for it.Next() {
			key, val = a.Bytes(it.Key()), a.Bytes(it.Value())
		}
		return val, key
	}
	a, b := record.NewArena(), record.NewArena()
	// Room in the slab first, so that the bytes of one generation stay put.
	a.DecodeJSON([]byte(`{"pad":"`+strings.Repeat("x", 1<<16)+`"}`), record.Owned)
	a.Reset()
	v1, k1 := run(a)
	v2, k2 := run(a)
	if &v1[0] != &v2[0] || &k1[0] != &k2[0] {
		t.Errorf("two records of one generation hold copies of their own")
	}
	if v3, _ := run(b); &v3[0] == &v1[0] {
		t.Errorf("a record of another arena holds the first arena's bytes")
	}
	a.Reset()
	a.DecodeJSON([]byte(`{"x":"overwrites the slab where prod was"}`), record.Owned)
	run(a) // checks the output
}

func TestSet(t *testing.T) {
	var many []Reg
	for _, s := range strings.Fields("a b c d e f g h i j k") {
		many = append(many, String(s))
	}
	tests := []struct {
		set  []Reg
		x    Reg
		want bool
	}{
		{[]Reg{String("a"), String("b")}, String("b"), true},
		{[]Reg{String("a"), String("b")}, String("c"), false},
		{many, String("k"), true},
		{many, String("z"), false},
		{[]Reg{Int(1), Float(2.5)}, Float(1), true},
		{[]Reg{Int(1), Float(2.5)}, Int(2), false},
		{[]Reg{Float(2.0)}, Int(2), true},
		{[]Reg{Bool(true)}, Bool(false), false},
		{[]Reg{Null()}, Reg{}, true},
		{[]Reg{String("1")}, Int(1), false},
	}
	for i, tt := range tests {
		if got := NewSet(tt.set).Has(&tt.x); got != tt.want {
			t.Errorf("%d: Has(%s) = %v", i, regString(&tt.x), got)
		}
	}
}

func TestEditsAndDisasm(t *testing.T) {
	c := Code{
		Name:    "batch",
		Consts:  []Reg{String("x"), String("p_")},
		NumRegs: 2,
		Paths:   []Path{{Steps: record.NewPath("a")}, {Steps: record.NewPath("b")}, {Steps: record.NewPath("m")}},
		Edits:   []Instr{{Op: SET, A: 0, B: 0}, {Op: RENAME, A: 0, B: 1}, {Op: LIFT, A: 2, B: 1}},
		Instrs:  []Instr{{Op: EDITS, A: 0, B: 3}, {Op: KEEP}},
		Lines:   []int32{3, 4},
	}
	p := mustNew(t, c)
	a := record.NewArena()
	rec := decode(t, a, `{"b":0,"m":{"k":1}}`)
	if res := p.Run(rec); res != (spec.Result{}) {
		t.Fatal(res)
	}
	if got := string(rec.AppendJSON(nil)); got != `{"b":"x","p_k":1}` {
		t.Errorf("got %s", got)
	}
	var b strings.Builder
	if err := p.Disasm(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`policy "batch"`, "EDITS", "SET     p0 .a, r0", "RENAME  p0 .a, p1 .b", "; line 3", `r1    "p_"`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("disasm lacks %q:\n%s", s, b.String())
		}
	}
	c.Edits = []Instr{{Op: MOVE}}
	if _, err := New(c); err == nil {
		t.Error("New accepted a non-edit in Edits")
	}
	c.Edits, c.Instrs = nil, []Instr{{Op: EDITS, A: 0, B: 1}, {Op: KEEP}}
	if _, err := New(c); err == nil {
		t.Error("New accepted EDITS out of range")
	}
}

func TestRunBatch(t *testing.T) {
	p := mustNew(t, Code{
		Consts:  []Reg{Int(0)},
		NumRegs: 2,
		Paths:   []Path{{Steps: record.NewPath("n")}},
		Instrs: []Instr{
			{Op: GET, A: 1, B: 0},
			{Op: GUARD, A: 1, B: uint16(MaskOf(record.Int))},
			{Op: JNN, A: 4, B: 1},
			{Op: KEEP},
			{Op: DIV_INT, A: 1, B: 0, C: 1},
			{Op: DROP},
		},
	})
	a := record.NewArena()
	recs := []*record.Record{decode(t, a, `{"n":1}`), decode(t, a, `{"n":0}`), decode(t, a, `{"n":"s"}`)}
	results := make([]spec.Result, 3)
	p.RunBatch(recs, results)
	want := []spec.Result{{Action: spec.Drop}, {Fault: spec.DivisionByZero}, {Fault: spec.TypeMismatch}}
	for i := range want {
		if results[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, results[i], want[i])
		}
	}
}
