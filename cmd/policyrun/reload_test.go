package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// TestRunSIGHUPReloads: SIGHUP makes a running policyrun run read its
// config and policies again: the new policy runs on the records that
// follow, a policy that does not compile is logged with its diagnostic
// and the running one goes on, the metrics count both, and the process
// stops cleanly as ever, its summary counting the reloads.
func TestRunSIGHUPReloads(t *testing.T) {
	needChildProcess(t)
	policy := func(v string) string { return "policy \"p\"\n\nset .v = \"" + v + "\"\n" }
	dir := writeFiles(t, map[string]string{
		"a.log":    "",
		"p.policy": policy("old"),
		"p.yaml": `
service:
  metrics: 127.0.0.1:0
pipeline:
  inputs:
    - name: tail
      path: a.log
      parser: json
      read_from_head: true
      poll_interval: 20ms
      db: a.db
  filters:
    - name: policy
      file: p.policy
  outputs:
    - name: file
      path: out.log
`,
	})
	c := startRun(t, dir, "p.yaml")
	var addr string
	if !testsync.Eventually(10*time.Second, func() bool {
		m := regexp.MustCompile(`metrics at http://(\S+)/metrics`).FindStringSubmatch(c.stderr.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("no metrics address:\n%s", c.stderr)
	}
	n := 0
	send := func(want string) {
		t.Helper()
		var b strings.Builder
		for range 10 {
			fmt.Fprintf(&b, `{"n":%d}`+"\n", n)
			n++
		}
		testfs.Append(t, filepath.Join(dir, "a.log"), b.String())
		var lines []string
		if !testsync.Eventually(10*time.Second, func() bool {
			data, _ := os.ReadFile(filepath.Join(dir, "out.log"))
			lines = strings.Split(strings.TrimSpace(string(data)), "\n")
			return len(lines) == n
		}) {
			t.Fatalf("%d of %d records out\n%s", len(lines), n, c.stderr)
		}
		for _, l := range lines[n-10:] {
			var r struct{ V string }
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.V != want {
				t.Errorf("record %s: want v %q", l, want)
			}
		}
	}
	send("old")

	testfs.Write(t, filepath.Join(dir, "p.policy"), policy("new"))
	c.cmd.Process.Signal(syscall.SIGHUP)
	if !testsync.Eventually(10*time.Second, func() bool { return strings.Contains(c.stderr.String(), "p.yaml: reloaded") }) {
		t.Fatalf("no reload after SIGHUP:\n%s", c.stderr)
	}
	send("new")

	testfs.Write(t, filepath.Join(dir, "p.policy"), "policy \"p\"\n\nset .v = 1 + \"x\"\n")
	c.cmd.Process.Signal(syscall.SIGHUP)
	if !testsync.Eventually(10*time.Second, func() bool { return strings.Contains(c.stderr.String(), "reload failed; the running config goes on") }) {
		t.Fatalf("the failed reload is not logged:\n%s", c.stderr)
	}
	if !strings.Contains(c.stderr.String(), "p.policy:3:10") {
		t.Errorf("the log does not give the policy's error with its place:\n%s", c.stderr)
	}
	send("new")
	if ok, failed := metric(addr, `policyrun_reloads_total{result="ok"}`), metric(addr, `policyrun_reloads_total{result="failed"}`); ok != 1 || failed != 1 {
		t.Errorf("metrics: reloads ok %d, failed %d; want 1, 1", ok, failed)
	}
	c.stop(t, syscall.SIGTERM, 10*time.Second)
	if !strings.Contains(c.stderr.String(), "reloads: ok 1, failed 1\n") {
		t.Errorf("the summary does not count the reloads:\n%s", c.stderr)
	}
}
