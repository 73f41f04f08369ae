package pipeline

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/policy"
)

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

// TestWatchModules: service.watch polls the modules the policies import
// too: a changed module reloads, a broken one fails the reload, its
// mending reloads, and a module that a failed reload could not read is
// watched until it is written.
func TestWatchModules(t *testing.T) {
	dir := t.TempDir()
	module := func(name, ret string) string {
		return "module \"" + name + "\"\n\nfn v() int {\n  return " + ret + "\n}\n"
	}
	writeFile(t, dir, "app.log", "")
	writeFile(t, dir, "lib/m.policy", module("m", "1"))
	writeFile(t, dir, "p.policy", "policy \"p\"\n\nimport \"lib/m.policy\"\n\nset .v = m.v()\n")
	cfg := writeConfig(t, dir, "service:\n  watch: true\n  watch_interval: 100ms\npipeline:\n  inputs:\n    - name: tail\n      path: app.log\n"+
		"  filters:\n    - name: policy\n      file: p.policy\n"+toNull)
	var log testsync.Buffer
	p, _ := startRun(t, cfg, &log)
	reloads := func(ok, failed int64) { t.Helper(); waitReloads(t, p, &log, ok, failed) }
	writeFile(t, dir, "lib/m.policy", module("m", "2"))
	reloads(1, 0)
	writeFile(t, dir, "lib/m.policy", module("m", `"two"`))
	reloads(1, 1)
	writeFile(t, dir, "lib/m.policy", module("m", "3"))
	reloads(2, 1)

	writeFile(t, dir, "p.policy", "policy \"p\"\n\nimport \"lib/n.policy\"\n\nset .v = n.v()\n")
	reloads(2, 2)
	writeFile(t, dir, "lib/n.policy", module("n", "4"))
	reloads(3, 2)
}
