// Package vm is the bytecode interpreter of the policy language: an
// immutable Program of typed register instructions, and Machines that run it
// over records.
//
// The compiler (package compiler) builds Programs; vm knows nothing of the
// syntax tree or the type checker. A Program is safe for concurrent use;
// a Machine holds the registers of one run at a time and is reused.
package vm

import (
	"regexp"
	"sync"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

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
	// OTLP says the schema is schema otlp: the program runs over OTLP log
	// records, in the view of docs/otlp.md, and whoever runs it builds its
	// records so. The program itself runs the same either way.
	OTLP bool
	// Access is what a run may read and write (Program.Access); nil when
	// not known, which Program.Access reports as the whole record. New
	// cuts and sorts its paths and drops those another covers.
	Access *Access
	Instrs []Instr
	Lines  []int32 // the source line of each instruction (for Disasm), or nil
	// Frames says, for each instruction, which entry of Inlines holds
	// it: the compiler inlines calls of a policy's functions, and Disasm
	// shows which call each instruction is the body of. Nil, or entry 0,
	// is the policy's own code.
	Frames  []uint16
	Inlines []Inline
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
	// Options are the clock and limits of every run, however it is run
	// (Program.Run, RunBatch, a Machine); zero limits are the defaults.
	Options spec.Options
	// States are the stateful statements (dedupe, rate_limit, sample),
	// whose tables the operands "t" index: New binds them to the tables
	// of Options.State, or of a Store of the Program's own.
	States []state.Spec
}

// Inline is one call of a function whose body the compiler inlined: the
// function's name, the line of the call, and the entry of Code.Inlines of
// the body that holds the call (0 for the policy's own code). File is the
// file of the function's body when it is not the policy's (a module's
// function), for disasm: its lines are that file's.
type Inline struct {
	Func   string
	Line   int32
	Parent uint16
	File   string
}

// Path is a record path, some of whose steps may be computed at run time:
// register Dyn[i] holds the key (a string) or index (an int) of step
// DynAt[i]; the other steps are Steps' own.
type Path struct {
	Steps record.Path
	DynAt []int
	Dyn   []uint16
	top   bool // one static key of the root: a Machine's copy notes it
}

// Program is a compiled policy: immutable, and safe to run from many
// goroutines at once. It keeps no counts: whoever runs it tallies the
// Results (spec.Counts).
type Program struct {
	code   Code
	access Access
	pool   sync.Pool
	splits bool           // the code has a SPLIT
	tables []*state.Table // of code.States, in order
	// keyed are the tables of dedupe and rate_limit, by ID: those a
	// batch holds (Machine.RunBatch), in the order state.HoldAll takes
	// them.
	keyed []*state.Table
}

// New checks c's operands and returns the Program.
func New(c Code) (*Program, error) {
	if err := validate(&c); err != nil {
		return nil, err
	}
	c.Options.Limits = c.Options.Limits.OrDefault()
	p := &Program{code: c, access: AccessAll()}
	if c.Access != nil {
		p.access = c.Access.normalized()
	}
	for _, in := range c.Instrs {
		p.splits = p.splits || in.Op == SPLIT
	}
	if len(c.States) > 0 || c.Options.State != nil {
		store := c.Options.State
		if store == nil {
			store = state.NewStore()
		}
		p.tables = store.Bind(c.States)
		for _, t := range p.tables {
			if t.Spec().Kind.Keyed() {
				p.keyed = append(p.keyed, t)
			}
		}
		state.SortByID(p.keyed)
	}
	p.pool.New = func() any { return NewMachine(p) }
	return p, nil
}

// Options are the clock and limits the Program runs with.
func (p *Program) Options() spec.Options { return p.code.Options }

// Name is the policy's name.
func (p *Program) Name() string { return p.code.Name }

// OnFaultDrop reports whether faulting records are dropped.
func (p *Program) OnFaultDrop() bool { return p.code.OnFaultDrop }

// OTLP reports whether the policy runs over OTLP log records (its schema
// is schema otlp).
func (p *Program) OTLP() bool { return p.code.OTLP }

// Len is the number of instructions.
func (p *Program) Len() int { return len(p.code.Instrs) }

// Run runs the program over rec with a Machine from an internal pool.
func (p *Program) Run(rec *record.Record) spec.Result {
	m := p.pool.Get().(*Machine)
	r := m.Run(rec)
	p.pool.Put(m)
	return r
}

// RunBatch runs the program over every record of recs as one batch
// (spec.Batch) with one pooled Machine, writing results[i] for recs[i];
// results must be at least as long as recs.
func (p *Program) RunBatch(recs []*record.Record, results []spec.Result) {
	m := p.pool.Get().(*Machine)
	m.RunBatch(recs, results)
	p.pool.Put(m)
}
