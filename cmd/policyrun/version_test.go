package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
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
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout:", err)
	}
	// Go stamps the revision only from a .git directory: a worktree's
	// .git is a file, and its builds say no revision (cmd/go's vcs).
	if fi, err := os.Stat(filepath.Join(strings.TrimSpace(string(top)), ".git")); err != nil || !fi.IsDir() {
		t.Skip("a git worktree (its .git is not a directory): go build stamps no revision")
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

// TestVersionFromLinker: a build without VCS information says the
// revision, time and version the linker was given (-X main.buildRevision
// …, as the container image is built), and only then.
func TestVersionFromLinker(t *testing.T) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				t.Skip("this test binary has VCS information, which wins over the linker's")
			}
		}
	}
	saved := [...]string{buildVersion, buildRevision, buildTime, buildModified}
	defer func() { buildVersion, buildRevision, buildTime, buildModified = saved[0], saved[1], saved[2], saved[3] }()

	buildVersion, buildRevision, buildTime, buildModified = "", "", "2026-12-01T10:00:00Z", ""
	if out := versionText(); strings.Contains(out, "revision") || strings.Contains(out, "time ") {
		t.Errorf("a build time without a revision is printed:\n%s", out)
	}
	buildVersion, buildRevision, buildModified = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "true"
	out := versionText()
	wantAll(t, "the version", out,
		"policyrun v1.2.3\n",
		"revision 0123456789abcdef0123456789abcdef01234567 (with uncommitted changes)\n",
		"time 2026-12-01T10:00:00Z\n",
	)
}
