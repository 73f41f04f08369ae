package lua

import (
	"time"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/policytest"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// Backend is the Lua backend for policytest and the CLI's --backend lua.
type Backend struct{}

// Name returns "lua".
func (Backend) Name() string { return "lua" }

// Load transpiles f and returns a runner on its own LState.
func (Backend) Load(f *policy.File, info *check.Info, cfg policytest.Config) (policytest.Runner, error) {
	p, err := Compile(f, info)
	if err != nil {
		return nil, err
	}
	r, err := p.NewRunner()
	if err != nil {
		return nil, err
	}
	if !cfg.Now.IsZero() {
		now := cfg.Now
		r.Now = func() time.Time { return now }
	}
	r.SetMaxIterations(cfg.MaxIterations)
	return testRunner{r}, nil
}

type testRunner struct{ r *Runner }

func (t testRunner) Run(rec *record.Record) policytest.Outcome {
	return t.r.Outcome(rec)
}

// Outcome runs the policy on rec and reports the result as policytest
// does: a fault under on_fault drop is a Drop with its reason.
func (r *Runner) Outcome(rec *record.Record) policytest.Outcome {
	res, err := r.Run(rec)
	switch {
	case err != nil:
		return policytest.Outcome{Err: err}
	case res.Action == Drop:
		return policytest.Outcome{Action: policytest.Drop}
	case res.Action == Fault && res.Dropped:
		return policytest.Outcome{Action: policytest.Drop, Fault: res.Reason}
	case res.Action == Fault:
		return policytest.Outcome{Action: policytest.Keep, Fault: res.Reason}
	}
	return policytest.Outcome{Action: policytest.Keep}
}
