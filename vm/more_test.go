package vm

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

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
