package compiler

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// TestModuleGolden checks testdata/modules/*.policy, which import the
// modules of testdata/modules/lib, as `policyrun check` does, and compares
// the diagnostics with the .golden files: a module's own diagnostics
// name the import chain, an import's errors are at the import.
func TestModuleGolden(t *testing.T) {
	for _, file := range golden.Glob(t, "testdata/modules/*.policy") {
		name := strings.TrimSuffix(filepath.Base(file), ".policy")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			an := Analyze(file, src)
			var b bytes.Buffer
			if err := diag.WriteText(&b, src, an.Diagnostics); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(file, ".policy")+".golden", b.Bytes())
			errs, _ := an.Diagnostics.Count()
			switch {
			case strings.HasPrefix(name, "ok_") && len(an.Diagnostics) > 0:
				t.Errorf("clean policy has %d diagnostics", len(an.Diagnostics))
			case strings.HasPrefix(name, "e_") && errs != 1:
				t.Errorf("%d errors, want one", errs)
			}
		})
	}
}
