package pipeline

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/policyrun/policyrun/policy"
)

// TestPIIExample runs examples/pii on each backend: two policies that
// import one pii module, each filter with its own params.
func TestPIIExample(t *testing.T) {
	want := []string{
		`{"msg":"charge [card] ok","user":"bob@example.org","ip":"192.168.0.0","env":"staging"}`,
		`{"msg":"order 17 by [email]","ip":"10.1.2.0","env":"prod"}`,
		`{"msg":"paid with [card]","ip":"10.1.2.0","env":"prod"}`,
		`{"msg":"refund","ip":"192.168.0.0","env":"staging"}`,
	}
	for _, backend := range []string{"vm", "lua"} {
		t.Run(backend, func(t *testing.T) {
			cfg := loadExample(t, "pii")
			for i := range cfg.Filters {
				cfg.Filters[i].Backend = backend
			}
			var out bytes.Buffer
			runPipeline(t, cfg, Options{Stdout: &out})
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			sort.Strings(lines)
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestStageImportErrors: a policy whose module is missing or broken is
// an error before anything runs, at the import or at the module's line.
func TestStageImportErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "p.policy", "policy \"p\"\n\nimport \"lib/m.policy\"\n\nset .x = m.f(1)\n")
	cfg := tailConfig(t, dir, "  filters:\n    - name: policy\n      file: p.policy\n"+toNull, "in.log")
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "E0615") {
		t.Errorf("a missing module: %v", err)
	}
	writeFile(t, dir, "lib/m.policy", "module \"m\"\n\nfn f(n: int) string {\n  return n\n}\n")
	if _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "E0605") || !strings.Contains(err.Error(), "lib/m.policy") {
		t.Errorf("a broken module: %v", err)
	}
}

// TestModulesLoadedOnce: the policies of one load of the config share
// their modules, each file read (so parsed and checked) once however
// often it is imported, and a reload reads them again, seeing what
// changed.
func TestModulesLoadedOnce(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "lib/m.policy", "module \"m\"\n\nimport \"n.policy\"\n\nfn f(s: string) string {\n  return n.g(s) + \"!\"\n}\n")
	writeFile(t, dir, "lib/n.policy", "module \"n\"\n\nfn g(s: string) string {\n  return upper(s)\n}\n")
	writeFile(t, dir, "a.policy", "policy \"a\"\n\nimport \"lib/m.policy\"\n\nset .a = m.f(\"a\")\n")
	writeFile(t, dir, "b.policy", "policy \"b\"\n\nimport \"lib/m.policy\"\nimport \"lib/n.policy\"\n\nset .b = m.f(n.g(\"b\"))\n")
	writeFile(t, dir, "in.log", "")
	cfg := tailConfig(t, dir, "  filters:\n    - name: policy\n      file: a.policy\n    - name: policy\n      file: b.policy\n      backend: lua\n    - name: policy\n      file: a.policy\n"+toNull, "in.log")
	var mu sync.Mutex
	reads := map[string]int{}
	count := func(want int) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		for _, m := range []string{"m.policy", "n.policy"} {
			if reads[m] != want {
				t.Errorf("%s read %d times, want %d", m, reads[m], want)
			}
		}
	}
	read := func(path string) ([]byte, error) {
		mu.Lock()
		reads[filepath.Base(path)]++
		mu.Unlock()
		return policy.ReadFile(path)
	}
	p, err := New(cfg, Options{readModule: read})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	count(1)

	writeFile(t, dir, "lib/n.policy", "module \"n\"\n\nfn g(s: string) string {\n  return 1\n}\n")
	if err := p.Reload(); err == nil || !strings.Contains(err.Error(), "E0605") || !strings.Contains(err.Error(), "n.policy") {
		t.Errorf("a reload after the module broke: %v", err)
	}
	count(2)
	writeFile(t, dir, "lib/n.policy", "module \"n\"\n\nfn g(s: string) string {\n  return lower(s)\n}\n")
	if err := p.Reload(); err != nil {
		t.Errorf("a reload after the module was mended: %v", err)
	}
	count(3)
}
