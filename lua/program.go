// Package lua is the second backend of the policy language: it transpiles a
// checked policy to Lua source run on gopher-lua over records converted to
// Lua tables, and it runs hand-written Fluent Bit-style Lua filter scripts.
package lua

import (
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// Action is what a run did with a record.
type Action int

const (
	Keep  Action = iota // emit the record (edited or not)
	Drop                // the policy dropped it
	Fault               // a fault: the record is unchanged (or dropped under on_fault drop)
)

func (a Action) String() string {
	switch a {
	case Keep:
		return "keep"
	case Drop:
		return "drop"
	case Fault:
		return "fault"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}

// Result is the outcome of one run. For a fault, Reason names it
// (type_mismatch, division_by_zero, ...) and Dropped says whether the
// policy's on_fault drop discarded the record.
type Result struct {
	Action  Action
	Reason  string
	Dropped bool
}

// MaxIterations is how many elements the loops of one run may visit by
// default, as in the VM (vm.MaxIterations; runtime.lua's R.MAXITER).
const MaxIterations = 1 << 20

// maxRecord is the largest record a policy may leave (record_too_large).
const maxRecord = 16 << 20

// Program is a policy transpiled to Lua and compiled once to a gopher-lua
// prototype. It is safe for concurrent use: each goroutine's runs use their
// own LState from a pool.
type Program struct {
	Name    string
	Source  string // the Lua source, for reading and for the docs
	onFault policy.OnFault
	proto   *glua.FunctionProto
	regexps []*regexp.Regexp
	pool    sync.Pool
	// usesTag, usesTime and usesNow say which metadata the policy reads;
	// the runner converts only those.
	usesTag, usesTime, usesNow bool
}

// Compile transpiles a checked policy (info from check.Check without
// errors) and compiles the Lua source.
func Compile(f *policy.File, info *check.Info) (*Program, error) {
	src, g, err := transpile(f, info)
	if err != nil {
		return nil, err
	}
	proto, err := compileLua(src, f.Name+".lua")
	if err != nil {
		return nil, fmt.Errorf("lua: compiling the transpiled policy: %w", err)
	}
	return &Program{Name: f.Name, Source: src, onFault: f.OnFault, proto: proto, regexps: g.regexps,
		usesTag: g.usesTag, usesTime: g.usesTime, usesNow: g.usesNow}, nil
}

// Runner runs a Program on one LState. It is not safe for concurrent use;
// a pipeline stage holds one per goroutine.
type Runner struct {
	p    *Program
	s    *state
	fn   *glua.LFunction
	meta *glua.LTable
	// Now gives now() for a run; nil means the wall clock.
	Now func() time.Time
}

// NewRunner returns a runner with a fresh LState.
func (p *Program) NewRunner() (*Runner, error) {
	s, err := newState()
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
	return &Runner{p: p, s: s, fn: fn, meta: L.NewTable()}, nil
}

// SetMaxIterations sets how many elements the loops of one run may visit
// before the run faults iteration_limit; n <= 0 restores the default,
// vm.MaxIterations.
func (r *Runner) SetMaxIterations(n int) {
	if n <= 0 {
		n = MaxIterations
	}
	r.s.R.RawSetString("MAXITER", glua.LNumber(n))
}

// Close releases the runner's LState.
func (r *Runner) Close() { r.s.L.Close() }

// Run runs the program on rec with a pooled runner.
func (p *Program) Run(rec *record.Record) (Result, error) {
	r, _ := p.pool.Get().(*Runner)
	if r == nil {
		var err error
		if r, err = p.NewRunner(); err != nil {
			return Result{}, err
		}
	}
	res, err := r.Run(rec)
	p.pool.Put(r)
	return res, err
}

// Run runs the policy on rec, editing it in place and committing the edits
// (record.Record.Commit). On a fault rec is left exactly as it was. The error is for failures of the backend itself (a
// Lua error that is not a policy fault): they are bugs, never the record's
// doing.
func (r *Runner) Run(rec *record.Record) (Result, error) {
	s, L := r.s, r.s.L
	a := rec.Arena()
	root := s.fromValue(a, rec.Root())
	M := r.meta
	p := r.p
	M.RawSetString("tag", glua.LNil)
	M.RawSetString("time", glua.LNil)
	M.RawSetString("now", glua.LNil)
	if p.usesTag {
		M.RawSetString("tag", glua.LString(string(rec.Tag())))
	}
	if p.usesTime {
		M.RawSetString("time", s.newTS(rec.Time()))
	}
	if p.usesNow {
		now := time.Now()
		if r.Now != nil {
			now = r.Now()
		}
		M.RawSetString("now", s.newTS(now.UnixNano()))
	}
	M.RawSetString("e", glua.LFalse)
	M.RawSetString("rec", glua.LNil)
	s.st.RawSetString("e", glua.LFalse)
	L.Push(r.fn)
	L.Push(root)
	L.Push(M)
	err := L.PCall(2, 1, nil)
	if err != nil {
		L.SetTop(0)
		if reason := s.faultOf(err); reason != "" {
			return r.fault(reason), nil
		}
		return Result{}, fmt.Errorf("lua: %s: %w", r.p.Name, err)
	}
	code := L.Get(-1)
	L.Pop(1)
	if code == glua.LNumber(1) {
		return Result{Action: Drop}, nil
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
			return r.fault("path_conflict"), nil
		}
		if size > maxRecord/2 {
			s.buf = rec.AppendJSON(s.buf[:0])
			if len(s.buf) > maxRecord {
				rec.Discard()
				return r.fault("record_too_large"), nil
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
		return Result{Action: Keep}, nil
	}
	// As the VM does: a later stage's fault goes back to here, not before.
	rec.Commit()
	return Result{Action: Keep}, nil
}

func (r *Runner) fault(reason string) Result {
	return Result{Action: Fault, Reason: reason, Dropped: r.p.onFault == policy.OnFaultDrop}
}
