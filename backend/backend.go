// Package backend is the registry of the engine's backends: each turns a
// checked policy into a Program that runs it over records. The pipeline,
// the CLI, the test runner and the conformance suite find them here.
package backend

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// Program is a policy (or a Fluent Bit-style Lua script) loaded on one
// backend. Run is safe for concurrent use. Faults are in the Result; a
// record that meets one is left as it came in. The error means one of two
// things, told apart by the Result:
//
//   - when the Result is a fault, a non-nil error describes that fault
//     (*luascript.FaultError for scripts: the Lua message with script and line,
//     or what the call returned); it may be nil, as the VM's always is;
//   - when the Result is not a fault, a non-nil error is a failure of the
//     backend itself.
type Program interface {
	Run(rec *record.Record) (spec.Result, error)
}

// SplitProgram is a Program that can turn one record into several, as a
// Fluent Bit Lua filter that returns an array of records does: rec becomes
// the first, and the others, new records of rec's arena, come back in
// order, to be emitted right after rec. Run on a SplitProgram faults a
// record that splits.
type SplitProgram interface {
	Program
	RunSplit(rec *record.Record) (spec.Result, []*record.Record, error)
}

// BatchProgram is a Program that runs a batch in one call, cheaper than
// record by record; results must be at least as long as recs.
type BatchProgram interface {
	Program
	RunBatch(recs []*record.Record, results []spec.Result) error
}

// InBatch is a Program whose runs can be parts of one batch
// (spec.Batch), every record of it seeing one time: whoever runs a batch
// record by record gives each run the same b. RunIn runs rec as a run of
// b; Run as a batch of its own.
type InBatch interface {
	Program
	RunIn(b *spec.Batch, rec *record.Record) (spec.Result, error)
}

// IsOTLP reports whether p runs a policy declared with `schema otlp`: its
// records are OTLP log records, in the view of docs/otlp.md, and the caller
// builds them so (the pipeline from OTLP input, the test runner from test
// inputs written as the view in JSON). Every backend's policy programs
// say it (vm.Program.OTLP, lua.Program.OTLP), from the one fact of the
// syntax tree (policy.File.IsOTLP); a Fluent Bit-style Lua script runs
// over plain records.
func IsOTLP(p Program) bool {
	o, ok := p.(interface{ OTLP() bool })
	return ok && o.OTLP()
}

// Backend is one way of running policies.
type Backend struct {
	Name string // as --backend and pipeline configs name it
	Doc  string // one line
	// Load prepares f, checked without errors into info, to run with the
	// clock and limits of opts.
	Load func(f *policy.File, info *check.Info, opts spec.Options) (Program, error)
}

var registry = []Backend{
	{
		Name: "vm", Doc: "the bytecode VM (the default)",
		Load: func(f *policy.File, info *check.Info, opts spec.Options) (Program, error) {
			prog, err := compiler.Compile(f, info, compiler.WithOptions(opts))
			if err != nil {
				return nil, err
			}
			return VM{prog}, nil
		},
	},
	{
		Name: "lua", Doc: "the policy transpiled to Lua, run on gopher-lua",
		Load: func(f *policy.File, info *check.Info, opts spec.Options) (Program, error) {
			p, err := lua.Compile(f, info, opts)
			if err != nil {
				return nil, err
			}
			return Lua{p}, nil
		},
	},
}

// All returns every backend; the first is the default.
func All() []Backend { return registry }

// Lookup returns the backend called name, or an error that lists them.
func Lookup(name string) (Backend, error) {
	for _, b := range registry {
		if b.Name == name {
			return b, nil
		}
	}
	return Backend{}, fmt.Errorf("unknown backend %q (want %s)", name, strings.Join(Names(), "|"))
}

// Select resolves a --backend value: a backend's name, or "all".
func Select(name string) ([]Backend, error) {
	if name == "all" {
		return registry, nil
	}
	b, err := Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("unknown backend %q (want %s or all)", name, strings.Join(Names(), "|"))
	}
	return []Backend{b}, nil
}

// Names lists the backends' names, the default first.
func Names() []string {
	var names []string
	for _, b := range registry {
		names = append(names, b.Name)
	}
	return names
}

// VM is a vm.Program as a BatchProgram.
type VM struct{ *vm.Program }

// Run runs the program over rec; the VM itself never fails.
func (p VM) Run(rec *record.Record) (spec.Result, error) { return p.Program.Run(rec), nil }

