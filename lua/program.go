// Package lua is the second backend of the policy language: it transpiles a
// checked policy to Lua source run on gopher-lua over records converted to
// Lua tables. Hand-written Fluent Bit-style filter scripts are package
// luascript's; what both need of gopher-lua is internal/luasandbox's.
package lua

import (
	"errors"
	"fmt"
	"math"
	"regexp"

	"github.com/policyrun/policyrun/internal/luasandbox"
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	kstate "github.com/policyrun/policyrun/state"
)

// Program is a policy transpiled to Lua and compiled once to a gopher-lua
// prototype. It is safe for concurrent use: each goroutine's runs use their
// own LState from a pool.
type Program struct {
	Name    string
	Source  string // the Lua source, for reading and for the docs
	onFault policy.OnFault
	otlp    bool // the schema is schema otlp (OTLP)
	proto   *glua.FunctionProto
	regexps []*regexp.Regexp
	opts    spec.Options
	runners luasandbox.Pool[*Runner]
	// usesTag, usesTime and usesNow say which metadata the policy reads;
	// the runner converts only those.
	usesTag, usesTime, usesNow bool
	// split is the path of the policy's split, nil when it has none.
	split record.Path
	// states are the stateful statements' specs and tables, in source
	// order: ST(i, …) runs statement i.
	states []kstate.Spec
	tables []*kstate.Table
}

// Compile transpiles a checked policy (info from check.Check without
// errors) and compiles the Lua source; opts are the clock and limits of
// its runs, as the VM takes them.
func Compile(f *policy.File, info *check.Info, opts spec.Options) (*Program, error) {
	src, g, err := transpile(f, info)
	if err != nil {
		return nil, err
	}
	proto, err := luasandbox.Compile(src, f.Name+".lua")
	if err != nil {
		return nil, fmt.Errorf("lua: compiling the transpiled policy: %w", err)
	}
	opts.Limits = opts.Limits.OrDefault()
	p := &Program{Name: f.Name, Source: src, onFault: f.OnFault, otlp: f.IsOTLP(), proto: proto, regexps: g.regexps, opts: opts,
		usesTag: g.usesTag, usesTime: g.usesTime, usesNow: g.usesNow, split: g.split, states: info.StateSpecs()}
	if len(p.states) > 0 || opts.State != nil {
		store := opts.State
		if store == nil {
			store = kstate.NewStore()
		}
		p.tables = store.Bind(p.states)
	}
	return p, nil
}

// OTLP reports whether the policy runs over OTLP log records (its schema
// is schema otlp): whoever runs it builds its records in the view of
// docs/otlp.md. The program itself runs the same either way.
func (p *Program) OTLP() bool { return p.otlp }

// Runner runs a Program on one LState. It is not safe for concurrent use;
// a pipeline stage holds one per goroutine.
type Runner struct {
	p    *Program
	s    *state
	fn   *glua.LFunction
	meta *glua.LTable
	// rest is the policy after its split, as the run that reached the
	// split made it (a closure over that run's locals); recs the records
	// the split made, reused.
	rest *glua.LFunction
	recs []*record.Record
	// batch is the batch the runs are part of (Program.RunIn,
	// RunPiecesIn), nil when each run is a batch of its own, own: its time
	// is what now() and the stateful statements see, as on the VM.
	batch *spec.Batch
	own   spec.Batch
}

// nowNanos is the time of the run's batch.
func (r *Runner) nowNanos() int64 {
	b := r.batch
	if b == nil {
		b = &r.own
	}
	return b.Now(&r.p.opts)
}

// NewRunner returns a runner with a fresh LState.
func (p *Program) NewRunner() (*Runner, error) {
	s, err := newState(p.opts.Limits)
	if err != nil {
		return nil, err
	}
	L := s.L
	P := L.NewTable()
	re := L.NewTable()
	for i, r := range p.regexps {
		ud := L.NewUserData()
		ud.Value = r
		re.RawSetInt(i+1, ud)
	}
	P.RawSetString("re", re)
	r := &Runner{p: p, s: s, meta: L.NewTable()}
	P.RawSetString("st", L.NewFunction(r.stateFunc))
	L.Push(L.NewFunctionFromProto(p.proto))
	L.Push(s.R)
	L.Push(P)
	if err := L.PCall(2, 1, nil); err != nil {
		L.Close()
		return nil, fmt.Errorf("lua: loading %s: %w", p.Name, err)
	}
	fn, ok := L.Get(-1).(*glua.LFunction)
	L.Pop(1)
	if !ok {
		L.Close()
		return nil, errors.New("lua: the transpiled chunk did not return a function")
	}
	s.rand.Fixed = p.opts.Random
	r.fn = fn
	return r, nil
}

// Close releases the runner's LState.
func (r *Runner) Close() { r.s.L.Close() }

// Run runs the program on rec with a pooled runner.
func (p *Program) Run(rec *record.Record) (spec.Result, error) { return p.RunIn(nil, rec) }

