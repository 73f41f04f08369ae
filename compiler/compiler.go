// Package compiler turns policy source into a vm.Program: it parses and
// checks it (every diagnostic, with position and hint) and lowers it to
// typed bytecode with precomputed paths, folded constants and compiled
// regexes and sets.
package compiler

import (
	"fmt"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// Diagnostic is an error or warning about a policy (syntax or type).
type Diagnostic = diag.Diagnostic

// Diagnostics are every finding about one policy, sorted by position. Err
// is nil when none of them is an error (warnings do not stop a policy).
type Diagnostics = diag.List

// An Option sets how the compiled Program runs, or where the modules it
// imports are read.
type Option func(*config)

type config struct {
	spec.Options
	loader *Loader
}

// WithLoader makes l load the modules the policy imports: a Loader shared
// by several compilations loads and reports each module once.
func WithLoader(l *Loader) Option { return func(o *config) { o.loader = l } }

// WithFiles reads the modules the policy imports with read (the default
// is policy.ReadFile).
func WithFiles(read ReadFunc) Option { return WithLoader(NewLoader(read)) }

func configOf(opts []Option) config {
	var o config
	for _, opt := range opts {
		opt(&o)
	}
	if o.loader == nil {
		o.loader = NewLoader(nil)
	}
	return o
}

// WithClock makes c the source of now() (tests and replays fix it); the
// default is the wall clock, read once per run.
func WithClock(c spec.Clock) Option { return func(o *config) { o.Clock = c } }

// WithRandom makes r the source of the random bits of uuid_v4 and uuid_v7
// (tests fix it: spec.SeededRandom); the default is a generator seeded
// from crypto/rand.
func WithRandom(r spec.Random) Option { return func(o *config) { o.Random = r } }

// WithLimits sets the limits of every run: the longest string a policy may
// build, the largest record it may leave, the elements its loops may visit.
// Zero fields keep their defaults (spec.DefaultLimits).
func WithLimits(l spec.Limits) Option { return func(o *config) { o.Limits = l } }

// WithParams gives the policy's parameters their values; CompileFile
// checks them before anything runs.
func WithParams(p spec.Params) Option { return func(o *config) { o.Params = p } }

// WithOptions sets the clock, the randomness, the limits and the
// parameters at once.
func WithOptions(opts spec.Options) Option { return func(o *config) { o.Options = opts } }

// CompileFile parses, checks and compiles one policy file, its parameters
// given the values of WithParams. The diagnostics are every syntax and
// type error and warning, sorted; the Program is nil when diags.Err() is
// not.
func CompileFile(filename string, src []byte, opts ...Option) (*vm.Program, Diagnostics) {
	o := configOf(opts)
	f, info, diags := CheckFileParams(filename, src, o.Params, WithLoader(o.loader))
	if diags.Err() != nil {
		return nil, diags
	}
	prog, err := Compile(f, info, opts...)
	if err != nil {
		return nil, append(diags, compileDiagnostic(filename, f, err))
	}
	return prog, diags
}

// compileDiagnostic is the E0900 diagnostic of a checked policy that does
// not compile: its code goes past a limit of the VM.
func compileDiagnostic(filename string, f *policy.File, err error) Diagnostic {
	return Diagnostic{Code: check.CodeCompile, Severity: diag.Error, Pos: f.Pos(), End: f.Pos(),
		Msg: err.Error(), Filename: filename}
}

// CheckFile parses and checks one policy file, for callers that compile
// for other backends too. The File and Info are nil after syntax errors.
// Parameters without a default keep their values for run time
// (check.Check): Info.Unbound says the file cannot be compiled yet.
func CheckFile(filename string, src []byte, opts ...Option) (*policy.File, *check.Info, Diagnostics) {
	return checkFile(filename, src, check.Config{}, opts)
}

// CheckFileParams is CheckFile with the parameters given their values:
// one without a value or a default is an error now, and the File and Info
// are ready for any backend.
func CheckFileParams(filename string, src []byte, params spec.Params, opts ...Option) (*policy.File, *check.Info, Diagnostics) {
	return checkFile(filename, src, check.Config{Params: params, Bound: true}, opts)
}

func checkFile(filename string, src []byte, cfg check.Config, opts []Option) (*policy.File, *check.Info, Diagnostics) {
	f, errs := policy.ParseFile(filename, src)
	if len(errs) > 0 {
		return nil, nil, diag.Sort(diag.FromSyntax(filename, errs))
	}
	info, diags := configOf(opts).loader.check(filename, src, f, cfg, false)
	return f, info, diag.Sort(diags)
}

// Analysis is what the parser, the checker and the compiler made of one
// policy file, for the tools that show a user everything at once (check,
// the playground, the language server, the Collector processor's errors).
type Analysis struct {
	// File is what the parser made of the text, with Bad nodes where it is
	// broken; nil only when nothing could be parsed.
	File *policy.File
	// Info is what the checker learned of File (nil when File is).
	Info *check.Info
	// Diagnostics are every one `policyrun check` reports, sorted: the
	// syntax errors, then the checker's on what the parser recovered,
	// except on lines with a syntax error (where they would only echo it),
	// and, when there are no errors, the E0900 of a policy whose code goes
	// past a limit of the VM, as CompileFile reports it.
	Diagnostics Diagnostics
	// Program is the policy compiled with opts, nil when Diagnostics has
	// errors.
	Program *vm.Program
}

// Analyze parses, checks and compiles one policy file, and reports
// everything it found at once. CheckFile stops at syntax errors. With
// WithParams its parameters are given those values, as CheckFileParams
// gives them; without, they are left to run time.
func Analyze(filename string, src []byte, opts ...Option) *Analysis {
	f, errs := policy.ParseFile(filename, src)
	an := &Analysis{File: f}
	ds := diag.FromSyntax(filename, errs)
	if f != nil {
		// The checker sees what the parser made of a broken line (drop
		// when .msg contains "x" is drop when .msg): its complaints there
		// would only echo the syntax error, so that line keeps just it.
		broken := make(map[int]bool, len(ds))
		for _, d := range ds {
			broken[d.Pos.Line] = true
		}
		o := configOf(opts)
		cfg := check.Config{}
		if o.Params != nil {
			// Values given (the playground's): check and compile with
			// them, as eval does.
			cfg = check.Config{Params: o.Params, Bound: true}
		}
		info, more := o.loader.check(filename, src, f, cfg, len(errs) > 0)
		an.Info = info
		for _, d := range more {
			if d.Filename == "" {
				d.Filename = filename
			}
			if d.Filename == filename && broken[d.Pos.Line] {
				continue
			}
			ds = append(ds, d)
		}
		// What only lowering finds (a policy too large for the VM's
		// registers) is an error too: check refuses what run refuses.
		// A parameter without a value leaves nothing to lower yet.
		if !ds.HasErrors() && !info.Unbound && !f.Module {
			prog, err := Compile(f, info, opts...)
			if err != nil {
				ds = append(ds, compileDiagnostic(filename, f, err))
			}
			an.Program = prog
		}
	}
	an.Diagnostics = diag.Sort(ds)
	return an
}

// Diagnose returns the diagnostics of Analyze.
func Diagnose(filename string, src []byte) Diagnostics { return Analyze(filename, src).Diagnostics }

// Compile lowers f, checked without errors into info, to a Program.
func Compile(f *policy.File, info *check.Info, opts ...Option) (prog *vm.Program, err error) {
	defer func() {
		if p := recover(); p != nil {
			ce, ok := p.(compileError)
			if !ok {
				panic(p)
			}
			prog, err = nil, ce
		}
	}()
	if info.Unbound {
		return nil, check.ErrUnbound
	}
	if f.Module {
		return nil, errModule
	}
	o := configOf(opts).Options
	o.Limits = o.Limits.OrDefault()
	g := newGen(f, info, o)
	g.stmts(dropFirst(f.Stmts, vm.SizeCheckAt(o.Limits)))
	g.emit(f.EOF, vm.KEEP, 0, 0, 0, 0)
	return g.finish()
}

// compileError is raised (by panic) deep in the generator and returned by
// Compile: limits such as 65,536 registers.
type compileError string

func (e compileError) Error() string { return string(e) }

func failf(format string, args ...any) { panic(compileError(fmt.Sprintf(format, args...))) }
