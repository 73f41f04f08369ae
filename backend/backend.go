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

// Program is a policy loaded on one backend. Run is safe for concurrent
// use. Its error is a failure of the backend itself, never a fault of the
// policy (faults are in the Result); a record that meets one is left as it
// came in.
type Program interface {
	Run(rec *record.Record) (spec.Result, error)
}

// BatchProgram is a Program that runs a batch in one call, cheaper than
// record by record; results must be at least as long as recs.
type BatchProgram interface {
	Program
	RunBatch(recs []*record.Record, results []spec.Result) error
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
			return lua.Compile(f, info, opts)
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