// RunIn is Run as a run of batch b (spec.Batch; nil: a batch of its
// own).
func (p *Program) RunIn(b *spec.Batch, rec *record.Record) (spec.Result, error) {
	r, err := p.runners.Get(p.NewRunner)
	if err != nil {
		return spec.Result{}, err
	}
	r.batch = b
	res, err := r.Run(rec)
	r.batch = nil
	p.runners.Put(r)
	return res, err
}

// Run runs the policy on rec, editing it in place and committing the edits
// (record.Record.Commit). On a fault rec is left exactly as it was. The error is for failures of the backend itself (a
// Lua error that is not a policy fault): they are bugs, never the record's
// doing. A policy with split makes at most one record here: an array of
// more elements is the fault split_limit (RunPieces makes them all).
func (r *Runner) Run(rec *record.Record) (spec.Result, error) {
	res, err := r.run(rec, r.fn, true)
	if err == nil && res.Action == actSplit {
		var recs [1]*record.Record
		var results [1]spec.Result
		_, rs, err := r.pieces(rec, recs[:0], results[:0], 1)
		if len(rs) == 0 {
			return spec.Result{}, err // the backend failed on the record
		}
		return rs[0], err
	}
	return res, err
}

// run runs fn, the policy function or the rest of it after a split
// (fresh false: now() and the random bits go on from the run that split),
// over rec. A run that reached the split returns actSplit, its edits made
// on rec, checked and not committed.
func (r *Runner) run(rec *record.Record, fn *glua.LFunction, fresh bool) (spec.Result, error) {
	s, L := r.s, r.s.L
	a := rec.Arena()
	root := s.fromValue(a, rec.Root())
	M := r.meta
	p := r.p
	M.RawSetString("tag", glua.LNil)
	M.RawSetString("time", glua.LNil)
	if p.usesTag {
		M.RawSetString("tag", glua.LString(string(rec.Tag())))
	}
	if p.usesTime {
		M.RawSetString("time", s.newTS(rec.Time()))
	}
	if fresh {
		if r.batch == nil {
			r.own = spec.Batch{}
		}
		M.RawSetString("now", glua.LNil)
		if p.usesNow {
			M.RawSetString("now", s.newTS(r.nowNanos()))
		}
		s.rand.Reset()
	}
	M.RawSetString("e", glua.LFalse)
	M.RawSetString("rec", glua.LNil)
	M.RawSetString("split", glua.LNil)
	s.st.RawSetString("e", glua.LFalse)
	L.Push(fn)
	L.Push(root)
	L.Push(M)
	// What the run builds is counted from here, as the VM counts what a
	// run adds to its arena: the record's own conversion is not the run's.
	L.SetMemoryBudget(int64(spec.MaxBuilt(p.opts.Limits)))
	err := L.PCall(2, 1, nil)
	L.SetMemoryBudget(math.MaxInt64)
	if err != nil {
		L.SetTop(0)
		if reason := s.faultOf(err); reason != spec.NoFault {
			return r.fault(reason), nil
		}
		return spec.Result{}, fmt.Errorf("lua: %s: %w", r.p.Name, err)
	}
	code := L.Get(-1)
	L.Pop(1)
	action := spec.Keep
	switch code {
	case glua.LNumber(1):
		return spec.Result{Action: spec.Drop}, nil
	default:
		if res, drop := dropResult(code); drop {
			return res, nil
		}
	case glua.LNumber(2):
		action = actSplit
		r.rest, _ = M.RawGetString("split").(*glua.LFunction)
	}
	edited := M.RawGetString("e") == glua.LTrue || s.st.RawGetString("e") == glua.LTrue
	if edited {
		if nr, ok := M.RawGetString("rec").(*glua.LTable); ok {
			root = nr
		}
		size := 0
		v := s.toValue(a, root, &size)
		if err := rec.Set(nil, v); err != nil {
			rec.Discard()
			return r.fault(spec.PathConflict), nil
		}
		if max := p.opts.Limits.MaxRecord; size > max/2 {
			s.buf = rec.AppendJSON(s.buf[:0])
			if len(s.buf) > max {
				rec.Discard()
				return r.fault(spec.RecordTooLarge), nil
			}
		}
	}
	if tag, ok := M.RawGetString("tag").(glua.LString); ok && string(tag) != string(rec.Tag()) {
		rec.SetTag([]byte(tag))
		edited = true
	}
	if t, ok := M.RawGetString("time").(*glua.LTable); ok {
		if ns := tsNanos(t); ns != rec.Time() {
			rec.SetTime(ns)
			edited = true
		}
	}
	if !edited {
		return spec.Result{Action: action}, nil
	}
	if rec.CheckOTLP() != nil {
		rec.Discard()
		return r.fault(spec.OTLPView), nil
	}
	if action == actSplit {
		return spec.Result{Action: action}, nil // the split commits
	}
	// As the VM does: a later stage's fault goes back to here, not before.
	rec.Commit()
	return spec.Result{Action: spec.Keep}, nil
}

func (r *Runner) fault(reason spec.Reason) spec.Result {
	if r.p.onFault == policy.OnFaultDrop {
		return spec.Result{Action: spec.Drop, Fault: reason}
	}
	return spec.Result{Action: spec.Keep, Fault: reason}
}
