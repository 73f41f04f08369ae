package compiler

import (
	"github.com/policyrun/policyrun/vm"
)

// Peephole passes over the generated code, before registers are
// renumbered.

// regRefs counts, for every register, the instructions and paths that
// read or write it.
func (g *gen) regRefs() map[reg]int {
	refs := map[reg]int{}
	for _, in := range g.code {
		k := in.Op.Operands()
		for i, v := range [3]uint16{in.A, in.B, in.C} {
			if k[i] == 'r' || k[i] == 'w' {
				refs[v]++
			}
		}
		switch in.Op {
		case vm.CALL:
			for j := 1; j < vm.CallArgs(in); j++ {
				refs[in.B+uint16(j)]++
			}
		case vm.NEXT:
			refs[in.B+1]++
		}
	}
	for _, p := range g.paths {
		for _, r := range p.Dyn {
			refs[r]++
		}
	}
	return refs
}

// inPlace reports whether op only checks or converts its register A.
func inPlace(op vm.Op) bool { return op == vm.GUARD || op == vm.WIDEN || op == vm.SNAP }

// forwardMoves removes `MOVE d, s` where s is a temporary that only the
// instructions just before it produced (and checked): they write d
// directly. Call arguments and the operands of ?? and && values are the
// usual cases.
func (g *gen) forwardMoves() {
	refs := g.regRefs()
	targets := g.jumpTargets()
	keep := make([]bool, len(g.code))
	for i := range keep {
		keep[i] = true
	}
	for k, mv := range g.code {
		if mv.Op != vm.MOVE || targets[k] {
			continue
		}
		d, s := mv.A, mv.B
		if s&constBit != 0 || s == d {
			continue
		}
		// Walk back over the in-place checks of s to its producer.
		i := k - 1
		for i >= 0 && keep[i] && inPlace(g.code[i].Op) && g.code[i].A == s && !targets[i] {
			i--
		}
		if i < 0 || !keep[i] || g.code[i].Op.Operands()[0] != 'w' || g.code[i].A != s {
			continue
		}
		if g.code[i].Op == vm.NEXT || refs[s] != k-i+1 {
			continue
		}
		if g.code[i].Op == vm.CALL && d >= g.code[i].B && d < g.code[i].B+uint16(vm.CallArgs(g.code[i])) {
			continue
		}
		if g.code[i].Op.Operands()[1] == 'r' && g.code[i].B == d || g.code[i].Op.Operands()[2] == 'r' && g.code[i].C == d {
			continue // the producer reads d's old value
		}
		for j := i; j < k; j++ {
			g.code[j].A = d
		}
		keep[k] = false
	}
	g.compact(keep)
}

// jumpTargets returns the instructions that jumps go to.
func (g *gen) jumpTargets() map[int]bool {
	targets := map[int]bool{}
	for _, in := range g.code {
		k := in.Op.Operands()
		for i, v := range [3]uint16{in.A, in.B, in.C} {
			if k[i] == 'j' {
				targets[int(v)] = true
			}
		}
	}
	return targets
}

// compact drops the instructions not kept and moves jump targets along.
func (g *gen) compact(keep []bool) {
	newIdx := make([]uint16, len(g.code)+1)
	var code []vm.Instr
	var lines []srcLine
	for i, in := range g.code {
		newIdx[i] = uint16(len(code))
		if keep[i] {
			code = append(code, in)
			lines = append(lines, g.lines[i])
		}
	}
	newIdx[len(g.code)] = uint16(len(code))
	retarget(code, newIdx)
	g.code, g.lines = code, lines
}

// retarget moves the jump operands of code to where the instructions they
// went to now are: old index i is new index newIdx[i], and newIdx has one
// entry more than the old code, for a jump to its end. compact and
// batchEdits rewrite the code this way.
func retarget(code []vm.Instr, newIdx []uint16) {
	for i := range code {
		in := &code[i]
		k := in.Op.Operands()
		if k[0] == 'j' {
			in.A = newIdx[in.A]
		}
		if k[1] == 'j' {
			in.B = newIdx[in.B]
		}
		if k[2] == 'j' {
			in.C = newIdx[in.C]
		}
	}
}

// fuseGuards turns a GET followed by a GUARD of the register it loaded
// into one GETG: one dispatch fewer on most reads of the record.
func (g *gen) fuseGuards() {
	targets := g.jumpTargets()
	keep := make([]bool, len(g.code))
	for i := range keep {
		keep[i] = true
	}
	fused := false
	for i := 0; i+1 < len(g.code); i++ {
		get, guard := &g.code[i], g.code[i+1]
		if get.Op != vm.GET || guard.Op != vm.GUARD || guard.A != get.A || targets[i+1] {
			continue
		}
		get.Op, get.C = vm.GETG, guard.B
		keep[i+1] = false
		fused = true
		i++
	}
	if fused {
		g.compact(keep)
	}
}
