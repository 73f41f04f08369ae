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
	golden.Files(t, "testdata/modules/*.policy", ".golden", func(t *testing.T, file string, src []byte) []byte {
		an := Analyze(file, src)
		var b bytes.Buffer
		if err := diag.WriteText(&b, src, an.Diagnostics); err != nil {
			t.Fatal(err)
		}
		errs, _ := an.Diagnostics.Count()
		switch name := filepath.Base(file); {
		case strings.HasPrefix(name, "ok_") && len(an.Diagnostics) > 0:
			t.Errorf("clean policy has %d diagnostics", len(an.Diagnostics))
		case strings.HasPrefix(name, "e_") && errs != 1:
			t.Errorf("%d errors, want one", errs)
		}
		return b.Bytes()
	})
}

// TestLoaderFiles: a Loader names every module file it loaded or tried
// to, once, for a reload to watch.
func TestLoaderFiles(t *testing.T) {
	tests := []struct {
		policies []string
		want     []string
	}{
		{[]string{"ok_import"}, []string{"lib/net.policy", "lib/util.policy"}},
		{[]string{"e_import_missing"}, []string{"lib/nope.policy"}},
		{[]string{"e_import_cycle", "e_import_cycle"}, []string{"lib/cyc_a.policy", "lib/cyc_b.policy"}},
	}
	for _, tt := range tests {
		l := NewLoader(nil)
		for _, name := range tt.policies {
			file := filepath.Join("testdata", "modules", name+".policy")
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			CheckFile(file, src, WithLoader(l))
		}
		var want []string
		for _, f := range tt.want {
			want = append(want, filepath.Join("testdata", "modules", f))
		}
		if got := l.Files(); strings.Join(got, " ") != strings.Join(want, " ") || len(want) == 0 {
			t.Errorf("%v: files %q, want %q", tt.policies, got, want)
		}
	}
}
