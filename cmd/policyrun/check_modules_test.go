package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// check DIR checks modules and policies together: a module imported by
// two policies is checked once, its error reported once (at the module's
// line, naming the import), and both policies fail to compile.
func TestCheckModulesOnce(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"lib/m.policy": "module \"m\"\n\nfn f(s: string) int {\n  return s\n}\n\nconst c = 1\n",
		"a.policy":     "policy \"a\"\n\nimport \"lib/m.policy\"\n\nset .x = m.c\n",
		"b.policy":     "policy \"b\"\n\nimport \"lib/m.policy\"\n\nset .y = m.c\n",
		"ok/n.policy":  "module \"n\"\n\nconst k = 2\n",
		"ok/p.policy":  "policy \"p\"\n\nimport \"n.policy\"\n\nset .k = n.k\n",
	})
	code, stdout, stderr := runCLI("check", dir)
	if code != 1 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "error[E0605]"); n != 1 {
		t.Errorf("the module's error reported %d times, want once:\n%s", n, stdout)
	}
	if !strings.Contains(stdout, filepath.Join(dir, "lib/m.policy")+":4:10") || !strings.Contains(stdout, "(in module m, imported at "+filepath.Join(dir, "a.policy")+":3:1)") {
		t.Errorf("the error is not at the module's line with its import chain:\n%s", stdout)
	}
	if n := strings.Count(stdout, "error[E0615]"); n != 1 {
		t.Errorf("the second importer got %d E0615, want 1:\n%s", n, stdout)
	}
	if !strings.HasSuffix(strings.TrimSpace(stderr), "2 errors, 0 warnings in 5 files") {
		t.Errorf("stderr %q", stderr)
	}
	if code, stdout, _ := runCLI("check", filepath.Join(dir, "ok")); code != 0 {
		t.Errorf("a clean module and its importer: exit %d\n%s", code, stdout)
	}
}
