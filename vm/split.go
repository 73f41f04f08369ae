package vm

import (
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Piece is one record a run made of the record it was given, with its
// own result: a policy with split P makes one per element of P's array
// (docs/language.md, "split"), every other policy one, the record itself.
// A dropped piece is in the sequence too, so that whoever runs the policy
// counts each piece's result; only kept pieces go on.
type Piece struct {
	Rec    *record.Record
	Result spec.Result
}

// actSplit is the action of a run that reached SPLIT: not a result any
// caller sees, but what exec says to Run.
const actSplit spec.Action = 255

// splitState is where a run reached SPLIT: the instruction after it, the
// path resolved (its own copy: dynamic steps are resolved into scratch
// that later runs reuse), and the registers as
// they were, which every record the split makes starts from. from is set
// while those records run (Run starts there), max while RunPieces runs
// (Run alone makes one record), and pieces holds what the split made.
type splitState struct {
	pc     int
	path   record.Path
	saved  []Reg
	recs   []*record.Record
	from   int
	max    int
	pieces []Piece
}

// splitAt notes, at a SPLIT of path p, what the split needs. It reports
// false when p's dynamic steps do not resolve, a type mismatch as for a
// write.
func (m *Machine) splitAt(p *Path, pc int) bool {
	steps, ok := m.resolve(p, 0)
	if !ok {
		return false
	}
	sp := &m.splitSt
	sp.pc = pc
	sp.path = append(sp.path[:0], steps...)
	sp.saved = append(sp.saved[:0], m.regs...)
	return true
}

// Splits reports whether the program has a split: its runs may make
// several records of one, or none (RunPieces).
func (p *Program) Splits() bool { return p.splits }

// RunPieces runs the program over rec and appends to dst the records the
// run made, each with its result: rec alone for a program without split
// (and for a record whose run ended before the split, or faulted there);
// else one per element of the array at the split's path, rec first,
// each run on its own from the split on (docs/language.md, "split").
func (p *Program) RunPieces(rec *record.Record, dst []Piece) []Piece {
	return p.RunPiecesIn(nil, rec, dst)
}

// RunPiecesIn is RunPieces as a run of batch b (spec.Batch; nil: a
// batch of its own).
func (p *Program) RunPiecesIn(b *spec.Batch, rec *record.Record, dst []Piece) []Piece {
	m := p.pool.Get().(*Machine)
	m.batch = b
	dst = m.RunPieces(rec, dst)
	m.batch = nil
	p.pool.Put(m)
	return dst
}

// RunPieces is Program.RunPieces on this Machine.
func (m *Machine) RunPieces(rec *record.Record, dst []Piece) []Piece {
	sp := &m.splitSt
	sp.max, sp.pieces = m.lim.MaxSplit, sp.pieces[:0]
	r := m.Run(rec)
	sp.max = 0
	if len(sp.pieces) == 0 {
		return append(dst, Piece{Rec: rec, Result: r})
	}
	dst = append(dst, sp.pieces...)
	clear(sp.pieces)
	return dst
}

// splitRecord finishes the split the run over rec reached: it makes the
// records (at most max, one when Run alone runs), runs the rest of the
// code over each into pieces, and returns the first one's result.
func (m *Machine) splitRecord(rec *record.Record) spec.Result {
	sp := &m.splitSt
	recs, o := rec.Split(sp.path, max(sp.max, 1), m.maxBuilt, sp.recs[:0])
	sp.recs = recs[:0]
	switch o {
	case record.SplitMade:
	case record.SplitNone:
		// The statements after the split, which read P as an
		// element, do not run.
		return spec.Result{}
	case record.SplitEmpty:
		return spec.Result{Action: spec.Drop, Why: spec.SplitEmpty}
	case record.SplitTooMany:
		return m.fault(spec.SplitLimit)
	case record.SplitConflict:
		return m.fault(spec.PathConflict)
	default:
		return m.fault(spec.TypeMismatch)
	}
	sp.from = sp.pc
	// Run starts where from says: a panic in a record's run must not
	// leave the next record of this Machine starting there.
	defer func() { sp.from = 0 }()
	var res spec.Result
	for i, r := range recs {
		if i > 0 {
			copy(m.regs, sp.saved)
		}
		out := m.Run(r)
		if i == 0 {
			res = out
		}
		if sp.max > 0 {
			sp.pieces = append(sp.pieces, Piece{Rec: r, Result: out})
		}
	}
	clear(recs)
	return res
}
