package main

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestVersion: version and --version print the module version and the Go
// version; a binary built from this checkout says its revision too.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, stdout, _ := runWith("", args...)
		if code != 0 || !strings.HasPrefix(stdout, "policyrun ") || !strings.Contains(stdout, "go "+runtime.Version()) {
			t.Errorf("%v: exit %d, %q", args, code, stdout)
		}
	}
	if code, _, _ := runWith("", "version", "extra"); code != 2 {
		t.Errorf("version with an argument: exit %d", code)
	}
	needChildProcess(t)
	if err := exec.Command("git", "rev-parse", "HEAD").Run(); err != nil {
		t.Skip("not in a git checkout:", err)
	}
	bin := t.TempDir() + "/policyrun"
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "revision ") {
		t.Errorf("a build from the checkout does not say its revision:\n%s", out)
	}
}
