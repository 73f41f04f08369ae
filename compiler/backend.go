package compiler

import (
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/policytest"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// VMBackend returns the bytecode VM as a policytest.Backend (named "vm"),
// for policyrun test, eval and the conformance runner.
func VMBackend() policytest.Backend { return vmBackend{} }

type vmBackend struct{}

func (vmBackend) Name() string { return "vm" }

func (vmBackend) Load(f *policy.File, info *check.Info, cfg policytest.Config) (policytest.Runner, error) {
	prog, err := Compile(f, info)
	if err != nil {
		return nil, err
	}
	m := vm.NewMachine(prog)
	if !cfg.Now.IsZero() {
		m.SetNow(cfg.Now)
	}
	m.SetMaxIterations(cfg.MaxIterations)
	return &vmRunner{prog: prog, m: m}, nil
}

// vmRunner runs a Program with its own Machine.
type vmRunner struct {
	prog *vm.Program
	m    *vm.Machine
}

func (r *vmRunner) Run(rec *record.Record) policytest.Outcome {
	res := r.m.Run(rec)
	out := policytest.Outcome{Action: policytest.Keep}
	if res.Action == vm.Drop {
		out.Action = policytest.Drop
	}
	if res.Fault != vm.NoFault {
		out.Fault = res.Fault.String()
	}
	return out
}

// Program returns the compiled program of a Runner made by VMBackend, or
// nil for other runners (policyrun eval reads its fault counters).
func Program(r policytest.Runner) *vm.Program {
	if vr, ok := r.(*vmRunner); ok {
		return vr.prog
	}
	return nil
}
