package compiler

import (
	"reflect"
	"testing"

	"github.com/policyrun/policyrun/vm"
)

func TestRetarget(t *testing.T) {
	// Old code of 5 instructions; 1 and 3 were dropped: 0 1 2 3 4 end
	// became 0 1 1 2 2 3.
	newIdx := []uint16{0, 1, 1, 2, 2, 3}
	tests := []struct {
		name    string
		in, out vm.Instr
	}{
		{"JMP moves A", vm.Instr{Op: vm.JMP, A: 4}, vm.Instr{Op: vm.JMP, A: 2}},
		{"JMP to a dropped instruction goes to the next kept one", vm.Instr{Op: vm.JMP, A: 3}, vm.Instr{Op: vm.JMP, A: 2}},
		{"JMP to the end", vm.Instr{Op: vm.JMP, A: 5}, vm.Instr{Op: vm.JMP, A: 3}},
		{"JT moves A, not its register B", vm.Instr{Op: vm.JT, A: 2, B: 4}, vm.Instr{Op: vm.JT, A: 1, B: 4}},
		{"JNN", vm.Instr{Op: vm.JNN, A: 5, B: 5}, vm.Instr{Op: vm.JNN, A: 3, B: 5}},
		{"NEXT moves C only", vm.Instr{Op: vm.NEXT, A: 3, B: 4, C: 4}, vm.Instr{Op: vm.NEXT, A: 3, B: 4, C: 2}},
		{"MOVE has no jump", vm.Instr{Op: vm.MOVE, A: 4, B: 5}, vm.Instr{Op: vm.MOVE, A: 4, B: 5}},
	}
	for _, tt := range tests {
		code := []vm.Instr{tt.in, {Op: vm.KEEP}}
		retarget(code, newIdx)
		if want := []vm.Instr{tt.out, {Op: vm.KEEP}}; !reflect.DeepEqual(code, want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, code, want)
		}
	}
}
