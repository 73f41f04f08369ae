package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testfs"
)

// TestRunSecondSignal checks that a second SIGINT ends a run whose drain is
// stuck on an output that does not take data (stdout into a pipe nobody
// reads): the first asks for a clean stop, the second must not be ignored.
func TestRunSecondSignal(t *testing.T) {
	needChildProcess(t)
	line := `{"msg":"` + strings.Repeat("x", 200) + `"}` + "\n"
	dir := writeFiles(t, map[string]string{
		"a.log": strings.Repeat(line, 5000),
		"p.yaml": `
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
  outputs:
    - name: stdout
`,
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
	time.Sleep(300 * time.Millisecond) // the pipe is full: the output blocks
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		t.Fatalf("the run ended with its output blocked: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
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
	var stdout, stderr bytes.Buffer
	if code := runPipeline([]string{"--check", filepath.Join(dir, "p.yaml")}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if b := testfs.Read(t, filepath.Join(dir, "out.log")); b != partial {
		t.Errorf("--check changed out.log to %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.log")); err == nil {
		t.Error("--check created new.log")
	}
	testfs.Write(t, filepath.Join(dir, "p.yaml"), strings.Replace(cfg, "new.log", "nodir/new.log", 1))
	stderr.Reset()
	if code := runPipeline([]string{"--check", filepath.Join(dir, "p.yaml")}, nil, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "output at line 9") {
		t.Errorf("missing directory: exit %d, stderr %q", code, stderr.String())
	}
}
