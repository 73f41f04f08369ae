package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// TestRunSecondSignal checks that a second SIGINT ends a run whose drain is
// stuck on an output that does not take data (stdout into a pipe nobody
// reads): the first asks for a clean stop, the second must not be ignored.
func TestRunSecondSignal(t *testing.T) {
	needChildProcess(t)
	line := `{"msg":"` + strings.Repeat("x", 200) + `"}` + "\n"
	dir := writeFiles(t, map[string]string{
		"a.log": strings.Repeat(line, 5000),
		"p.yaml": headPipeline(`
  outputs:
    - name: stdout
`),
	})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := cliCommand(dir, "run", "--quiet", "p.yaml")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()
	// The first SIGINT must come once the output is blocked, which also
	// means the run catches signals: sent after a fixed pause, it came,
	// on a loaded machine, before the child had started, and ended it.
	blocked := testsync.Eventually(30*time.Second, func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the run ended before its output blocked: %v", err)
		default:
		}
		return writing(t, cmd.Process.Pid, 1)
	})
	if !blocked {
		t.Fatal("the run's output did not block on the full pipe within 30s")
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		done <- err
		t.Fatalf("the run ended with its output blocked: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		done <- err
	case <-time.After(30 * time.Second):
		t.Fatal("a second SIGINT did not end the run")
	}
}

// TestRunCheckChangesNothing checks that run --check validates outputs
// without creating them or cutting the partial last line of one that exists,
// and still finds an output whose directory is missing.
func TestRunCheckChangesNothing(t *testing.T) {
	partial := "{\"a\":1}\n{\"partial"
	cfg := `
pipeline:
  inputs:
    - name: tail
      path: a.log
  outputs:
    - name: file
      path: out.log
    - name: file
      path: new.log
`
	dir := writeFiles(t, map[string]string{"out.log": partial, "p.yaml": cfg})
	if code, _, stderr := runCLI("run", "--check", filepath.Join(dir, "p.yaml")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b := testfs.Read(t, filepath.Join(dir, "out.log")); b != partial {
		t.Errorf("--check changed out.log to %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.log")); err == nil {
		t.Error("--check created new.log")
	}
	testfs.Write(t, filepath.Join(dir, "p.yaml"), strings.Replace(cfg, "new.log", "nodir/new.log", 1))
	if code, _, stderr := runCLI("run", "--check", filepath.Join(dir, "p.yaml")); code != 1 ||
		!strings.Contains(stderr, "output at line 9") {
		t.Errorf("missing directory: exit %d, stderr %q", code, stderr)
	}
}

// TestRunCheckWarnings checks that run --check prints the warnings of
// every policy filter as policyrun check does (file:line:col, code, hint),
// once per file, counts them on the ok line and exits 0; a policy with an
// error still fails with every diagnostic.
func TestRunCheckWarnings(t *testing.T) {
	cfg := `
pipeline:
  inputs:
    - name: tail
      path: a.log
  filters:
    - name: policy
      file: warn.policy
    - name: policy
      file: clean.policy
    - name: policy
      file: warn.policy
  outputs:
    - name: null
`
	dir := writeFiles(t, map[string]string{
		"p.yaml":       cfg,
		"warn.policy":  "policy \"warn\"\n\nschema {\n  status: int\n  ...\n}\n\nset .s = .status ?? 0\ndrop when .stauts == 500\n",
		"clean.policy": "policy \"clean\"\n\nset .ok = true\n",
	})
	code, stdout, out := runCLI("run", "--check", filepath.Join(dir, "p.yaml"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	wantAll(t, "stderr", out,
		"warning[W0001]: .status is never absent: the default is dead",
		"--> "+filepath.Join(dir, "warn.policy")+":8:18",
		"warning[W0007]",
		filepath.Join(dir, "warn.policy")+":9:11",
		"= help: ",
		"p.yaml: ok (1 inputs, 3 filters, 1 outputs), 2 warnings\n",
	)
	if n := strings.Count(out, "warning[W0001]"); n != 1 {
		t.Errorf("the file run by two filters printed %d times:\n%s", n, out)
	}
	if stdout != "" {
		t.Errorf("stdout: %q", stdout)
	}

	// Without warnings the ok line is as before.
	testfs.Write(t, filepath.Join(dir, "p.yaml"), strings.ReplaceAll(cfg, "warn.policy", "clean.policy"))
	if code, _, stderr := runCLI("run", "--check", filepath.Join(dir, "p.yaml")); code != 0 ||
		!strings.HasSuffix(stderr, "p.yaml: ok (1 inputs, 3 filters, 1 outputs)\n") || strings.Contains(stderr, "warning") {
		t.Errorf("clean: exit %d, stderr %q", code, stderr)
	}

	// An error fails the check, with the warnings around it.
	testfs.Write(t, filepath.Join(dir, "p.yaml"), cfg)
	testfs.Write(t, filepath.Join(dir, "warn.policy"), "policy \"warn\"\n\nschema {\n  status: int\n  ...\n}\n\nset .s = .status ?? 0\ndrop when .status == \"500\"\n")
	if code, _, stderr := runCLI("run", "--check", filepath.Join(dir, "p.yaml")); code != 1 ||
		!strings.Contains(stderr, "error[E0301]") || !strings.Contains(stderr, "warning[W0001]") {
		t.Errorf("error: exit %d, stderr %q", code, stderr)
	}
}

// TestRunSummaryByAlias checks that the summary of policyrun run has a
// line per input, filter and output, keyed by alias, with a filter's
// faults by reason (here a Lua script that raises an error).
func TestRunSummaryByAlias(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.log": "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n",
		"bad.lua": `
function cb(tag, ts, record)
  if record["n"] > 1 then
    error("n too big")
  end
  return 0, ts, record
end
`,
		"p.yaml": `
pipeline:
  inputs:
    - name: tail
      alias: app
      path: a.log
      parser: json
      read_from_head: true
      exit_on_eof: true
  filters:
    - name: lua
      script: bad.lua
      call: cb
  outputs:
    - name: null
`,
	})
	code, _, stderr := runCLI("run", filepath.Join(dir, "p.yaml"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantAll(t, "the summary", stderr,
		"faults: lua_error 2\n",
		"input app: in 3, unparsed 0, bytes 24\n",
		"filter lua.0: in 3, dropped 0, faulted 2 (lua_error 2)\n",
		"output null.0: out 3, bytes ",
	)
}
