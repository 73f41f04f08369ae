package vm

import (
	"math"
	"unsafe"

	"github.com/policyrun/policyrun/internal/calc"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/record/coll"
	"github.com/policyrun/policyrun/spec"
)

// sizeCheckAbove is how many bytes a run may store before the record's
// size is measured at its end (or a quarter of MaxRecord, when that is
// less: SizeCheckAt).
const sizeCheckAbove = 64 << 10

// SizeCheckAt is how many bytes of strings and containers a run under
// limits l may store before the record's size is measured when the run
// ends (record_too_large): a run that stores no more cannot fault so.
func SizeCheckAt(l spec.Limits) int { return min(sizeCheckAbove, l.MaxRecord/4) }

// Machine holds the per-run state of a Program: registers, iterators,
// builders and scratch buffers. It is reused from run to run and is not
// safe for concurrent use; run one Program from many goroutines with one
// Machine each (or with Program.Run, which pools them).
type Machine struct {
	prog     *Program
	paths    []Path // the program's, their key steps with this Machine's lookup hints
	regs     []Reg
	iters    []record.Iter
	builders []record.Builder
	pbuf     [2]record.Path // dynamic paths being resolved
	buf      []byte         // scratch
	sink     mapSink        // the map parse_syslog and parse_common_log build
	lim      spec.Limits    // the Program's, copied for the hot path
	sizeAt   int            // grown beyond this, the record is measured
	// batch is the batch the runs are part of (SetBatch, RunBatch), nil
	// when each run is a batch of its own, own.
	batch *spec.Batch
	own   spec.Batch
	// hold says the runs are a batch's (RunBatch), which holds the
	// program's tables from its first stateful statement (held) on
	// (state.Table.Hold).
	hold, held bool
	rec        *record.Record
	a          *record.Arena
	// constA and constGen are the arena and generation that the string
	// constants' registers hold copies in (their V), so that storing one
	// in a record stores that copy, not a new one per record.
	constA   *record.Arena
	constGen uint64
	grown    int // bytes of strings and containers stored by this run
	iterated int // elements the run's loops have visited

	unflatten coll.Unflattener // unflatten's scratch space
	unique    coll.Uniquer     // unique's
	rand      calc.Rand        // the bits of uuid_v4 and uuid_v7
	maxElems  int              // of an array a + b or append builds
	maxBuilt  int              // bytes of values one run may build (spec.MaxBuilt)
	used0     int              // the arena's Used when the run began
	splitSt   splitState       // a split's place, array and saved registers (split.go)
	why       spec.DropReason  // which statement dropped the record, when a stateful one did
}

// NewMachine returns a Machine for p.
func NewMachine(p *Program) *Machine {
	c := &p.code
	m := &Machine{
		prog:     p,
		regs:     make([]Reg, c.NumRegs),
		iters:    make([]record.Iter, c.Iters),
		builders: make([]record.Builder, c.Builders),
		lim:      c.Options.Limits,
		sizeAt:   SizeCheckAt(c.Options.Limits),
		rand:     calc.Rand{Fixed: c.Options.Random},
		maxElems: spec.MaxElements(c.Options.Limits),
		maxBuilt: spec.MaxBuilt(c.Options.Limits),
	}
	copy(m.regs, c.Consts)
	m.paths = make([]Path, len(c.Paths))
	for i, p := range c.Paths {
		p.Steps = p.Steps.WithHints()
		p.top = len(p.Steps) == 1 && !p.Steps[0].IsIndex() && p.Dyn == nil
		m.paths[i] = p
	}
	return m
}

