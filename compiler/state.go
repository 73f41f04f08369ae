package compiler

import (
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/vm"
)

// stateStmt compiles dedupe, rate_limit and sample: the key's hash, folded
// value by value (KEY, KEYMIX), then the statement's instruction, which
// ends the run when it drops the record. Table i is the i-th stateful
// statement of the policy (check.Info.StateOrder), as vm.Code.States
// lists them.
func (g *gen) stateStmt(s *policy.StateStmt) {
	si := g.info.States[s]
	if si == nil {
		failf("%s: %s not checked", s.Pos(), s.Kind)
	}
	table := uint16(g.stateIndex(s))
	pos := s.Pos()
	var key reg
	for i, k := range s.Keys {
		h := g.newReg()
		g.emit(pos, vm.KEY, h, g.expr(k), 0, 0)
		if i == 0 {
			key = h
			continue
		}
		mixed := g.newReg()
		g.emit(pos, vm.KEYMIX, mixed, key, h, 0)
		key = mixed
	}
	switch s.Kind {
	case policy.DEDUPE:
		n := g.newReg()
		g.emit(pos, vm.DEDUPE, n, key, table, 0)
		if si.Count != nil {
			g.writePath(si.Count.Target)
			p, prefix := g.target(si.Count.Target)
			g.emit(pos, vm.SET, p, n, 0, 0)
			g.invalidate(prefix)
		}
	case policy.RATELIMIT:
		g.emit(pos, vm.RATE, key, table, 0, 0)
	case policy.SAMPLE:
		if s.Keys == nil {
			g.emit(pos, vm.EVERY, table, 0, 0, 0)
		} else {
			g.emit(pos, vm.SAMPLE, key, g.constant(vm.Int(si.Spec.N)), 0, 0)
		}
	}
}

func (g *gen) stateIndex(s *policy.StateStmt) int {
	for i, o := range g.info.StateOrder {
		if o == s {
			return i
		}
	}
	failf("%s: %s not checked", s.Pos(), s.Kind)
	return 0
}
