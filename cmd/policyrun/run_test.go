package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunSecondSignal checks that a second SIGINT ends a run whose drain is
// stuck on an output that does not take data (stdout into a pipe nobody
// reads): the first asks for a clean stop, the second must not be ignored.
func TestRunSecondSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real process")
	}
	dir := t.TempDir()
	line := `{"msg":"` + strings.Repeat("x", 200) + `"}` + "\n"
	os.WriteFile(filepath.Join(dir, "a.log"), []byte(strings.Repeat(line, 5000)), 0o644)
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(`
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
  outputs:
    - name: stdout
`), 0o644)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], "run", "--quiet", "p.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "POLICYRUN_AS_CLI=1")
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
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
