//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPolicyPathNotARegularFile: a policy path that names a FIFO or a
// device is refused at once by check, eval and run (with or without
// --check), with the path and what it is. A FIFO hung run past SIGTERM;
// /dev/zero grew to 24 GB.
func TestPolicyPathNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "p.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, path := range []string{fifo, "/dev/zero"} {
		cfg := filepath.Join(dir, "pipeline.yaml")
		os.WriteFile(cfg, []byte("pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  filters:\n    - name: policy\n      file: "+path+"\n  outputs:\n    - name: stdout\n"), 0o644)
		for _, args := range [][]string{
			{"check", path},
			{"eval", "--policy", path},
			{"run", "--check", cfg},
			{"run", cfg},
		} {
			done := make(chan struct{})
			var code int
			var stderr string
			go func() {
				code, _, stderr = runWith("", args...)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatalf("%v: still running after 10 s", args)
			}
			if code == 0 || !strings.Contains(stderr, "not a regular file") {
				t.Errorf("%v: exit %d, %q; want an error saying it is not a regular file", args, code, stderr)
			}
		}
	}
}

// TestTailFilesPastFDLimit: 1,000 files under `ulimit -n 256` arrive
// exactly once each, and exit_on_eof waits for all of them. The tail
// opened files until the process ran out of descriptors: the rest were
// never read, checkpoint saves failed, and exit_on_eof exited 0.
func TestTailFilesPastFDLimit(t *testing.T) {
	needChildProcess(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "logs"), 0o755)
	const n = 1000
	for i := range n {
		os.WriteFile(filepath.Join(dir, "logs", fmt.Sprintf("f%04d.log", i)), fmt.Appendf(nil, "{\"file\":%d}\n", i), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(`service:
  data_dir: data
pipeline:
  inputs:
    - name: tail
      path: logs/*.log
      read_from_head: true
      exit_on_eof: true
  outputs:
    - name: file
      path: out.txt
`), 0o644)
	cmd := cliCommand(dir, "run", "--quiet", "p.yaml")
	cmd.Args = append([]string{"sh", "-c", `ulimit -n 256 && exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "out.txt"))
	seen := map[string]int{}
	// Each line is the file's JSON in a log field, escaped.
	for _, m := range regexp.MustCompile(`file\\?":(\d+)`).FindAllStringSubmatch(string(got), -1) {
		seen[m[1]]++
	}
	for i := range n {
		if k := strconv.Itoa(i); seen[k] != 1 {
			t.Fatalf("%s arrived %d times (%d lines in all: %.200s)\n%s", k, seen[k], strings.Count(string(got), "\n"), got, out)
		}
	}
}