// Run runs the program over rec. On success the edits are committed to
// rec; after a fault rec is exactly as it came in, and the record is kept
// or, under on_fault drop, dropped. A program that splits records
// (Program.Splits) makes at most one here: an array of more elements is
// the fault split_limit (RunPieces makes them all).
func (m *Machine) Run(rec *record.Record) spec.Result {
	m.rec, m.a, m.grown, m.iterated = rec, rec.Arena(), 0, 0
	if m.a != m.constA || m.a.Generation() != m.constGen {
		m.placeConsts()
	}
	m.used0 = m.a.Used()
	// A record a split made runs from past the SPLIT (split.go), with
	// the now() and the random bits of the run that split.
	from := m.splitSt.from
	if from == 0 {
		if m.batch == nil {
			m.own = spec.Batch{}
		}
		m.rand.Reset()
	}
	m.why = spec.ByPolicy
	action, reason := m.exec(from)
	// Only runs that stored much can have outgrown the limit: the
	// record's size is measured after those alone.
	if reason == spec.NoFault && m.grown > m.sizeAt && m.a.JSONSize(rec.Root(), m.lim.MaxRecord) > m.lim.MaxRecord {
		reason = spec.RecordTooLarge
	}
	m.rec, m.a = nil, nil
	if reason == spec.NoFault && action != spec.Drop && rec.Edited() && rec.CheckOTLP() != nil {
		reason = spec.OTLPView
	}
	if reason != spec.NoFault {
		rec.Discard()
		return m.fault(reason)
	}
	if action == actSplit {
		return m.splitRecord(rec)
	}
	if action == spec.Keep && rec.Edited() {
		rec.Commit()
	}
	if action == spec.Drop {
		return spec.Result{Action: action, Why: m.why}
	}
	return spec.Result{Action: action}
}

// fault is the result of a run that faulted for reason.
func (m *Machine) fault(reason spec.Reason) spec.Result {
	if m.prog.code.OnFaultDrop {
		return spec.Result{Action: spec.Drop, Fault: reason}
	}
	return spec.Result{Action: spec.Keep, Fault: reason}
}

// overBudget reports whether the run has built, or would with n more
// elements, more than it may (spec.MaxBuilt). It is checked where values
// can grow without bound: at each loop iteration, before a + b of arrays,
// and after each built-in (whose one result is bounded by the other
// limits).
func (m *Machine) overBudget(n int) bool {
	return m.a.Used()-m.used0+n*int(unsafe.Sizeof(record.Value{})) > m.maxBuilt
}

// placeConsts copies the string constants into the run's arena, once
// for the records of its generation.
func (m *Machine) placeConsts() {
	m.constA, m.constGen = m.a, m.a.Generation()
	for i, c := range m.prog.code.Consts {
		if c.K == record.String {
			m.regs[i].V = m.a.NewConstString(c.S)
		}
	}
}

// nowNanos is the time of the run's batch (spec.Batch).
func (m *Machine) nowNanos() int64 {
	b := m.batch
	if b == nil {
		b = &m.own
	}
	return b.Now(&m.prog.code.Options)
}

// SetBatch makes the Machine's runs from here on part of b: they see its
// one time (spec.Batch). Nil ends it: each run is a batch of its own
// again.
func (m *Machine) SetBatch(b *spec.Batch) { m.batch = b }

// RunBatch runs the program over every record of recs as one batch (or
// as part of the Machine's batch, SetBatch), writing results[i] for
// recs[i]; results must be at least as long as recs.
func (m *Machine) RunBatch(recs []*record.Record, results []spec.Result) {
	outer := m.batch // a batch the Machine is part of already (SetBatch)
	if outer == nil {
		m.own = spec.Batch{}
		m.batch = &m.own
	}
	m.hold = len(m.prog.keyed) > 0
	defer m.endBatch(outer)
	results = results[:len(recs)]
	for i, rec := range recs {
		if m.held && m.contended() {
			m.release()
		}
		results[i] = m.Run(rec)
	}
}

// endBatch ends RunBatch, even when a run panics (a table left held
// would stop every other goroutine that uses it), giving the Machine
// back its outer batch.
func (m *Machine) endBatch(outer *spec.Batch) {
	if m.held {
		m.release()
	}
	m.batch, m.hold = outer, false
}

