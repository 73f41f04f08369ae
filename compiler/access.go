package compiler

import (
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// The access sets (vm.Access) are gathered as the code is generated, so
// that they hold what the program does: code the generator leaves out
// (after an unconditional drop, in a branch a constant condition never
// takes, an expression folded to a constant) reads and writes nothing,
// and test blocks are not compiled at all. Each read of a record path,
// each write target and each %time and %tag adds to them.

// accessPath is the part of a record path the access sets hold: its
// steps up to the first that is not a constant key. A computed key or an
// array index (constant or not: where an element lies depends on the
// array) makes the value before it read or written whole.
func accessPath(steps []step) record.Path {
	p := record.Path{}
	for _, s := range steps {
		if s.dyn != nil || s.st.IsIndex() {
			break
		}
		p = append(p, s.st)
	}
	return p
}

// readPath notes that the run reads the record path e whole.
func (g *gen) readPath(e policy.Expr) {
	_, steps := flatten(e)
	g.readSteps(steps)
}

func (g *gen) readSteps(steps []step) {
	g.access.Reads = append(g.access.Reads, accessPath(steps))
}

// writePath notes that the run may set or remove the record path e, or
// change something under it.
func (g *gen) writePath(e policy.Expr) {
	_, steps := flatten(e)
	g.writeSteps(steps)
}

func (g *gen) writeSteps(steps []step) {
	g.access.Writes = append(g.access.Writes, accessPath(steps))
}

// liftPath notes the writes of lift e: the map at e is removed and its
// keys go to its parent, which is written whole.
func (g *gen) liftPath(e policy.Expr) {
	_, steps := flatten(e)
	if len(steps) > 0 {
		steps = steps[:len(steps)-1]
	}
	g.writeSteps(steps)
}
