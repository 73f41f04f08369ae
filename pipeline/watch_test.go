package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// waitReloads waits until p has counted ok reloads and failed failed
// ones, or fails the test with the counts and the log.
func waitReloads(t *testing.T, p *Pipeline, log *testsync.Buffer, ok, failed int64) {
	t.Helper()
	if !eventually(5*time.Second, func() bool {
		s := p.Summary()
		return s.Reloads == ok && s.FailedReloads == failed
	}) {
		s := p.Summary()
		t.Fatalf("reloads ok %d, failed %d; want %d, %d\n%s", s.Reloads, s.FailedReloads, ok, failed, log.String())
	}
}

// TestWatch runs a pipeline with service.watch polling every 100 ms: a
// changed policy reloads it; a policy rewritten as it was (a new time,
// the same bytes) does not; a bad one fails once, not at every poll, and
// its mending reloads; a changed config reloads, and the files it names
// anew are watched; watch: false in it stops the watch (SIGHUP still
// reloads).
func TestWatch(t *testing.T) {
	dir := t.TempDir()
	writeGen(t, dir, 1, "")
	writeFile(t, dir, "app.log", "")
	const watch = "  watch: true\n  watch_interval: 100ms\n"
	var log testsync.Buffer
	p, stop := startRun(t, writeConfig(t, dir, genConfig(watch, "")), &log)
	reloads := func(ok, failed int64) { t.Helper(); waitReloads(t, p, &log, ok, failed) }
	quiet := func(ok, failed int64) { // a few polls pass without a reload
		t.Helper()
		time.Sleep(500 * time.Millisecond)
		reloads(ok, failed)
	}
	records := 0
	expect := func(gen int) {
		t.Helper()
		appendRecords(t, dir, "app.log", records, records+10)
		records += 10
		for n, g := range waitOut(t, p, dir, int64(records)) {
			if n >= int64(records-10) && g != gen {
				t.Errorf("record %d ran on generation %d, want %d", n, g, gen)
			}
		}
	}
	expect(1)

	writeGen(t, dir, 2, "")
	reloads(1, 0)
	expect(2)

	later := time.Now().Add(time.Minute)
	for _, f := range []string{"gen.policy", "mark.policy", "pipeline.yaml"} {
		if err := os.Chtimes(filepath.Join(dir, f), later, later); err != nil {
			t.Fatal(err)
		}
	}
	quiet(1, 0)

	writeFile(t, dir, "gen.policy", "policy \"gen\"\n\nset .v = nope\n")
	reloads(1, 1)
	quiet(1, 1)
	expect(2)
	writeGen(t, dir, 3, "")
	reloads(2, 1)
	expect(3)

	// A config that names one more policy: it is watched too.
	writeFile(t, dir, "extra.policy", "policy \"extra\"\n\nset .extra = 1\n")
	writeFile(t, dir, "pipeline.yaml", strings.Replace(genConfig(watch, ""), "  outputs:", "    - name: policy\n      file: extra.policy\n  outputs:", 1))
	reloads(3, 1)
	writeFile(t, dir, "extra.policy", "policy \"extra\"\n\nset .extra = 2\n")
	reloads(4, 1)

	writeFile(t, dir, "pipeline.yaml", genConfig("  watch: false\n", ""))
	reloads(5, 1)
	writeGen(t, dir, 4, "")
	quiet(5, 1)
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	expect(4)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotRacy: a file rewritten with the same size and given the
// same time (a file system whose clock has 1 s or 2 s ticks) is hashed
// again while its time is recent, so the change shows; a file touched
// with its bytes as they were shows none.
func TestSnapshotRacy(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "p.policy")
	writeFile(t, dir, "p.policy", "policy \"p\"\n\nset .v = \"g1\"\n")
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot([]string{name}, nil)
	writeFile(t, dir, "p.policy", "policy \"p\"\n\nset .v = \"g2\"\n")
	if err := os.Chtimes(name, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	after := snapshot([]string{name}, before)
	if !changed(before, after) {
		t.Error("a rewrite of the same size and time within the clock's tick does not show")
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(name, later, later); err != nil {
		t.Fatal(err)
	}
	if changed(after, snapshot([]string{name}, after)) {
		t.Error("a file touched, its bytes as they were, shows a change")
	}
}

// TestWatchModules: service.watch polls the modules the policies import
// too: a changed module reloads, a broken one fails the reload, its
// mending reloads, and a module that a failed reload could not read is
// watched until it is written.
func TestWatchModules(t *testing.T) {
	dir := t.TempDir()
	module := func(name, ret string) string {
		return "module \"" + name + "\"\n\nfn v() int {\n  return " + ret + "\n}\n"
	}
	writeFile(t, dir, "app.log", "")
	writeFile(t, dir, "lib/m.policy", module("m", "1"))
	writeFile(t, dir, "p.policy", "policy \"p\"\n\nimport \"lib/m.policy\"\n\nset .v = m.v()\n")
	cfg := writeConfig(t, dir, "service:\n  watch: true\n  watch_interval: 100ms\npipeline:\n  inputs:\n    - name: tail\n      path: app.log\n"+
		"  filters:\n    - name: policy\n      file: p.policy\n"+toNull)
	var log testsync.Buffer
	p, _ := startRun(t, cfg, &log)
	reloads := func(ok, failed int64) { t.Helper(); waitReloads(t, p, &log, ok, failed) }
	writeFile(t, dir, "lib/m.policy", module("m", "2"))
	reloads(1, 0)
	writeFile(t, dir, "lib/m.policy", module("m", `"two"`))
	reloads(1, 1)
	writeFile(t, dir, "lib/m.policy", module("m", "3"))
	reloads(2, 1)

	writeFile(t, dir, "p.policy", "policy \"p\"\n\nimport \"lib/n.policy\"\n\nset .v = n.v()\n")
	reloads(2, 2)
	writeFile(t, dir, "lib/n.policy", module("n", "4"))
	reloads(3, 2)
}
