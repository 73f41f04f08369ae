//go:build unix

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
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
		cfg := filepath.Join(writeFiles(t, map[string]string{
			"pipeline.yaml": "pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  filters:\n    - name: policy\n      file: " + path + "\n  outputs:\n    - name: stdout\n",
		}), "pipeline.yaml")
		for _, args := range [][]string{
			{"check", path},
			{"eval", "--policy", path},
			{"run", "--check", cfg},
			{"run", cfg},
		} {
			var code int
			var stderr string
			withDeadline(t, fmt.Sprint(args), 10*time.Second, func() {
				code, _, stderr = runWith("", args...)
			})
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
	const n = 1000
	files := map[string]string{"p.yaml": `service:
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
`}
	for i := range n {
		files[fmt.Sprintf("logs/f%04d.log", i)] = fmt.Sprintf("{\"file\":%d}\n", i)
	}
	dir := writeFiles(t, files)
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

// TestDeadLetterReplay: records the input acknowledged and the receiver
// refused (400) are kept in the output's dead_letter directory, counted in
// the summary; `policyrun replay` sends them again once it takes them and
// empties the directory. They were dropped.
func TestDeadLetterReplay(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	rc := otlptest.New(t)
	rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if refuse.Load() {
			http.Error(w, "schema violation", http.StatusBadRequest)
			return true
		}
		return false
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	var lines strings.Builder
	for i := range 100 {
		fmt.Fprintf(&lines, "{\"n\":%d}\n", i)
	}
	dir := writeFiles(t, map[string]string{"a.log": lines.String(), "p.yaml": `service:
  data_dir: data
pipeline:
  inputs:
    - name: tail
      path: a.log
      parser: json
      read_from_head: true
      exit_on_eof: true
  outputs:
    - name: otlp
      endpoint: ` + srv.URL + `
      buffer:
        type: filesystem
      dead_letter:
        path: dead
`})
	cfg := filepath.Join(dir, "p.yaml")
	code, _, stderr := runWith("", "run", cfg)
	if code != 0 || !strings.Contains(stderr, "dead-lettered 100") {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	if rc.Count() != 0 {
		t.Fatalf("the receiver took %d records", rc.Count())
	}
	code, stdout, stderr := runWith("", "replay", "--config", cfg, filepath.Join(dir, "dead"))
	if code != 1 || !strings.Contains(stdout, "sent 0 requests") {
		t.Errorf("replay while still refused: exit %d, %s%s", code, stdout, stderr)
	}
	refuse.Store(false)
	code, stdout, stderr = runWith("", "replay", "--config", cfg, filepath.Join(dir, "dead"))
	if code != 0 || !strings.Contains(stdout, "(100 records), 0 left") {
		t.Fatalf("replay: exit %d, %s%s", code, stdout, stderr)
	}
	rc.Each(t, 100)
	if ents, _ := os.ReadDir(filepath.Join(dir, "dead")); len(ents) != 0 {
		t.Errorf("%d files left in the dead-letter directory", len(ents))
	}
	if code, _, stderr := runWith("", "replay", "--config", cfg, dir); code != 2 || !strings.Contains(stderr, "is the dead_letter directory of no output") {
		t.Errorf("replay of another directory: exit %d, %s", code, stderr)
	}
}
