package compiler

import "github.com/policyrun/policyrun/vm"

// Edits sink to the next edit. `set .x = .a > 1` after a run of edits
// reads .a between them and its own set, which parts the runs: two EDITS
// dispatches, and two passes over the record's edits, where one would do.
// When the edits before the read are of keys of the root map — set, set
// if absent, removed or renamed, none of which can fault (the root is
// always a map) — and the instructions up to the next edit only compute
// from the record and registers (no jump, call, builder, loop or edit),
// reading none of the keys those edits write and writing none of the
// registers they store, the edits move down to the next one. No result
// changes:
//
//   - the moved instructions see the record as before: they read no key
//     the edits change;
//   - the edits store the same registers, which nothing in between
//     writes;
//   - a fault in between discards the run's edits either way, and is the
//     same fault at the same line.
//
// Calls stay where they are: a call's memory_limit check counts what the
// run has built so far, edits included.

// sinkEdits moves runs of root-key edits past the computations that
// follow them, when an edit follows those, so that batchEdits joins the
// two runs. One pass: edits are held back, and the computations after
// them with them, until the next edit (the computations go ahead) or
// anything else (all goes out in its order).
func (g *gen) sinkEdits() {
	targets := g.jumpTargets()
	newIdx := make([]uint16, len(g.code)+1)
	code := make([]vm.Instr, 0, len(g.code))
	lines := make([]srcLine, 0, len(g.lines))
	var edits, comps []int // held back, by old index
	entry := -1            // where a jump to the first edit held lands, once computations went ahead
	keys, regs := map[string]bool{}, map[uint16]bool{}
	emit := func(held []int) {
		for _, i := range held {
			newIdx[i] = uint16(len(code))
			code, lines = append(code, g.code[i]), append(lines, g.lines[i])
		}
	}
	// flush writes what is held in its order.
	flush := func() {
		emit(edits)
		if entry >= 0 {
			newIdx[edits[0]] = uint16(entry)
		}
		emit(comps)
		edits, comps, entry = edits[:0], comps[:0], -1
		clear(keys)
		clear(regs)
	}
	for i, in := range g.code {
		if targets[i] {
			flush()
		}
		switch {
		case g.rootEdit(in):
			if len(comps) > 0 {
				// The computations go ahead of the edits held; a jump
				// to the first edit lands on them.
				if entry < 0 {
					entry = len(code)
				}
				emit(comps)
				comps = comps[:0]
			}
			edits = append(edits, i)
			g.editTouches(in, keys, regs)
			continue
		case len(edits) > 0 && g.computes(in, keys, regs):
			comps = append(comps, i)
			continue
		}
		flush()
		newIdx[i] = uint16(len(code))
		code, lines = append(code, in), append(lines, g.lines[i])
	}
	flush()
	newIdx[len(g.code)] = uint16(len(code))
	retarget(code, newIdx)
	g.code, g.lines = code, lines
}

// rootEdit reports whether in edits one key of the root map (static)
// in a way that cannot fault.
func (g *gen) rootEdit(in vm.Instr) bool {
	switch in.Op {
	case vm.SET, vm.SETQ, vm.REMOVE:
		return g.rootKey(in.A) != ""
	case vm.RENAME:
		return g.rootKey(in.A) != "" && g.rootKey(in.B) != ""
	}
	return false
}

// rootKey returns the key of path i when it is one static key of the
// root map, else "" (the empty key is left alone, as are dynamic keys).
func (g *gen) rootKey(i uint16) string {
	p := g.paths[i]
	if p.Dyn != nil || len(p.Steps) != 1 || p.Steps[0].IsIndex() {
		return ""
	}
	return p.Steps[0].Key()
}

// editTouches adds the key a root-key edit writes to keys and the
// register it stores to regs.
func (g *gen) editTouches(in vm.Instr, keys map[string]bool, regs map[uint16]bool) {
	keys[g.rootKey(in.A)] = true
	switch in.Op {
	case vm.RENAME:
		keys[g.rootKey(in.B)] = true
	case vm.SET, vm.SETQ:
		regs[in.B] = true
	}
}

// computes reports whether in only computes, from the record's keys not
// in keys and from registers, into a register not in regs.
func (g *gen) computes(in vm.Instr, keys map[string]bool, regs map[uint16]bool) bool {
	switch in.Op {
	case vm.GET, vm.GETG:
		p := g.paths[in.B]
		if p.Dyn != nil || len(p.Steps) == 0 || p.Steps[0].IsIndex() || keys[p.Steps[0].Key()] {
			return false
		}
	case vm.GETIN, vm.INDEX, vm.GUARD, vm.GUARDP, vm.WIDEN, vm.MOVE,
		vm.NOT, vm.NEG_INT, vm.NEG_FLT, vm.I2F,
		vm.ADD_INT, vm.SUB_INT, vm.MUL_INT, vm.DIV_INT, vm.MOD_INT,
		vm.ADD_FLT, vm.SUB_FLT, vm.MUL_FLT, vm.DIV_FLT, vm.MOD_FLT, vm.CONCAT,
		vm.EQ_INT, vm.LT_INT, vm.LE_INT, vm.EQ_FLT, vm.LT_FLT, vm.LE_FLT,
		vm.EQ_STR, vm.LT_STR, vm.LE_STR, vm.EQ_BOOL, vm.EQ, vm.ISNULL, vm.EXISTS, vm.IN:
	default:
		return false
	}
	return in.Op.Operands()[0] != 'w' || !regs[in.A]
}
