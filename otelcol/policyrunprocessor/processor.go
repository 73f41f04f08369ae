package policyrunprocessor

import (
	"context"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// logsProcessor runs the policies over plog.Logs without converting whole
// records (docs/collector.md, "Two paths"): plans (plan.go) where the
// policies allow, else the general path: the programs' paths are
// static, so it reads from pdata only what they read or write, into one
// small arena record per log record, and writes back only what they
// changed. A record they leave alone is not touched.
type logsProcessor struct {
	policies []policy
	loads    []loadPath    // the projection: every path a policy reads or writes
	writes   []record.Path // the paths a policy may change
	resolved []resolved    // writes, resolved
	withTime bool          // some policy reads or sets %time
	setsTime bool
	// dropWhen is the condition of a policy that is one `drop when C` on
	// the plan, alone: the filter processor's case, run without the
	// statement walk (dropScope).
	dropWhen cond
	// dropPred is dropWhen's C when it reads only what every record has
	// and cannot give up (recordPred): dropScope's pass is then C alone.
	dropPred func(plog.LogRecord) bool
	// only is the plan of a policy that runs alone (planScope).
	only *plan
	// splits says a policy has a split: batches then take the whole
	// path (split.go).
	splits bool
	tel    *telemetry
	// state saves and loads the policies' memory (state.go).
	state *stateKeeper
	// The state of batches, reused: ConsumeLogs may be called from many
	// goroutines at once, and each call takes one. A free list, not a
	// sync.Pool: a pool is emptied at every GC, which pdata makes
	// frequent, and a batch's state is worth keeping (its arena grown to
	// the batch size).
	mu   sync.Mutex
	free []*batch
}

// arenaReset is the bytes of projections a batch's arena holds before it
// is reset.
const arenaReset = 256 << 10

func newProcessor(policies []policy, tel *telemetry) *logsProcessor {
	accs := make([]vm.Access, len(policies))
	for i, p := range policies {
		accs[i] = p.prog.Access()
	}
	u := vm.Union(accs...)
	p := &logsProcessor{
		policies: policies,
		loads:    loadPaths(u.Paths()),
		writes:   u.Writes,
		resolved: resolveAll(u.Writes),
		withTime: u.ReadsTime || u.SetsTime,
		setsTime: u.SetsTime,
		tel:      tel,
	}
	for _, pol := range policies {
		p.splits = p.splits || pol.prog.Splits()
	}
	if len(policies) == 1 && !p.splits {
		p.only = policies[0].plan
		if pl := policies[0].plan; pl != nil && pl.groupDrop == nil && len(pl.stmts) == 1 &&
			pl.stmts[0].kind == sDrop && pl.stmts[0].test != nil {
			p.dropWhen = pl.stmts[0].test
			p.dropPred = recordPred(pl.stmts[0].cond)
		}
	}
	return p
}

// batch is the state of one ConsumeLogs call, reused: the arena of the
// records being run, a Machine per policy, the Differ, and what the batch
// changes in the grouping of records.
//
// A record is done with once written back, so the arena could be reset
// for each; but a Reset starts a new generation, and the programs then
// copy their constants into it again and the edits their keys (some 100
// to 300 instructions a record). It is reset once it holds arenaReset
// bytes instead: a few hundred projections, still within the CPU's
// caches.
type batch struct {
	p        *logsProcessor
	a        *record.Arena
	machines []*vm.Machine
	l        loader
	w        writer
	d        *vm.Differ
	leaves   []leafEdit
	c        counts
	plans    runner
	// s is the record being run, passed by reference to the plan's
	// closures (kept here so that it is not allocated per group).
	s src

	// Records to take out of their group (dropped, or moved to another),
	// by their index in the batch; and the shape the batch came in.
	rm           []int32
	rlLen, slLen []int32 // slLen: emptiedHere for a group dropScope emptied
	emptied      bool    // some group is emptiedHere
	undecided    []int32 // dropScope's records C could not decide
	// The groups records moved to, with the edits that made them
	// (written out in keys: the arena they were in is gone).
	keys   []byte
	newRLs []newRL
	newSLs []newSL

	// The whole path's (split.go): the records decoded, those a policy
	// kept, a run's records, the encoder. (Its output is not reused:
	// pdata may keep bytes of it.)
	whole, next []*record.Record
	pieces      []vm.Piece
	enc         record.OTLPEncoder

	// clock is the time every run of the batch sees, every policy's
	// (spec.Batch): its machines run as parts of it.
	clock spec.Batch
}

func (p *logsProcessor) newBatch() *batch {
	b := &batch{p: p, a: record.NewArena(), d: vm.NewDiffer(p.writes)}
	for _, pol := range p.policies {
		m := vm.NewMachine(pol.prog)
		m.SetBatch(&b.clock)
		b.machines = append(b.machines, m)
	}
	b.l.a, b.w.a = b.a, b.a
	n := len(p.policies) * int(spec.NumReasons)
	b.c.drops, b.c.faults = make([]int64, n), make([]int64, n)
	b.c.whys = make([]int64, len(p.policies)*int(spec.NumDropReasons))
	return b
}

func (p *logsProcessor) get() *batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return p.newBatch()
}

