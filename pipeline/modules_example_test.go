package pipeline

import (
	"bytes"
	"sort"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/config"
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
			cfg, err := config.Load("../examples/pii/pipeline.yaml")
			if err != nil {
				t.Fatal(err)
			}
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
