package lua

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/policytest"
)

// TestBackendCases runs the conformance corpus through policytest, the
// harness `policyrun test` uses, on the VM and the Lua backend: each must
// meet every expectation and the two must agree.
func TestBackendCases(t *testing.T) {
	files, _ := filepath.Glob("../conformance/cases/*.policy")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, info := parseCheck(t, file, src)
		for _, res := range policytest.RunFile(f, info, []policytest.Backend{compiler.VMBackend(), Backend{}}) {
			for _, msg := range res.Failures {
				t.Errorf("%s: %q: %s", filepath.Base(file), res.Name(), msg)
			}
		}
	}
}
