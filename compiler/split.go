package compiler

import (
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/vm"
)

// split compiles split P to one SPLIT of P's path: the VM reads P itself
// (absent, null or an array are all fine there: no guard) and runs the
// code after it once per element, each time with the registers as they
// were at the SPLIT, so what the code before computed holds for every
// record. P's cached reads are stale after it.
func (g *gen) split(s *policy.SplitStmt) {
	g.readPath(s.Target)
	g.writePath(s.Target)
	p, prefix := g.target(s.Target)
	g.emit(s.Pos(), vm.SPLIT, p, 0, 0, 0)
	g.invalidate(prefix)
}
