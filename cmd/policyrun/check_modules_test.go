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

// eval, disasm and test with modules: a policy that imports a module and
// takes a parameter gives the same records on both backends; disasm
// names the module's file; test runs the module's asserts.
func TestEvalModules(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"lib/net.policy": "module \"net\"\n\nfn mask(ip: string, keep: int = 3) string {\n  return join(slice(split(ip, \".\"), 0, keep), \".\")\n}\n\n" +
			"test \"keeps\" {\n  assert mask(\"10.1.2.3\", 2) == \"10.1\"\n}\n",
		"p.policy": "policy \"p\"\n\nimport \"lib/net.policy\"\n\nschema {\n  ip: string\n  ...\n}\n\nparam keep: int = 3\n\nset .ip = net.mask(.ip, keep)\n",
	})
	p := filepath.Join(dir, "p.policy")
	for _, b := range []string{"vm", "lua"} {
		code, stdout, stderr := runWith(`{"ip":"10.1.2.3"}`+"\n", "eval", "--backend", b, "--param", "keep=2", "--policy", p)
		if code != 0 || stdout != `{"ip":"10.1"}`+"\n" {
			t.Errorf("eval --backend %s: exit %d, %q\n%s", b, code, stdout, stderr)
		}
	}
	if code, stdout, _ := runCLI("disasm", p); code != 0 || !strings.Contains(stdout, "of net.policy, in fn net.mask inlined at line 12") {
		t.Errorf("disasm: exit %d\n%s", code, stdout)
	}
	if code, stdout, _ := runCLI("test", dir); code != 0 || !strings.Contains(stdout, "1 passed, 0 failed") {
		t.Errorf("test: exit %d\n%s", code, stdout)
	}
}
