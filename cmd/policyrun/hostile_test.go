//go:build unix

package main

import (
	"os"
	"path/filepath"
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
