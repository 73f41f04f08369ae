package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/policytest"
)

// corpus returns the policy files of the corpus: cases/ and policies/.
func corpus(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"cases", "policies"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.policy"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		t.Fatal("no policies found")
	}
	return files
}

// TestCorpus runs every test block of the corpus on every backend, one
// subtest per file and test.
func TestCorpus(t *testing.T) {
	for _, fn := range corpus(t) {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(fn), ".policy")
		t.Run(name, func(t *testing.T) {
			f, info, diags := compiler.CheckFile(fn, src)
			if diags.HasErrors() {
				for _, d := range diags {
					t.Error(d)
				}
				return
			}
			if len(f.Tests) == 0 {
				t.Errorf("%s has no test blocks", fn)
			}
			for _, r := range policytest.RunFile(f, info, backends) {
				t.Run(r.Name(), func(t *testing.T) {
					for _, msg := range r.Failures {
						t.Errorf("%s:%d: %s", fn, r.Test.Pos().Line, msg)
					}
				})
			}
		})
	}
}

// TestCorpusSize holds the corpus to the floor of 200 cases.
func TestCorpusSize(t *testing.T) {
	n := 0
	for _, fn := range corpus(t) {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		f, _, _ := compiler.CheckFile(fn, src)
		if f != nil {
			n += len(f.Tests)
		}
	}
	if n < 200 {
		t.Errorf("the corpus has %d test blocks, want at least 200", n)
	}
	t.Logf("%d test blocks", n)
}

// TestModules runs the tests of the corpus's modules (modules/, which
// cases/module_*.policy import) on every backend.
func TestModules(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("modules", "*.policy"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no modules: %v", err)
	}
	for _, fn := range files {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(fn), ".policy"), func(t *testing.T) {
			f, _, diags := compiler.CheckFile(fn, src)
			if diags.HasErrors() || !f.Module {
				t.Fatalf("%s: not a clean module: %v", fn, diags)
			}
			if len(f.Tests) == 0 {
				t.Errorf("%s has no test blocks", fn)
			}
			for _, r := range policytest.RunModule(src, f, backends) {
				for _, msg := range r.Failures {
					t.Errorf("%s:%d: %s: %s", fn, r.Test.Pos().Line, r.Name(), msg)
				}
			}
		})
	}
}
