package pipeline

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// genConfig is a pipeline of one tail input (app.log, JSON, from its
// head, with a checkpoint) through writeGen's filters to out.log, with
// service keys and more outputs as given.
func genConfig(service, outputs string) string {
	return "service:\n  batch_size: 1000\n" + service +
		tailYAML(genFilters+toFile+outputs, "app.log", "parser: json", "db: tail.db", "poll_interval: 5ms")
}

// waitOut waits until n records are out, and returns the generation of
// each record of out.log, by number.
func waitOut(t *testing.T, p *Pipeline, dir string, n int64) map[int64]int {
	t.Helper()
	if !eventually(10*time.Second, func() bool { return p.Summary().Out >= n }) {
		t.Fatalf("%d of %d records out", p.Summary().Out, n)
	}
	gens := map[int64]int{}
	for _, r := range readMarked(t, filepath.Join(dir, "out.log"), []string{"n"}, nil) {
		if r.marks != 1 || r.byGen != r.gen {
			t.Errorf("record %d: generation %d, %d marks of %d", r.n, r.gen, r.marks, r.byGen)
		}
		gens[r.n] = r.gen
	}
	return gens
}

// TestReloadBadPolicyKeepsOld: a reload with a policy that does not
// compile, or a config that does not parse, changes nothing: the old
// policies run on, every error is logged (the policy's diagnostic with
// its line and column, the config's with its line), and the reload is
// counted as failed; a reload once they are mended takes effect.
func TestReloadBadPolicyKeepsOld(t *testing.T) {
	dir := t.TempDir()
	writeGen(t, dir, 1, "")
	writeFile(t, dir, "app.log", "")
	cfg := writeConfig(t, dir, genConfig("", ""))
	var log testsync.Buffer
	p, stop := startRun(t, cfg, &log)
	appendRecords(t, dir, "app.log", 0, 10)
	waitOut(t, p, dir, 10)

	writeFile(t, dir, "gen.policy", "policy \"gen\"\n\nset .v = 1 + \"x\"\n")
	err := p.Reload()
	if err == nil || !strings.Contains(err.Error(), "cannot add int and string") {
		t.Fatalf("reload of a bad policy: %v", err)
	}
	if !strings.Contains(log.String(), "gen.policy:3:10") || !strings.Contains(log.String(), "reload failed; the running config goes on") {
		t.Errorf("the log does not give the error with its place:\n%s", log.String())
	}
	appendRecords(t, dir, "app.log", 10, 20)
	for n, g := range waitOut(t, p, dir, 20) {
		if g != 1 {
			t.Errorf("record %d ran on generation %d after a failed reload", n, g)
		}
	}

	// A config with two errors: both are logged.
	writeGen(t, dir, 2, "")
	writeFile(t, dir, "pipeline.yaml", strings.Replace(genConfig("", ""), "poll_interval: 5ms", "poll_interval: 5ms\n      colour: red\n      tag: [x", 1))
	if err := p.Reload(); err == nil {
		t.Fatal("a config that does not parse was reloaded")
	}
	if !strings.Contains(log.String(), "not valid YAML") {
		t.Errorf("the YAML error is not logged:\n%s", log.String())
	}
	writeFile(t, dir, "pipeline.yaml", strings.Replace(genConfig("", ""), "poll_interval: 5ms", "poll_interval: 5ms\n      colour: red\n      batch: 1", 1))
	if err := p.Reload(); err == nil || !strings.Contains(err.Error(), `unknown key "colour"`) || !strings.Contains(err.Error(), `unknown key "batch"`) {
		t.Fatalf("reload of a config with unknown keys: %v", err)
	}
	for _, want := range []string{`pipeline.yaml:12: input tail: unknown key \"colour\"`, `pipeline.yaml:13: input tail: unknown key \"batch\"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not have %s:\n%s", want, log.String())
		}
	}
	appendRecords(t, dir, "app.log", 20, 30)
	for n, g := range waitOut(t, p, dir, 30) {
		if g != 1 {
			t.Errorf("record %d ran on generation %d after failed reloads", n, g)
		}
	}
	s := p.Summary()
	if s.Reloads != 0 || s.FailedReloads != 3 || s.LastReload.IsZero() {
		t.Errorf("reloads ok %d, failed %d, last %v; want 0, 3 and the start", s.Reloads, s.FailedReloads, s.LastReload)
	}
	started := s.LastReload

	writeFile(t, dir, "pipeline.yaml", genConfig("", ""))
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, dir, "app.log", 30, 40)
	gens := waitOut(t, p, dir, 40)
	for n := range int64(40) {
		if want := map[bool]int{true: 2, false: 1}[n >= 30]; gens[n] != want {
			t.Errorf("record %d ran on generation %d, want %d", n, gens[n], want)
		}
	}
	s = p.Summary()
	if s.Reloads != 1 || s.FailedReloads != 3 || !s.LastReload.After(started) {
		t.Errorf("reloads ok %d, failed %d, last %v (start %v)", s.Reloads, s.FailedReloads, s.LastReload, started)
	}
	checkMetrics(t, p,
		"# TYPE policyrun_reloads_total counter\n",
		"policyrun_reloads_total{result=\"ok\"} 1\n",
		"policyrun_reloads_total{result=\"failed\"} 3\n",
		"# TYPE policyrun_last_reload_timestamp_seconds gauge\n")
	if !strings.Contains(summaryText(s), "reloads: ok 1, failed 3\n") {
		t.Errorf("summary:\n%s", summaryText(s))
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestReloadRefused: a reload that would change what cannot change while
// the pipeline runs is refused, naming each key, with the policies' errors
// of the same config; the running config goes on.
func TestReloadRefused(t *testing.T) {
	const second = "    - name: file\n      alias: second\n      match: none\n      path: second.log\n"
	tests := []struct {
		name, service, outputs string
		want                   []string
	}{
		{"service.grace", "  grace: 3s\n", second, []string{"service.grace changed: a reload cannot change it"}},
		{"service.data_dir and metrics", "  data_dir: data\n  metrics: 127.0.0.1:0\n", second, []string{"service.data_dir changed", "service.metrics changed"}},
		{"an output's path", "", strings.Replace(second, "second.log", "third.log", 1), []string{"output second: path changed: a reload changes only an output's match"}},
		{"an output's path and match", "", strings.Replace(strings.Replace(second, "second.log", "third.log", 1), "none", "x", 1), []string{"output second: path changed:"}},
		{"an output added", "", second + "    - name: null\n", []string{"output null.0 added: a reload cannot add an output"}},
		{"an output removed", "", "", []string{"output second removed: a reload cannot remove an output"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeGen(t, dir, 1, "")
			writeFile(t, dir, "app.log", "")
			cfg := writeConfig(t, dir, genConfig("", second))
			var log testsync.Buffer
			p, stop := startRun(t, cfg, &log)
			writeFile(t, dir, "pipeline.yaml", genConfig(tt.service, tt.outputs))
			writeFile(t, dir, "mark.policy", "policy \"mark\"\n\nset .by = nope\n")
			err := p.Reload()
			if err == nil {
				t.Fatal("reloaded")
			}
			for _, want := range append(tt.want, "mark.policy") {
				if !strings.Contains(err.Error(), want) || !strings.Contains(log.String(), want) {
					t.Errorf("the error and the log do not say %q: %v\n%s", want, err, log.String())
				}
			}
			writeGen(t, dir, 2, "")
			appendRecords(t, dir, "app.log", 0, 10)
			for n, g := range waitOut(t, p, dir, 10) {
				if g != 1 {
					t.Errorf("record %d ran on generation %d after a refused reload", n, g)
				}
			}
			if s := p.Summary(); s.Reloads != 0 || s.FailedReloads != 1 {
				t.Errorf("reloads: ok %d, failed %d", s.Reloads, s.FailedReloads)
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReloadOutputMatch: an output's match reloads in place, with the
// policies: records go where the new match sends them from the next
// batch, and the output (its file, its counters) runs on.
func TestReloadOutputMatch(t *testing.T) {
	const second = "    - name: file\n      alias: second\n      match: none\n      path: second.log\n"
	dir := t.TempDir()
	writeGen(t, dir, 1, "")
	writeFile(t, dir, "app.log", "")
	var log testsync.Buffer
	p, stop := startRun(t, writeConfig(t, dir, genConfig("", second)), &log)
	appendRecords(t, dir, "app.log", 0, 10)
	waitOut(t, p, dir, 10)
	writeGen(t, dir, 2, "")
	writeFile(t, dir, "pipeline.yaml", genConfig("", strings.Replace(second, "match: none", `match: "*"`, 1)))
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, dir, "app.log", 10, 20)
	if !eventually(10*time.Second, func() bool { return p.Summary().Outputs[1].Out == 10 }) {
		t.Fatalf("the second output has %d records", p.Summary().Outputs[1].Out)
	}
	for _, r := range readMarked(t, filepath.Join(dir, "second.log"), []string{"n"}, nil) {
		if r.n < 10 || r.gen != 2 {
			t.Errorf("second.log has record %d of generation %d", r.n, r.gen)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if s := p.Summary(); s.Outputs[0].Out != 20 || s.Filters[0].In != 20 || s.Inputs[0].In != 20 {
		t.Errorf("the counters did not run on across the reload: %+v", s)
	}
}
