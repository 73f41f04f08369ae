// Package vm is the bytecode interpreter of the policy language: an
// immutable Program of typed register instructions, and Machines that run it
// over records.
//
// The compiler (package compiler) builds Programs; vm knows nothing of the
// syntax tree or the type checker. A Program is safe for concurrent use;
// a Machine holds the registers of one run at a time and is reused.
package vm

import (
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/record"
)

// Action is what happens to a record after a run.
type Action uint8

const (
	Keep Action = iota // emit the record
	Drop               // drop the record
)

func (a Action) String() string {
	if a == Drop {
		return "drop"
	}
	return "keep"
}

// Reason is why a run faulted (semantics.md, "Faults").
type Reason uint8

const (
	NoFault Reason = iota
	TypeMismatch
	DivisionByZero
	NonFinite
	PathConflict
	StringTooLong
	RecordTooLarge
	IterationLimit
	NumReasons
)

var reasonNames = [NumReasons]string{"", "type_mismatch", "division_by_zero", "non_finite", "path_conflict", "string_too_long", "record_too_large", "iteration_limit"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("reason(%d)", r)
}

// Limits of a run (docs/language.md, "Limits" and "Faults").
const (
	MaxString = 1 << 20  // the longest string a policy may build, in bytes
	MaxRecord = 16 << 20 // the largest record a policy may leave, encoded as JSON
	// MaxIterations is how many elements the for loops of one run may
	// visit, all loops together. A loop is bounded by its data, but loops
	// nested n deep cost the data's size to the n-th power: this keeps
	// one record from stalling a pipeline, as Lua filters need a time
	// budget for.
	MaxIterations = 1 << 20
)

// Result is the result of one run. After a fault the record is as it came
// in (every edit discarded) and Action says whether it is kept (the
// default) or dropped (on_fault drop).
type Result struct {
	Action Action
	Fault  Reason
}

// Kept reports whether the record goes on.
func (r Result) Kept() bool { return r.Action == Keep }

func (r Result) String() string {
	switch {
	case r.Fault != NoFault && r.Action == Drop:
		return "fault (" + r.Fault.String() + "), dropped"
	case r.Fault != NoFault:
		return "fault (" + r.Fault.String() + ")"
	case r.Action == Drop:
		return "drop"
	}
	return "keep"
}

// Instr is one instruction: an opcode and up to four small operands. Which
// operands are registers, constants, paths or jump targets depends on the
// opcode (see the table in ops.go and docs/vm.md).
type Instr struct {
	Op      Op
	X       uint8
	A, B, C uint16
}

// Code is everything a Program is made of; the compiler fills it in and
// calls New.
type Code struct {
	Name        string // the policy's name
	OnFaultDrop bool   // the header says on_fault drop
	Instrs      []Instr
	Lines       []int32 // the source line of each instruction (for Disasm), or nil
	// Edits are the edit instructions that EDITS runs in batches.
	Edits []Instr
	// Consts are preloaded into registers 0..len(Consts)-1 of every
	// Machine; instructions read them as registers and never write them.
	Consts   []Reg
	NumRegs  int // registers in all, constants included
	Paths    []Path
	Regexps  []*regexp.Regexp
	Sets     []*Set
	Iters    int // for loops nested at most this deep
	Builders int // map and array literals nested at most this deep
}

// Path is a record path, some of whose steps may be computed at run time:
// register Dyn[i] holds the key (a string) or index (an int) of step
// DynAt[i]; the other steps are Steps' own.
type Path struct {
	Steps record.Path
	DynAt []int
	Dyn   []uint16
}

// Program is a compiled policy: immutable apart from its fault counters, and
// safe to run from many goroutines at once.
type Program struct {
	code   Code
	faults [NumReasons]atomic.Uint64
	pool   sync.Pool
}

// New checks c's operands and returns the Program.
func New(c Code) (*Program, error) {
	if err := validate(&c); err != nil {
		return nil, err
	}
	p := &Program{code: c}
	p.pool.New = func() any { return NewMachine(p) }
	return p, nil
}

// Name is the policy's name.
func (p *Program) Name() string { return p.code.Name }

// OnFaultDrop reports whether faulting records are dropped.
func (p *Program) OnFaultDrop() bool { return p.code.OnFaultDrop }

// Len is the number of instructions.
func (p *Program) Len() int { return len(p.code.Instrs) }

// Faults returns how many runs faulted, by reason (index NoFault is 0).
func (p *Program) Faults() [NumReasons]uint64 {
	var out [NumReasons]uint64
	for i := range out {
		out[i] = p.faults[i].Load()
	}
	return out
}

// Run runs the program over rec with a Machine from an internal pool.
func (p *Program) Run(rec *record.Record) Result {
	m := p.pool.Get().(*Machine)
	r := m.Run(rec)
	p.pool.Put(m)
	return r
}

// RunBatch runs the program over every record of recs with one pooled
// Machine, writing results[i] for recs[i]; results must be at least as
// long as recs.
func (p *Program) RunBatch(recs []*record.Record, results []Result) {
	m := p.pool.Get().(*Machine)
	results = results[:len(recs)]
	for i, rec := range recs {
		results[i] = m.Run(rec)
	}
	p.pool.Put(m)
}

// Clock gives now() its value; nil means the wall clock.
type Clock func() time.Time