// RunBatch runs the program over a batch with one pooled Machine.
func (p VM) RunBatch(recs []*record.Record, results []spec.Result) error {
	p.Program.RunBatch(recs, results)
	return nil
}

// Piece is one record a run made, with its result (vm.Piece).
type Piece = vm.Piece

// PieceProgram is a Program whose runs may make several records of one,
// each with its own result: a policy with split. RunPieces appends to dst
// the pieces rec became, in order, rec itself first when it is one of
// them (new pieces are records of rec's arena).
type PieceProgram interface {
	Program
	RunPieces(rec *record.Record, dst []Piece) ([]Piece, error)
}

// RunAll runs p over rec and appends to dst every record the run made,
// kept or dropped, each with its result, in order: the pieces of a
// PieceProgram, rec and the records a SplitProgram split it into (those
// kept, with the result of rec), or rec alone. On an error (a failure of
// the backend itself) the record it concerns, and in a split every one
// after it, is passed on as it is, kept with the fault lua_error: the
// last piece is always one of those.
func RunAll(p Program, rec *record.Record, dst []Piece) ([]Piece, error) {
	return RunAllIn(nil, p, rec, dst)
}

// RunAllIn is RunAll as a run of batch b (spec.Batch; nil: a batch of
// its own), for a program that can be given one.
func RunAllIn(b *spec.Batch, p Program, rec *record.Record, dst []Piece) ([]Piece, error) {
	start := len(dst)
	dst, err := runAll(b, p, rec, dst)
	if err != nil {
		if len(dst) == start {
			dst = append(dst, Piece{Rec: rec})
		}
		if last := &dst[len(dst)-1]; !last.Result.Faulted() {
			last.Result = spec.Result{Fault: spec.LuaError}
		}
	}
	return dst, err
}

// piecesIn is a PieceProgram whose runs can be parts of a batch.
type piecesIn interface {
	RunPiecesIn(b *spec.Batch, rec *record.Record, dst []Piece) ([]Piece, error)
}

func runAll(b *spec.Batch, p Program, rec *record.Record, dst []Piece) ([]Piece, error) {
	switch p := p.(type) {
	case piecesIn:
		return p.RunPiecesIn(b, rec, dst)
	case PieceProgram:
		return p.RunPieces(rec, dst)
	case SplitProgram:
		res, extra, err := p.RunSplit(rec)
		dst = append(dst, Piece{Rec: rec, Result: res})
		for _, x := range extra {
			dst = append(dst, Piece{Rec: x})
		}
		return dst, err
	}
	var res spec.Result
	var err error
	if ib, ok := p.(InBatch); ok {
		res, err = ib.RunIn(b, rec)
	} else {
		res, err = p.Run(rec)
	}
	return append(dst, Piece{Rec: rec, Result: res}), err
}

// RunPieces runs the program over rec and appends the records the run
// made to dst (vm.Program.RunPieces); the VM itself never fails.
func (p VM) RunPieces(rec *record.Record, dst []Piece) ([]Piece, error) {
	return p.Program.RunPieces(rec, dst), nil
}

// RunPiecesIn is RunPieces as a run of batch b (spec.Batch).
func (p VM) RunPiecesIn(b *spec.Batch, rec *record.Record, dst []Piece) ([]Piece, error) {
	return p.Program.RunPiecesIn(b, rec, dst), nil
}

// Splits reports whether p's runs may make several records of one, or
// none (a policy with split): its callers then take the sequence of
// RunAll, or a PieceProgram's, rather than Run's one result.
func Splits(p Program) bool {
	s, ok := p.(interface{ Splits() bool })
	return ok && s.Splits()
}

// Lua is a lua.Program as a PieceProgram.
type Lua struct{ *lua.Program }

// RunPieces runs the program over rec and appends the records the run
// made to dst (lua.Program.RunPieces).
func (p Lua) RunPieces(rec *record.Record, dst []Piece) ([]Piece, error) {
	return p.RunPiecesIn(nil, rec, dst)
}

// RunPiecesIn is RunPieces as a run of batch b (spec.Batch).
func (p Lua) RunPiecesIn(b *spec.Batch, rec *record.Record, dst []Piece) ([]Piece, error) {
	var recsBuf [4]*record.Record
	var resBuf [4]spec.Result
	recs, results, err := p.Program.RunPiecesIn(b, rec, recsBuf[:0], resBuf[:0])
	for i, r := range recs {
		dst = append(dst, Piece{Rec: r, Result: results[i]})
	}
	return dst, err
}