// exec is the interpreter loop.
func (m *Machine) exec(pc int) (spec.Action, spec.Reason) {
	code, edits := m.prog.code.Instrs, m.prog.code.Edits
	paths := m.paths
	regs := m.regs
	rec := m.rec
	a := m.a
	for {
		in := code[pc]
		pc++
		switch in.Op {
		case NOP:
		case MOVE:
			regs[in.A] = regs[in.B]
		case ROOT:
			regs[in.A] = Reg{K: record.Map, V: rec.Root()}
		case TAG:
			t := rec.TagValue()
			if t.Kind() == record.String {
				regs[in.A] = Reg{K: record.String, S: a.Str(t), V: t}
			} else {
				regs[in.A] = Reg{K: record.String}
			}
		case TIME:
			regs[in.A] = Reg{K: record.Timestamp, N: uint64(rec.Time())}
		case GET, GETG:
			// GETG is GET and its GUARD in one dispatch (the compiler
			// fuses them): most reads of the record.
			p := &paths[in.B]
			var v record.Value
			if p.Dyn == nil {
				v, _ = rec.Get(p.Steps)
			} else if steps, ok := m.resolve(p, 0); ok {
				v, _ = rec.Get(steps)
			}
			r := &regs[in.A]
			r.load(a, v)
			if in.Op == GETG && Mask(in.C)&(1<<(r.K&15)) == 0 {
				return spec.Keep, spec.TypeMismatch
			}
		case GETIN:
			p := &paths[in.C]
			regs[in.A].load(a, getIn(a, regs[in.B].V, regs[in.B].K, p.Steps))
		case INDEX:
			x, k := &regs[in.B], &regs[in.C]
			var v record.Value
			switch {
			case x.K == record.Map && k.K == record.String:
				v, _ = a.Key(x.V, bytesOf(k.S))
			case x.K == record.Array && k.K == record.Int:
				v, _ = a.Index(x.V, int(int64(k.N)))
			}
			regs[in.A].load(a, v)
		case GUARD:
			if Mask(in.B)&(1<<(regs[in.A].K&15)) == 0 {
				return spec.Keep, spec.TypeMismatch
			}
		case GUARDP:
			if Mask(in.B)&(1<<(regs[in.A].K&15)) == 0 && regs[in.C].K > record.Null {
				return spec.Keep, spec.TypeMismatch
			}
		case WIDEN:
			if r := &regs[in.A]; r.K == record.Int {
				*r = Float(float64(r.int()))
			}
		case SNAP:
			if r := &regs[in.A]; r.K == record.Map || r.K == record.Array {
				r.V = a.Clone(r.V)
			}
		case NOT:
			setBool(&regs[in.A], regs[in.B].N == 0)
		case NEG_INT:
			regs[in.A] = Reg{K: record.Int, N: uint64(-regs[in.B].int())}
		case NEG_FLT:
			regs[in.A] = Float(-regs[in.B].float())
		case I2F:
			regs[in.A] = Float(float64(regs[in.B].int()))
		case ADD_INT:
			regs[in.A] = Reg{K: record.Int, N: regs[in.B].N + regs[in.C].N}
		case SUB_INT:
			regs[in.A] = Reg{K: record.Int, N: regs[in.B].N - regs[in.C].N}
		case MUL_INT:
			regs[in.A] = Reg{K: record.Int, N: uint64(regs[in.B].int() * regs[in.C].int())}
		case DIV_INT, MOD_INT:
			x, y := regs[in.B].int(), regs[in.C].int()
			if y == 0 {
				return spec.Keep, spec.DivisionByZero
			}
			var r int64
			switch {
			case y == -1 && in.Op == DIV_INT:
				r = -x // MinInt64 / -1 wraps
			case y == -1:
				r = 0
			case in.Op == DIV_INT:
				r = x / y
			default:
				r = x % y
			}
			regs[in.A] = Reg{K: record.Int, N: uint64(r)}
		case ADD_FLT, SUB_FLT, MUL_FLT, DIV_FLT, MOD_FLT:
			x, y := regs[in.B].float(), regs[in.C].float()
			var r float64
			switch in.Op {
			case ADD_FLT:
				r = x + y
			case SUB_FLT:
				r = x - y
			case MUL_FLT:
				r = x * y
			case DIV_FLT:
				if y == 0 {
					return spec.Keep, spec.DivisionByZero
				}
				r = x / y
			case MOD_FLT:
				if y == 0 {
					return spec.Keep, spec.DivisionByZero
				}
				r = math.Mod(x, y)
			}
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return spec.Keep, spec.NonFinite
			}
			regs[in.A] = Float(r)
		case CONCAT:
			x, y := regs[in.B].S, regs[in.C].S
			if len(x)+len(y) > m.lim.MaxString {
				return spec.Keep, spec.StringTooLong
			}
			a.StringBuilder().StartWith(x) // x in place when a loop grows it
			a.StringBuilder().WriteString(y)
			v := a.StringBuilder().End()
			regs[in.A] = Reg{K: record.String, S: a.Str(v), V: v}
		case ACAT:
			x, y := regs[in.B].V, regs[in.C].V
			if a.Len(x)+a.Len(y) > m.maxElems {
				return spec.Keep, spec.RecordTooLarge
			}
			if m.overBudget(a.Len(x) + a.Len(y)) {
				return spec.Keep, spec.MemoryLimit
			}
			b := a.BeginArray(a.Len(x) + a.Len(y))
			for _, v := range [2]record.Value{x, y} {
				for it := a.Iter(v); it.Next(); {
					b.Append(it.Value())
				}
			}
			regs[in.A] = Reg{K: record.Array, V: b.Finish()}
		case EQ_INT:
			setBool(&regs[in.A], regs[in.B].N == regs[in.C].N)
		case LT_INT:
			setBool(&regs[in.A], regs[in.B].int() < regs[in.C].int())
		case LE_INT:
			setBool(&regs[in.A], regs[in.B].int() <= regs[in.C].int())
		case EQ_FLT:
			setBool(&regs[in.A], regs[in.B].float() == regs[in.C].float())
		case LT_FLT:
			setBool(&regs[in.A], regs[in.B].float() < regs[in.C].float())
		case LE_FLT:
			setBool(&regs[in.A], regs[in.B].float() <= regs[in.C].float())
		case EQ_STR:
			setBool(&regs[in.A], regs[in.B].S == regs[in.C].S)
		case LT_STR:
			setBool(&regs[in.A], regs[in.B].S < regs[in.C].S)
		case LE_STR:
			setBool(&regs[in.A], regs[in.B].S <= regs[in.C].S)
		case EQ_BOOL:
			setBool(&regs[in.A], regs[in.B].N == regs[in.C].N)
		case EQ:
			setBool(&regs[in.A], equal(a, &regs[in.B], &regs[in.C]))
		case ISNULL:
			setBool(&regs[in.A], regs[in.B].K <= record.Null)
		case EXISTS:
			setBool(&regs[in.A], regs[in.B].K != record.Absent)
		case IN:
			setBool(&regs[in.A], m.prog.code.Sets[in.C].Has(&regs[in.B]))
		case JMP:
			pc = int(in.A)
		case JT:
			if regs[in.B].N != 0 {
				pc = int(in.A)
			}
		case JF:
			if regs[in.B].N == 0 {
				pc = int(in.A)
			}
		case JNN:
			if regs[in.B].K > record.Null {
				pc = int(in.A)
			}
		case CALL:
			if r := m.call(in); r != spec.NoFault {
				return spec.Keep, r
			}
			if m.overBudget(0) {
				return spec.Keep, spec.MemoryLimit
			}
		case MAPNEW:
			m.builders[in.A] = a.BeginMap(int(in.B))
		case MAPPUT:
			k := &regs[in.B]
			m.builders[in.A].Add(toValue(a, k), toValue(a, &regs[in.C]))
		case MAPEND:
			regs[in.A] = Reg{K: record.Map, V: m.builders[in.B].Finish()}
		case ARRNEW:
			m.builders[in.A] = a.BeginArray(int(in.B))
		case ARRPUT:
			m.builders[in.A].Append(toValue(a, &regs[in.B]))
		case ARREND:
			regs[in.A] = Reg{K: record.Array, V: m.builders[in.B].Finish()}
		case SET, SETQ, REMOVE, RENAME, LIFT:
			if r := m.edits(code[pc-1 : pc]); r != spec.NoFault {
				return spec.Keep, r
			}
		case EDITS:
			if r := m.edits(edits[in.A : in.A+in.B]); r != spec.NoFault {
				return spec.Keep, r
			}
		case SETTAG:
			r := &regs[in.A]
			if r.V.Kind() == record.String {
				rec.SetTagValue(r.V)
			} else {
				rec.SetTag(bytesOf(r.S))
			}
		case SETTIME:
			rec.SetTime(regs[in.A].int())
		case SETROOT:
			if err := rec.Set(nil, regs[in.A].V); err != nil {
				return spec.Keep, spec.PathConflict
			}
			m.account(&regs[in.A])
		case ITER:
			m.iters[in.A] = a.Iter(regs[in.B].V)
		case NEXT:
			it := &m.iters[in.A]
			if !it.Next() {
				pc = int(in.C)
				continue
			}
			if m.iterated++; m.iterated > m.lim.MaxIterations {
				return spec.Keep, spec.IterationLimit
			}
			if m.overBudget(0) {
				return spec.Keep, spec.MemoryLimit
			}
			regs[in.B].load(a, it.Key())
			regs[in.B+1].load(a, it.Value())
		case DROP:
			return spec.Drop, spec.NoFault
		case KEEP:
			return spec.Keep, spec.NoFault
		case SPLIT:
			if !m.splitAt(&paths[in.A], pc) {
				return spec.Keep, spec.TypeMismatch
			}
			return actSplit, spec.NoFault
		default:
			if action, reason, end := m.stateOp(in); end {
				return action, reason
			}
		}
	}
}