func (p *logsProcessor) put(b *batch) {
	p.mu.Lock()
	p.free = append(p.free, b)
	p.mu.Unlock()
}

// processLogs is the processorhelper.ProcessLogsFunc.
func (p *logsProcessor) processLogs(ctx context.Context, ld plog.Logs) (plog.Logs, error) {
	b := p.get()
	if p.splits {
		ld = b.runWhole(ld)
	} else {
		b.run(ld)
	}
	p.tel.add(ctx, &b.c)
	b.reset()
	p.put(b)
	if ld.ResourceLogs().Len() == 0 {
		return ld, processorhelper.ErrSkipProcessingData
	}
	return ld, nil
}

func (b *batch) reset() {
	b.clock = spec.Batch{}
	b.a.Reset()
	b.c.reset()
	b.rm, b.rlLen, b.slLen = b.rm[:0], b.rlLen[:0], b.slLen[:0]
	b.emptied = false
	b.keys = b.keys[:0]
	clear(b.newRLs) // they hold pdata: let it go
	clear(b.newSLs)
	b.newRLs, b.newSLs = b.newRLs[:0], b.newSLs[:0]
}

// run runs the policies over every log record of ld, in order, moving
// the records whose resource or scope they change, then takes out the
// dropped and moved ones. Groups made for moved records go at the end,
// where the loops over the groups that came in do not reach.
func (b *batch) run(ld plog.Logs) {
	rls := ld.ResourceLogs()
	var g int32 // the batch index of the group's first record (dropScope's gone)
	var in int64
	for ri, nrl := 0, rls.Len(); ri < nrl; ri++ {
		rl := rls.At(ri)
		sls := rl.ScopeLogs()
		nsl := sls.Len()
		b.rlLen = append(b.rlLen, int32(nsl))
		for si := 0; si < nsl; si++ {
			sl := sls.At(si)
			lrs := sl.LogRecords()
			in += int64(lrs.Len())
			b.slLen = append(b.slLen, int32(lrs.Len()))
			if b.dropGroup(rl, sl, lrs.Len()) {
				for range lrs.Len() {
					b.rm = append(b.rm, g)
					g++
				}
				continue
			}
			b.s = src{rl: rl, sl: sl}
			if b.p.dropWhen != nil {
				g = b.dropScope(ld, lrs, int32(ri), int32(si), g)
				continue
			}
			if pl := b.p.only; pl != nil {
				g = b.planScope(ld, pl, lrs, int32(ri), int32(si), g)
				continue
			}
			for li := 0; li < lrs.Len(); li++ {
				b.s.lr = lrs.At(li)
				if b.record(ld, &b.s, int32(ri), int32(si), g) {
					b.rm = append(b.rm, g)
				}
				g++
			}
		}
	}
	b.c.in = in
	if len(b.rm) > 0 || b.emptied {
		b.remove(ld)
	}
}

