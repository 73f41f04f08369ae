package difftest

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// changer is the VM with a bug: a faulted record it makes alone comes
// back edited.
type changer struct{ backend.PieceProgram }

func (c changer) Splits() bool { return true }

func (c changer) RunPieces(rec *record.Record, dst []backend.Piece) ([]backend.Piece, error) {
	start := len(dst)
	dst, err := c.PieceProgram.RunPieces(rec, dst)
	if len(dst) == start+1 && dst[start].Result.Fault != spec.NoFault {
		_ = rec.Set(record.Path{record.KeyStep("bug")}, rec.Arena().NewString([]byte("yes")))
	}
	return dst, err
}

// TestCompareSplitFault: the check that a fault leaves the record as it
// came holds for a policy with split too, where the fault comes before
// the split or at it; a fault after a split of one element may leave the
// record as the split made it.
func TestCompareSplitFault(t *testing.T) {
	const src = `policy "s"
schema {
  d: int
  xs: array<int>?
  ...
}
set .q = 10 / .d
split .xs
set .r = 10 / .xs
`
	f, info, diags := compiler.CheckFile("s.policy", []byte(src))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	vm := backend.All()[0]
	if vm.Name != "vm" {
		t.Fatalf("the first backend is %s, not the VM", vm.Name)
	}
	bug := backend.Backend{Name: "bug", Load: func(f *policy.File, info *check.Info, opts spec.Options) (backend.Program, error) {
		p, err := vm.Load(f, info, opts)
		if err != nil {
			return nil, err
		}
		return changer{p.(backend.PieceProgram)}, nil
	}}
	tests := []struct {
		line string
		want bool // a mismatch
	}{
		{`{"d":0,"xs":[1,2]}`, true}, // before the split
		{`{"d":1,"xs":"s"}`, true},   // at it
		{`{"d":1,"xs":[0]}`, false},  // after a split of one element: not held
		{`{"d":1,"xs":[1]}`, false},
	}
	for _, tt := range tests {
		err := Compare(f, info, src, []backend.Backend{bug}, [][]byte{[]byte(tt.line)})
		if got := err != nil && strings.Contains(err.Error(), "changed the record"); got != tt.want {
			t.Errorf("%s: %v, want a mismatch %v", tt.line, err, tt.want)
		}
	}
}