// edits runs edit instructions, a run of them (EDITS) or one, in order,
// up to the first that faults.
func (m *Machine) edits(list []Instr) spec.Reason {
	rec, a, regs := m.rec, m.a, m.regs
	for i := range list {
		in := &list[i]
		switch in.Op {
		case SET, SETQ:
			steps, ok := m.resolve(&m.paths[in.A], 0)
			if !ok {
				return spec.PathConflict
			}
			r := &regs[in.B]
			v := toValue(a, r)
			var err error
			if in.Op == SETQ {
				_, err = rec.SetIfAbsent(steps, v)
			} else {
				err = rec.Set(steps, v)
			}
			if err != nil {
				return spec.PathConflict
			}
			if r.K == record.String || r.K == record.Bytes {
				m.grown += len(r.S) // account, for the common case
			} else if r.K >= record.Array {
				m.account(r)
			}
		case REMOVE:
			if steps, ok := m.resolve(&m.paths[in.A], 0); ok {
				rec.Remove(steps)
			}
		case RENAME:
			if p, q := &m.paths[in.A], &m.paths[in.B]; p.top && q.top && !p.Steps.Equal(q.Steps) &&
				rec.MoveTop(&p.Steps[0], &q.Steps[0]) {
				continue // two keys of the root (checked at New): rename's take and set in one step
			}
			from, ok1 := m.resolve(&m.paths[in.A], 0)
			to, ok2 := m.resolve(&m.paths[in.B], 1)
			if !ok1 || !ok2 {
				return spec.PathConflict
			}
			if r := m.rename(from, to); r != spec.NoFault {
				return r
			}
		case LIFT:
			steps, ok := m.resolve(&m.paths[in.A], 0)
			if !ok {
				return spec.PathConflict
			}
			v, _ := rec.Get(steps)
			switch v.Kind() {
			case record.Absent, record.Null:
				continue
			case record.Map:
			default:
				return spec.TypeMismatch
			}
			if err := rec.Lift(steps, bytesOf(regs[in.B].S)); err != nil {
				return spec.PathConflict
			}
			if n := len(regs[in.B].S); n > 0 {
				m.grown += n * a.Len(v)
			}
		}
	}
	return spec.NoFault
}

