// Package policytest runs the test blocks of policies (docs/language.md,
// "Tests") on
// one or more backends and compares their records with the expectations.
//
// A backend is anything that can run a checked policy over a record: the VM
// (compiler.VMBackend) and the Lua transpiler implement Backend. Every test
// runs on every backend given; a test passes when each backend meets the
// expectation and all backends agree with each other.
//
// Time in tests is fixed: every input record's %time is TestNow, and the
// backends are loaded with Config.Now = TestNow, which is what now() returns.
package policytest

import (
	"time"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// TestNow is the time of test runs: the value of now() and of every input
// record's %time (semantics.md).
var TestNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Backend turns a checked policy into a Runner.
type Backend interface {
	// Name is the backend's short name, as --backend takes it ("vm", "lua").
	Name() string
	// Load prepares f (checked without errors, info from check.Check) to
	// run. The Runner it returns is used by one goroutine at a time.
	Load(f *policy.File, info *check.Info, cfg Config) (Runner, error)
}

// Config is how a Runner is set up.
type Config struct {
	// Now is the value of now() in every run. The zero time means the
	// wall clock at the start of each run.
	Now time.Time
	// MaxIterations bounds the elements the loops of one run may visit
	// (vm.MaxIterations when 0), so that tests can reach the limit
	// cheaply.
	MaxIterations int
}

// Runner runs one loaded policy over records.
type Runner interface {
	// Run runs the policy over rec and leaves rec as the policy emits it:
	// with every edit when the outcome is Keep without a fault, exactly as
	// it came in after a fault. A dropped record's contents do not matter.
	Run(rec *record.Record) Outcome
}

// Action is what happens to a record after a run.
type Action uint8

const (
	Keep Action = iota // the record goes on (edited, or unchanged after a fault)
	Drop               // the record is dropped (drop, or a fault under on_fault drop)
)

func (a Action) String() string {
	if a == Drop {
		return "drop"
	}
	return "keep"
}

// Outcome is the result of one run.
type Outcome struct {
	Action Action
	// Fault is the fault reason (semantics.md: "type_mismatch",
	// "division_by_zero", "non_finite", "path_conflict",
	// "string_too_long", "record_too_large", "iteration_limit"), or "" when the run did not
	// fault. Under on_fault drop a fault has Action Drop.
	Fault string
	// Err is a failure of the backend itself (not a fault of the policy);
	// a test with an Err fails.
	Err error
}

func (o Outcome) String() string {
	switch {
	case o.Err != nil:
		return "error: " + o.Err.Error()
	case o.Fault != "" && o.Action == Drop:
		return "fault (" + o.Fault + "), dropped"
	case o.Fault != "":
		return "fault (" + o.Fault + ")"
	case o.Action == Drop:
		return "dropped"
	}
	return "kept"
}