// record runs the policies over the log record of s, the batch's g-th:
// each policy's plan while it has one and decides, the general path from
// the first policy that has none or gives up. It reports whether the
// record leaves its group: dropped, or moved to another.
func (b *batch) record(ld plog.Logs, s *src, ri, si, g int32) bool {
	for i := range b.p.policies {
		pl := b.p.policies[i].plan
		if pl == nil {
			return b.general(ld, *s, ri, si, g, i)
		}
		if pl.edits != nil {
			if !pl.edits.run(s) {
				return b.general(ld, *s, ri, si, g, i)
			}
			continue
		}
		switch b.plans.decide(pl, s) {
		case dDrop:
			b.c.drops[i*int(spec.NumReasons)]++
			b.c.dropped++
			return true
		case dBail:
			return b.general(ld, *s, ri, si, g, i)
		}
		b.plans.apply(s)
	}
	return false
}

// general runs the policies from the from-th over the log record of s on
// the general path: its projection, the VM, the Differ, the write-back.
func (b *batch) general(ld plog.Logs, s src, ri, si, g int32, from int) bool {
	p := b.p
	if b.a.Used() > arenaReset {
		b.a.Reset()
	}
	rec, why := b.l.load(s, p.loads, p.withTime)
	if why != readable {
		b.c.unread[why]++
		return false
	}
	b.d.Mark(rec)
	for i, m := range b.machines {
		if i < from {
			continue // its plan ran
		}
		res := m.Run(rec)
		at := i*int(spec.NumReasons) + int(res.Fault)
		if res.Fault != spec.NoFault {
			b.c.faults[at]++
		}
		if res.Action == spec.Drop {
			// A drop of a statement's own accord (dedupe, rate_limit,
			// sample) counts under its reason, as the whole path does.
			if res.Why != spec.ByPolicy {
				b.c.whys[i*int(spec.NumDropReasons)+int(res.Why)]++
			} else {
				b.c.drops[at]++
			}
			b.c.dropped++
			return true
		}
	}
	if !b.d.Changed(rec) {
		return false
	}
	edits := b.d.Edits(rec)
	timeChanged := p.setsTime && b.d.TimeChanged(rec)
	if len(edits) == 0 && !timeChanged {
		return false
	}
	var ok bool
	if b.leaves, ok = b.w.leaves(b.leaves[:0], edits, p.resolved); !ok {
		b.c.unread[unwritable]++
		return false
	}
	// The log record's own fields are written in place, then the record
	// moves if its resource or scope changed.
	d := dst{lr: s.lr}
	t0, obs0 := s.lr.Timestamp(), s.lr.ObservedTimestamp()
	moves := false
	for i := range b.leaves {
		if e := &b.leaves[i]; e.f.group() == inLog {
			b.w.apply(d, e)
		} else {
			moves = true
		}
	}
	switch {
	case timeChanged:
		s.lr.SetTimestamp(pcommon.Timestamp(rec.Time()))
	case t0 == 0 && s.lr.ObservedTimestamp() != obs0:
		// The record's time was its observed time and stays so, as the
		// engine's OTLP encoder writes it: time_unix_nano is set to it.
		s.lr.SetTimestamp(obs0)
	}
	return moves && b.move(ld, s, ri, si)
}

// planScope runs the one policy's plan over the records of a scope group,
// the g-th of the batch first, as record does for any number of policies,
// and returns the index of the group's next record.
func (b *batch) planScope(ld plog.Logs, pl *plan, lrs plog.LogRecordSlice, ri, si, g int32) int32 {
	for li := 0; li < lrs.Len(); li++ {
		b.s.lr = lrs.At(li)
		if pl.gate != nil {
			// A true C or a give-up decides as ever, C again included:
			// it is pure, and those records are the few.
			t, ok := pl.gate(&b.plans, &b.s)
			if ok && !t {
				g++
				continue
			}
			if ok && pl.gateEdits != nil && pl.gateEdits.run(&b.s) {
				g++
				continue
			}
		}
		if pl.edits != nil && pl.edits.run(&b.s) {
			g++
			continue
		}
		out := false
		switch b.plans.decide(pl, &b.s) {
		case dDrop:
			b.c.drops[0]++
			b.c.dropped++
			out = true
		case dBail:
			out = b.general(ld, b.s, ri, si, g, 0)
		default:
			b.plans.apply(&b.s)
		}
		if out {
			b.rm = append(b.rm, g)
		}
		g++
	}
	return g
}

