package vm

import (
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

// stateOp runs the instructions of the stateful statements (dedupe,
// rate_limit, sample: docs/language.md, "State"), whose memory is the
// Program's tables. It reports end when the run ends, with its action
// and fault reason. Keys are hashed by package state, as the Lua backend
// hashes them, so that both keep the same records.
func (m *Machine) stateOp(in Instr) (action spec.Action, reason spec.Reason, end bool) {
	regs := m.regs
	switch in.Op {
	case KEY:
		r := &regs[in.B]
		h := state.NewHasher()
		switch r.K {
		case record.Absent, record.Null:
			h.Null()
		case record.Bool:
			h.Bool(r.N != 0)
		case record.Int:
			h.Int(r.int())
		case record.Float:
			h.Float(r.float())
		case record.String:
			h.String(r.S)
		case record.Timestamp:
			h.Time(int64(r.N))
		default:
			return spec.Keep, spec.TypeMismatch, true
		}
		regs[in.A] = Reg{K: record.Int, N: h.Sum()}
	case KEYMIX:
		regs[in.A] = Reg{K: record.Int, N: state.Combine(regs[in.B].N, regs[in.C].N)}
	case DEDUPE:
		t := m.prog.tables[in.C]
		var drop bool
		var n int64
		if m.holds() {
			drop, n = t.DedupeHeld(regs[in.B].N, m.nowNanos())
		} else {
			drop, n = t.Dedupe(regs[in.B].N, m.nowNanos())
		}
		if drop {
			m.why = spec.ByDedupe
			return spec.Drop, spec.NoFault, true
		}
		regs[in.A] = Int(n)
	case RATE:
		t := m.prog.tables[in.B]
		var drop bool
		if m.holds() {
			drop = t.RateHeld(regs[in.A].N, m.nowNanos())
		} else {
			drop = t.Rate(regs[in.A].N, m.nowNanos())
		}
		if drop {
			m.why = spec.ByRateLimit
			return spec.Drop, spec.NoFault, true
		}
	case SAMPLE:
		if !state.Sampled(regs[in.A].N, regs[in.B].int()) {
			m.why = spec.BySample
			return spec.Drop, spec.NoFault, true
		}
	case EVERY:
		if m.prog.tables[in.A].Every() {
			m.why = spec.BySample
			return spec.Drop, spec.NoFault, true
		}
	}
	return 0, 0, false
}

// holds reports whether the run holds the program's keyed tables,
// taking them at the first statement of a batch that needs them: one
// lock a batch rather than one a record, while no other goroutine waits
// (RunBatch lets them in between records).
func (m *Machine) holds() bool {
	if m.hold && !m.held {
		state.HoldAll(m.prog.keyed)
		m.held = true
	}
	return m.held
}

// contended reports whether another goroutine waits for a table the
// batch holds.
func (m *Machine) contended() bool {
	for _, t := range m.prog.keyed {
		if t.Contended() {
			return true
		}
	}
	return false
}

// release gives back the tables the batch holds.
func (m *Machine) release() {
	for _, t := range m.prog.keyed {
		t.Release()
	}
	m.held = false
}

// Tables are the tables of the Program's stateful statements, in source
// order (Code.States), for their figures: keys held, evictions.
func (p *Program) Tables() []*state.Table { return p.tables }
