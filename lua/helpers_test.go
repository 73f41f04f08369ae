package lua

import (
	"testing"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"

	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"
)

// parseCheck parses and checks a policy that must have no errors.
func parseCheck(t testing.TB, name string, src []byte) (*policy.File, *check.Info) {
	t.Helper()
	f, errs := policy.ParseFile(name, src)
	if len(errs) > 0 {
		t.Fatalf("%s: %v", name, errs)
	}
	info, diags := check.Check(f)
	for _, d := range diags {
		if d.Severity == diag.Error {
			t.Fatalf("%s: %v", name, d)
		}
	}
	return f, info
}

// compileFile parses, checks and transpiles a policy.
func compileFile(t testing.TB, name string, src []byte) (*policy.File, *Program) {
	t.Helper()
	f, info := parseCheck(t, name, src)
	p, err := Compile(f, info, spec.Options{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f, p
}

// TestRuntimeHasEveryBuiltin fails when the Lua backend lacks a built-in:
// the transpiler calls R.<name> for every one but those it writes inline
// (exists, coalesce, and now, which is read once per run).
func TestRuntimeHasEveryBuiltin(t *testing.T) {
	s, err := newState(spec.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer s.L.Close()
	inline := map[builtin.ID]bool{builtin.Exists: true, builtin.Coalesce: true, builtin.Now: true}
	for _, f := range builtin.All() {
		_, ok := s.R.RawGetString(f.Name).(*glua.LFunction)
		if ok == inline[f.ID] {
			t.Errorf("%s: R.%s is a function = %v", f.Name, f.Name, ok)
		}
	}
}
