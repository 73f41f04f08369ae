// Package policyrun compiles a log policy and runs it over JSON lines,
// msgpack events and OTLP requests: the one import an embedding program needs.
//
// Compile a policy once, with options; the error, when there is one, is a
// *Error listing every diagnostic with its file, line, column, code and
// hint. A *Policy is immutable and safe for concurrent use: Process runs it
// over one input from any goroutine. A Batch, from Policy.NewBatch, does
// the same for one goroutine at a time and keeps its memory (the arena its
// records are decoded into, its scratch) from call to call, so that the
// steady state allocates nothing per record.
//
// Bad input loses nothing: a JSON line or msgpack event that does not
// decode is passed on unchanged and counted in Counts.Malformed; an OTLP
// request that does not decode is refused whole (an error, dst unchanged),
// as an OTLP receiver answers 400. A record whose run faults is passed on
// as it came in (or dropped, with the policy's on_fault drop), counted by
// reason in Counts.Faults.
//
// The packages beneath (compiler, record, backend, vm, lua, spec) are for
// what this one does not cover; docs/embedding.md lists what is stable.
package policyrun

import (
	"sync"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Error is the error of a policy that does not compile: every diagnostic,
// errors and warnings, sorted by position. Its Error method gives one line
// per error (file:line:col: error[CODE]: message); diag.WriteText renders
// them in full, with the source, labels and hints.
type Error = diag.Errors

// Diagnostic is one error or warning about a policy, with its code, span
// (Pos.Line, Pos.Col), message, label and hint.
type Diagnostic = diag.Diagnostic

// An Option sets how a compiled policy runs.
type Option func(*settings)

type settings struct {
	opts    spec.Options
	backend string
	read    compiler.ReadFunc
}

// WithLimits sets the limits of every run: the longest string a policy may
// build, the largest record it may leave, the elements its loops may visit.
// Zero fields keep their defaults (spec.DefaultLimits).
func WithLimits(l spec.Limits) Option { return func(s *settings) { s.opts.Limits = l } }

// WithClock makes c the source of now() (tests and replays fix it:
// spec.FixedClock); the default is the wall clock, read once a batch
// (spec.Batch).
func WithClock(c spec.Clock) Option { return func(s *settings) { s.opts.Clock = c } }

// WithRandom makes r the source of uuid_v4's and uuid_v7's random bits
// (tests fix it: spec.SeededRandom); the default is seeded from crypto/rand.
func WithRandom(r spec.Random) Option { return func(s *settings) { s.opts.Random = r } }

// WithParams gives the policy's parameters their values, checked by
// Compile: a parameter without a default left out, a value of the wrong
// type and a value for no parameter are errors, every one in the *Error.
func WithParams(p spec.Params) Option { return func(s *settings) { s.opts.Params = p } }

// WithFiles reads the modules the policy imports (import "pii.policy",
// relative to filename) with read; the default reads the OS's files.
func WithFiles(read func(path string) ([]byte, error)) Option {
	return func(s *settings) { s.read = read }
}

// WithBackend runs the policy on the named backend: "vm" (the default) or
// "lua" (the policy transpiled to Lua; the results are the same).
func WithBackend(name string) Option { return func(s *settings) { s.backend = name } }

// Policy is a compiled policy, ready to run. It is immutable and safe for
// concurrent use.
type Policy struct {
	name     string
	otlp     bool
	prog     backend.Program
	warnings []Diagnostic
	batches  sync.Pool // *Batch, for Process
}

// Compile parses, checks and compiles the policy in src; filename is what
// diagnostics name. When the policy has an error the *Policy is nil and the
// error is an *Error with every diagnostic; warnings alone do not stop it
// (Policy.Warnings). An unknown backend is a plain error.
func Compile(filename string, src []byte, opts ...Option) (*Policy, error) {
	var s settings
	for _, o := range opts {
		o(&s)
	}
	if s.backend == "" {
		s.backend = backend.Names()[0]
	}
	b, err := backend.Lookup(s.backend)
	if err != nil {
		return nil, err
	}
	p := &Policy{}
	if b.Name == "vm" {
		// CompileFile turns what only lowering finds (a policy too large
		// for the VM's registers) into a diagnostic too.
		vp, diags := compiler.CompileFile(filename, src, compiler.WithOptions(s.opts), compiler.WithFiles(s.read))
		if err := diags.Err(); err != nil {
			return nil, err
		}
		p.prog, p.name, p.warnings = backend.VM{Program: vp}, vp.Name(), diags
	} else {
		f, info, diags := compiler.CheckFileParams(filename, src, s.opts.Params, compiler.WithFiles(s.read))
		if err := diags.Err(); err != nil {
			return nil, err
		}
		if p.prog, err = b.Load(f, info, s.opts); err != nil {
			return nil, err
		}
		p.name, p.warnings = f.Name, diags
	}
	p.otlp = backend.IsOTLP(p.prog)
	return p, nil
}

// Name is the policy's name, as its header gives it.
func (p *Policy) Name() string { return p.name }

// OTLP reports whether the policy is declared `schema otlp`: it runs over
// OTLP log records, and its JSON lines are the records' OTLP view
// (docs/otlp.md).
func (p *Policy) OTLP() bool { return p.otlp }

// Warnings are the policy's warnings, sorted by position.
func (p *Policy) Warnings() []Diagnostic { return p.warnings }

// Run runs the policy over one record the caller decoded into an arena of
// its own (package record). After a fault the record is as it came in.
// The error is a failure of the backend itself, or a description of the
// fault in the Result (the Lua backend's message). Run returns one record:
// a policy with split (Splits) makes one there of an array of one
// element, and faults split_limit on more; RunAll takes every record.
func (p *Policy) Run(rec *record.Record) (spec.Result, error) { return p.prog.Run(rec) }

// Splits reports whether the policy has a split: a run may make several
// records of one, or none, and RunAll gives them all.
func (p *Policy) Splits() bool { return backend.Splits(p.prog) }

// RunAll runs the policy over one record as Run does and appends to dst
// every record the run made, kept or dropped, each with its result, in
// order (rec first; the others are records of rec's arena): one per
// element for a policy with split, rec alone otherwise. On an error (a
// failure of the backend itself) the records it concerns are appended
// too, faulted lua_error (backend.RunAll).
func (p *Policy) RunAll(rec *record.Record, dst []backend.Piece) ([]backend.Piece, error) {
	return backend.RunAll(p.prog, rec, dst)
}

// Process runs the policy over the records of in, written in format f, and
// appends what it keeps to dst, in the same format (see Format); in and
// dst must not overlap. It is safe for concurrent use: each call borrows a
// Batch from a pool, so the steady state allocates nothing per record.
func (p *Policy) Process(dst, in []byte, f Format) ([]byte, Counts, error) {
	b, _ := p.batches.Get().(*Batch)
	if b == nil {
		b = p.NewBatch()
	}
	dst, c, err := b.Process(dst, in, f)
	p.batches.Put(b)
	return dst, c, err
}
