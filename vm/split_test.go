package vm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// splitProgram is, by hand: set .seen = 1; split .xs; .q = 12 / .xs
// (a fault for 0); drop when .q == 6 (no: keep .q). r0 = 1, r1 = 12,
// r2 = 6 constants; r3 the element, r4 the quotient, r5 a test.
func splitProgram(t *testing.T, lim spec.Limits) *Program {
	return mustNew(t, splitCode(lim))
}

func splitCode(lim spec.Limits) Code {
	return Code{
		Name:   "split",
		Consts: []Reg{Int(1), Int(12), Int(6)},
		Instrs: []Instr{
			{Op: SET, A: 0, B: 0},
			{Op: SPLIT, A: 1},
			{Op: GET, A: 3, B: 1},
			{Op: GUARD, A: 3, B: uint16(MaskOf(record.Int))},
			{Op: DIV_INT, A: 4, B: 1, C: 3},
			{Op: EQ_INT, A: 5, B: 4, C: 2},
			{Op: JF, A: 8, B: 5},
			{Op: DROP},
			{Op: SET, A: 2, B: 4},
			{Op: KEEP},
		},
		NumRegs: 6,
		Paths:   []Path{{Steps: record.NewPath("seen")}, {Steps: record.NewPath("xs")}, {Steps: record.NewPath("q")}},
		Options: spec.Options{Limits: lim},
	}
}

func TestRunPieces(t *testing.T) {
	p := splitProgram(t, spec.Limits{MaxSplit: 3})
	if !p.Splits() {
		t.Fatal("Splits() is false")
	}
	tests := []struct {
		in   string
		want string // each record: its result, its JSON
	}{
		{`{"xs":[1,2,3]}`, `keep {"xs":1,"seen":1,"q":12}; drop; keep {"xs":3,"seen":1,"q":4}`},
		{`{"xs":[0,4]}`, `fault (division_by_zero) {"xs":0,"seen":1}; keep {"xs":4,"seen":1,"q":3}`},
		{`{"xs":[]}`, `drop (split_empty)`},
		{`{"n":1}`, `keep {"n":1,"seen":1}`},
		{`{"xs":null}`, `keep {"seen":1}`},
		{`{"xs":"a"}`, `fault (type_mismatch) {"xs":"a"}`},
		{`{"xs":[1,1,1,1]}`, `fault (split_limit) {"xs":[1,1,1,1]}`},
		{`{"xs":["a",12]}`, `fault (type_mismatch) {"xs":"a","seen":1}; keep {"xs":12,"seen":1,"q":1}`},
	}
	a := record.NewArena()
	m := NewMachine(p)
	for _, tt := range tests {
		for _, run := range []string{"machine", "program"} {
			rec := decode(t, a, tt.in)
			var pieces []Piece
			if run == "machine" {
				pieces = m.RunPieces(rec, nil)
			} else {
				pieces = p.RunPieces(rec, nil)
			}
			if pieces[0].Rec != rec {
				t.Errorf("%s %s: the first record is not the record run", run, tt.in)
			}
			var got []string
			for _, pc := range pieces {
				s := pc.Result.String()
				if pc.Result.Kept() {
					s += " " + string(pc.Rec.AppendJSON(nil))
				}
				got = append(got, s)
			}
			if g := strings.Join(got, "; "); g != tt.want {
				t.Errorf("%s %s:\n got %s\nwant %s", run, tt.in, g, tt.want)
			}
		}
	}
	// Run makes one record: one element, or split_limit.
	for in, want := range map[string]string{
		`{"xs":[3]}`:   `keep {"xs":3,"seen":1,"q":4}`,
		`{"xs":[2,3]}`: `fault (split_limit) {"xs":[2,3]}`,
	} {
		rec := decode(t, a, in)
		res := m.Run(rec)
		if got := fmt.Sprintf("%s %s", res, rec.AppendJSON(nil)); got != want {
			t.Errorf("Run %s: got %s, want %s", in, got, want)
		}
	}
}

// TestRunPiecesAllocs: a split run allocates nothing once its Machine's
// scratch has grown (the records it makes are the arena's).
func TestRunPiecesAllocs(t *testing.T) {
	p := splitProgram(t, spec.Limits{})
	m := NewMachine(p)
	a := record.NewArena()
	var pieces []Piece
	line := []byte(`{"xs":[1,2,3,4]}`)
	run := func() {
		a.Reset()
		rec, err := a.DecodeJSON(line, record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		pieces = m.RunPieces(rec, pieces[:0])
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%v allocations a run", n)
	}
}

// BenchmarkRunPieces splits a record of four elements and runs the code
// after the split over each: ns per input record.
func BenchmarkRunPieces(b *testing.B) {
	p := mustNewB(b, splitCode(spec.Limits{}))
	m := NewMachine(p)
	a := record.NewArena()
	line := []byte(`{"xs":[1,2,3,4],"msg":"some message of a few words"}`)
	var pieces []Piece
	b.ReportAllocs()
	for i := range b.N {
		if i%256 == 0 {
			a.Reset()
		}
		rec, _ := a.DecodeJSON(line, record.Owned)
		pieces = m.RunPieces(rec, pieces[:0])
	}
}

func mustNewB(b *testing.B, c Code) *Program {
	p, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	return p
}
