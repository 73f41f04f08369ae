package vmtest

import (
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// A Runner runs a policy over a record, as backend.Program does.
type Runner interface {
	Run(rec *record.Record) (spec.Result, error)
}

// RunJSON decodes line into a fresh arena, runs p over it and returns the
// result, the record as JSON after the run, and Run's error. A line that
// does not decode stops the test.
func RunJSON(t testing.TB, p Runner, line string) (spec.Result, string, error) {
	t.Helper()
	rec, err := record.NewArena().DecodeJSON([]byte(line), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(rec)
	return res, string(rec.AppendJSON(nil)), err
}