// rename moves the value at from to to: Take, then Set, so that the key
// goes to the end of its map (semantics.md: where a new key would go);
// the record is discarded anyway if the write faults.
func (m *Machine) rename(from, to record.Path) spec.Reason {
	if len(from) == 0 || len(to) == 0 || from[len(from)-1].IsIndex() || to[len(to)-1].IsIndex() {
		return spec.PathConflict
	}
	if from.Equal(to) {
		return spec.NoFault
	}
	v, ok := m.rec.Take(from)
	if !ok {
		return spec.NoFault
	}
	if err := m.rec.Set(to, v); err != nil {
		return spec.PathConflict
	}
	return spec.NoFault
}

// account adds what storing r may add to the record's size, so that the
// size limit is checked only after runs that stored something big.
func (m *Machine) account(r *Reg) {
	switch r.K {
	case record.String, record.Bytes:
		m.grown += len(r.S)
	case record.Map, record.Array:
		m.grown += m.a.JSONSize(r.V, m.lim.MaxRecord)
	}
}

// resolve returns the steps of path p, with its dynamic steps filled in
// from their registers into scratch buffer i; false when a dynamic step's
// register holds neither a string nor an int.
func (m *Machine) resolve(p *Path, i int) (record.Path, bool) {
	if p.Dyn == nil { // small enough to inline: most paths are static
		return p.Steps, true
	}
	return m.resolveDyn(p, i)
}

