package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/state"
)

// statePipeline is a tail of app.log through a dedupe with counts and a
// rate limit to stdout, with a data_dir when dataDir is set.
func statePipeline(t *testing.T, dir, service string) string {
	writeFile(t, dir, "dedupe.policy", `policy "dedupe"
dedupe by .msg within "1h" count .repeats
rate_limit by .tenant to 2 per "1h"
`)
	return service + tailYAML("  filters:\n    - name: policy\n      alias: dd\n      file: dedupe.policy\n"+toStdout,
		"app.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms", "db: tail.db")
}

// TestStateRestart runs a pipeline twice over one data_dir: the second
// run remembers the keys the first kept, so that their repeats are
// dropped and counted, as the run summary and the metrics say.
func TestStateRestart(t *testing.T) {
	dir := t.TempDir()
	body := statePipeline(t, dir, "service:\n  data_dir: data\n")
	writeFile(t, dir, "app.log", `{"msg":"a","tenant":"x"}
{"msg":"a","tenant":"x"}
{"msg":"b","tenant":"y"}
`)
	var out bytes.Buffer
	s := runPipeline(t, writeConfig(t, dir, body), Options{Stdout: &out}).Summary()
	if got := out.String(); got != `{"msg":"a","tenant":"x","repeats":0}`+"\n"+`{"msg":"b","tenant":"y","repeats":0}`+"\n" {
		t.Fatalf("first run wrote %q", got)
	}
	if f := s.Filters[0]; f.Drops["dedupe"] != 1 || f.StateKeys != 4 || !f.Stateful {
		t.Errorf("first run: %+v", f)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "state", "dd.state")); err != nil {
		t.Fatal(err)
	}

	// The second run reads the lines appended: a and b are repeats within
	// the hour, c is new; x has one token of its two left.
	appendFile(t, dir, "app.log", `{"msg":"a","tenant":"z"}
{"msg":"c","tenant":"x"}
{"msg":"d","tenant":"x"}
{"msg":"b","tenant":"y"}
`)
	out.Reset()
	p := runPipeline(t, writeConfig(t, dir, body), Options{Stdout: &out})
	if got := out.String(); got != `{"msg":"c","tenant":"x","repeats":0}`+"\n" {
		t.Fatalf("second run wrote %q", got)
	}
	s = p.Summary()
	f := s.Filters[0]
	if f.Drops["dedupe"] != 2 || f.Drops["rate_limit"] != 1 {
		t.Errorf("second run: %+v", f)
	}
	text := summaryText(s)
	if !strings.Contains(text, "filter dd: in 4, dropped 3 (dedupe 2, rate_limit 1), faulted 0, state keys") {
		t.Errorf("summary:\n%s", text)
	}
	checkMetrics(t, p, `policyrun_filter_drops_total{name="dd",reason="dedupe"} 2`, `policyrun_filter_state_evictions_total{name="dd"} 0`, `policyrun_filter_state_keys{name="dd"} `)
}

// TestStateWithoutDataDir forgets everything between runs.
func TestStateWithoutDataDir(t *testing.T) {
	dir := t.TempDir()
	body := statePipeline(t, dir, "")
	writeFile(t, dir, "app.log", `{"msg":"a","tenant":"x"}`+"\n")
	var out bytes.Buffer
	runPipeline(t, writeConfig(t, dir, body), Options{Stdout: &out})
	os.Remove(filepath.Join(dir, "tail.db"))
	out.Reset()
	runPipeline(t, writeConfig(t, dir, body), Options{Stdout: &out})
	if got := out.String(); got != `{"msg":"a","tenant":"x","repeats":0}`+"\n" {
		t.Errorf("second run wrote %q", got)
	}
}

// TestStateMemoryLimit refuses a pipeline whose policies may hold more
// than service.state_memory_limit, naming them.
func TestStateMemoryLimit(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "app.log", "")
	writeFile(t, dir, "big.policy", `policy "big"
dedupe by .msg within "1m" max_keys 1000000
`)
	cfg := writeConfig(t, dir, "service:\n  state_memory_limit: 16MiB\n"+
		pipelineYAML("  filters:\n    - name: policy\n      alias: big\n      file: big.policy\n"+toNull, inputItem("name: tail", "path: app.log")))
	_, err := New(cfg, Options{})
	big := sizeText(state.Spec{Kind: state.Dedupe, MaxKeys: 1_000_000}.Memory())
	if err == nil || !strings.Contains(fmt.Sprint(err), "big (big.policy) "+big) || !strings.Contains(fmt.Sprint(err), "state_memory_limit 16.0 MiB") {
		t.Errorf("New: %v", err)
	}
}

// TestDedupeExample runs examples/dedupe (in a copy, since it writes its
// data_dir): a noisy service's errors deduplicated with counts, then a
// rate limit per tenant, each filter's state saved in data_dir.
func TestDedupeExample(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../examples/dedupe")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p := runPipeline(t, writeConfig(t, dir, readFile(t, dir, "pipeline.yaml")), Options{Stdout: &out})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 10 || lines[0] != `{"service":"api","level":"error","msg":"db timeout","tenant":"acme","n":0,"repeats":0}` ||
		lines[9] != `{"service":"web","level":"error","msg":"disk full","tenant":"globex","n":99,"repeats":0}` {
		t.Errorf("got\n%s", out.String())
	}
	s := p.Summary()
	if errs, tenants := s.Filters[0], s.Filters[1]; errs.Drops["dedupe"] != 39 || tenants.Drops["rate_limit"] != 16 {
		t.Errorf("filters %+v", s.Filters)
	}
	for _, name := range []string{"errors.state", "tenants.state"} {
		if _, err := os.Stat(filepath.Join(dir, "data", "state", name)); err != nil {
			t.Error(err)
		}
	}
}

// TestStateReload: a reload keeps a filter's state for the statements
// whose text did not change, and starts a changed one empty.
func TestStateReload(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "app.log", "")
	policy := func(extra string) {
		writeFile(t, dir, "d.policy", "policy \"d\"\ndedupe by .msg within \"1h\"\nrate_limit by .msg to 1 per \"1h\""+extra+"\n"+"set .v = 1\n")
	}
	policy("")
	cfg := tailConfig(t, dir, "  filters:\n    - name: policy\n      alias: d\n      file: d.policy\n"+toFile, "app.log", "parser: json", "poll_interval: 5ms")
	var log testsync.Buffer
	p, stop := startRun(t, cfg, &log)
	lines := func() int { return strings.Count(readFile(t, dir, "out.log"), "\n") }
	appendFile(t, dir, "app.log", `{"msg":"a"}`+"\n")
	if !eventually(5*time.Second, func() bool { return lines() == 1 }) {
		t.Fatal("the first record did not come out")
	}
	// The dedupe's text stays; the rate_limit's changes (max_keys).
	policy(" max_keys 10")
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	appendFile(t, dir, "app.log", `{"msg":"a"}`+"\n"+`{"msg":"b"}`+"\n")
	if !eventually(5*time.Second, func() bool { return p.Summary().Filters[0].In == 3 }) {
		t.Fatal("the records after the reload were not read")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, dir, "out.log"); got != `{"msg":"a","v":1}`+"\n"+`{"msg":"b","v":1}`+"\n" {
		t.Errorf("out.log %q: the reload forgot a", got)
	}
	if f := p.Summary().Filters[0]; f.Drops["dedupe"] != 1 || f.StateKeys != 3 {
		t.Errorf("%+v", f)
	}
}