// dropScope runs the one policy `drop when C` over the records of a scope
// group, the g-th of the batch first, in one pass that takes the dropped
// out as it goes (the filter processor's pass, and the hand-written
// floor's). A record C cannot decide stays, and the general path runs it
// after the pass. It returns the batch index past the group, which counts
// only the records left in it: the group's length is now that.
func (b *batch) dropScope(ld plog.Logs, lrs plog.LogRecordSlice, ri, si, g int32) int32 {
	n := int32(lrs.Len())
	var kept int32
	b.undecided = b.undecided[:0]
	if pred := b.p.dropPred; pred != nil {
		lrs.RemoveIf(pred)
		kept = int32(lrs.Len())
	} else {
		lrs.RemoveIf(func(lr plog.LogRecord) bool {
			b.s.lr = lr
			d, ok := b.p.dropWhen(&b.plans, &b.s)
			if !ok {
				b.undecided = append(b.undecided, kept)
			} else if d {
				return true
			}
			kept++
			return false
		})
	}
	if dropped := int64(n - kept); dropped > 0 {
		b.c.drops[0] += dropped
		b.c.dropped += dropped
		b.slLen[len(b.slLen)-1] = kept
		if kept == 0 {
			b.slLen[len(b.slLen)-1] = emptiedHere
			b.emptied = true
		}
	}
	for _, k := range b.undecided {
		b.s.lr = lrs.At(int(k))
		if b.record(ld, &b.s, ri, si, g+k) {
			b.rm = append(b.rm, g+k)
		}
	}
	return g + kept
}

// dropGroup evaluates, once for a scope group, a first statement `drop
// when C` whose C reads only the resource and the scope, and reports
// whether it holds: the group's n records are then dropped, counted here.
func (b *batch) dropGroup(rl plog.ResourceLogs, sl plog.ScopeLogs, n int) bool {
	pl := b.p.policies[0].plan
	if pl == nil || pl.groupDrop == nil || n == 0 {
		return false
	}
	b.s = src{rl: rl, sl: sl}
	v, ok := b.plans.eval(pl.groupDrop, &b.s)
	if !ok || v.k != vBool || !v.b {
		return false
	}
	b.c.drops[0] += int64(n)
	b.c.dropped += int64(n)
	return true
}

// emptiedHere marks, in batch.slLen, a scope group left empty by the
// batch (one that came in empty stays).
const emptiedHere = -1

// remove takes the records of b.rm out of their groups, then the groups
// that this left empty (groups that came in empty stay).
func (b *batch) remove(ld plog.Logs) {
	slices.Sort(b.rm)
	rls := ld.ResourceLogs()
	rm := b.rm
	var g int32     // the batch index of the first record of the group
	s := 0          // the group's index in slLen
	var emptied int // resource groups this left without scope groups
	for ri := 0; ri < len(b.rlLen); ri++ {
		sls := rls.At(ri).ScopeLogs()
		scopesEmptied := 0
		for si := 0; si < int(b.rlLen[ri]); si++ {
			n := b.slLen[s]
			s++
			if n == emptiedHere {
				scopesEmptied++
				continue
			}
			if len(rm) > 0 && rm[0] < g+n {
				lrs := sls.At(si).LogRecords()
				i := g
				lrs.RemoveIf(func(plog.LogRecord) bool {
					out := len(rm) > 0 && rm[0] == i
					if out {
						rm = rm[1:]
					}
					i++
					return out
				})
				if lrs.Len() == 0 {
					scopesEmptied++
					b.slLen[s-1] = emptiedHere // marks it for removal below
				}
			}
			g += n
		}
		if scopesEmptied > 0 {
			k := s - int(b.rlLen[ri])
			sls.RemoveIf(func(plog.ScopeLogs) bool {
				out := k < s && b.slLen[k] == emptiedHere
				k++
				return out
			})
			if sls.Len() == 0 {
				emptied++
				b.rlLen[ri] = -1
			}
		}
	}
	if emptied > 0 {
		k := 0
		rls.RemoveIf(func(plog.ResourceLogs) bool {
			out := k < len(b.rlLen) && b.rlLen[k] == -1
			k++
			return out
		})
	}
}