func (m *Machine) resolveDyn(p *Path, i int) (record.Path, bool) {
	buf := append(m.pbuf[i][:0], p.Steps...)
	for j, at := range p.DynAt {
		r := &m.regs[p.Dyn[j]]
		switch r.K {
		case record.String:
			buf[at] = record.KeyStepBytes(bytesOf(r.S))
		case record.Int:
			buf[at] = record.IndexStep(int(r.int()))
		default:
			m.pbuf[i] = buf
			return nil, false
		}
	}
	m.pbuf[i] = buf
	return buf, true
}

// getIn follows steps from the value v of kind k.
func getIn(a *record.Arena, v record.Value, k record.Kind, steps record.Path) record.Value {
	if k != record.Map && k != record.Array {
		return record.Value{}
	}
	for _, s := range steps {
		var ok bool
		if s.IsIndex() {
			v, ok = a.Index(v, s.Index())
		} else {
			v, ok = a.Key(v, bytesOf(s.Key()))
		}
		if !ok {
			return record.Value{}
		}
	}
	return v
}

// bytesOf views s as bytes without copying; the bytes must not be changed.
func bytesOf(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// equal is == (coll.Equal) over registers: the scalars compared here,
// without making them values; maps and arrays by coll.Equal.
func equal(a *record.Arena, x, y *Reg) bool {
	if x.K <= record.Null || y.K <= record.Null {
		return x.K <= record.Null && y.K <= record.Null
	}
	switch {
	case x.K == record.Int && y.K == record.Float:
		return float64(x.int()) == y.float()
	case x.K == record.Float && y.K == record.Int:
		return x.float() == float64(y.int())
	case x.K != y.K:
		return false
	}
	switch x.K {
	case record.Float:
		return x.float() == y.float()
	case record.String, record.Bytes:
		return x.S == y.S
	case record.Map, record.Array:
		return coll.Equal(a, x.V, y.V)
	}
	return x.N == y.N
}
