package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, tag string
		want         bool
	}{
		{"*", "", true},
		{"*", "kube.a", true},
		{"kube.*", "kube.var.log", true},
		{"kube.*", "kub", false},
		{"kube.*.log", "kube.var.log", true},
		{"kube.*.log", "kube.var.txt", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.tag); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.tag, got, tt.want)
		}
	}
}

func TestTag(t *testing.T) {
	if got := Tag("kube.*", "/var/log/containers/app.log"); got != "kube.var.log.containers.app.log" {
		t.Errorf("Tag = %q", got)
	}
	if got := Tag("plain", "/x"); got != "plain" {
		t.Errorf("Tag = %q", got)
	}
}

// dropStage drops records whose "level" is "debug" and counts a fault for
// records with "fault": true: a processor for testing the plumbing around
// stages, not a stand-in for a backend (stage_test.go runs the real ones).
type dropStage struct{}

func (dropStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	var c StageCounts
	out := recs[:0]
	for _, r := range recs {
		if v, ok := r.Get(record.NewPath("level")); ok && r.Arena().Str(v) == "debug" {
			c.Dropped++
			continue
		}
		if v, ok := r.Get(record.NewPath("fault")); ok && v.Bool() {
			c.Faulted++
			c.Faults = map[string]int64{"type_mismatch": 1}
		}
		out = append(out, r)
	}
	return out, c
}

func (dropStage) Close() error { return nil }

func writeConfig(t *testing.T, dir, body string) *config.Config {
	t.Helper()
	path := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPipelineEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := 0; i < 500; i++ {
		level := "info"
		if i%5 == 0 {
			level = "debug"
		}
		lines = append(lines, fmt.Sprintf(`{"n":%d,"level":%q}`, i, level))
	}
	lines = append(lines, `{"broken":`, `{"n":-1,"fault":true}`)
	os.WriteFile(filepath.Join(dir, "app.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: app.log
      tag: app.*
      parser: json
      read_from_head: true
      exit_on_eof: true
      poll_interval: 10ms
      db: tail.db
  filters:
    - name: policy
      match: app.*
      file: unused.policy
  outputs:
    - name: stdout
      match: app.*
    - name: file
      match: nothing
      path: out.log
`)
	stage := func(config.Filter, string) (Processor, error) { return dropStage{}, nil }
	var out bytes.Buffer
	p, err := New(cfg, Options{Stdout: &out, NewProcessor: stage})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	p.Close()
	s := p.Summary()
	if s.In != 502 || s.Dropped != 100 || s.Out != 402 || s.Unparsed != 1 || s.Faulted != 1 {
		t.Errorf("summary = %+v", s)
	}
	if got := strings.Count(out.String(), "\n"); got != 402 {
		t.Errorf("stdout has %d lines, want 402", got)
	}
	if !strings.Contains(out.String(), `"parse_error"`) {
		t.Error("the unparsed line is not in the output")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.log")); len(b) != 0 {
		t.Errorf("the file output matched nothing but got %d bytes", len(b))
	}
	var sum bytes.Buffer
	s.Write(&sum)
	if !strings.Contains(sum.String(), "records: in 502, out 402, dropped 100, faulted 1, unparsed 1") ||
		!strings.Contains(sum.String(), "faults: type_mismatch 1") {
		t.Errorf("summary text:\n%s", sum.String())
	}

	// A second run resumes from the checkpoint: nothing is read again.
	out.Reset()
	p2, err := New(cfg, Options{Stdout: &out, NewProcessor: stage})
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	p2.Close()
	if s := p2.Summary(); s.In != 0 || out.Len() != 0 {
		t.Errorf("second run read %d records again: %q", s.In, out.String())
	}
}

func TestCorruptCheckpointStartsFromHead(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("one\ntwo\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "tail.db"), []byte{1, 2, 3}, 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
      exit_on_eof: true
      poll_interval: 10ms
      db: tail.db
  outputs:
    - name: stdout
`)
	var out bytes.Buffer
	p, err := New(cfg, Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if out.String() != "{\"log\":\"one\"}\n{\"log\":\"two\"}\n" {
		t.Errorf("output = %q", out.String())
	}
	if p.stats.BadCheckpoints.Load() != 1 {
		t.Error("the corrupt checkpoint was not counted")
	}
	var sum bytes.Buffer
	p.Summary().Write(&sum)
	if !strings.Contains(sum.String(), "checkpoint errors: unreadable 1, not saved 0\n") {
		t.Errorf("the summary does not report the corrupt checkpoint:\n%s", sum.String())
	}
}

func TestMetricsEndpoint(t *testing.T) {
	p := &Pipeline{log: slog.Default()}
	p.stats.In.Add(3)
	p.stats.addStage(StageCounts{Faulted: 2, Faults: map[string]int64{"division_by_zero": 2}})
	if _, err := p.ServeMetrics(context.Background(), "10.1.2.3:9000"); err == nil {
		t.Fatal("a non-loopback address was accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := p.ServeMetrics(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Scrapes while the pipeline runs must not race with it (go test -race).
	p.started.Store(time.Now().UnixNano())
	go p.ended.Store(time.Now().UnixNano())
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"policyrun_records_in_total 3", `policyrun_faults_total{reason="division_by_zero"} 2`, "process_cpu_seconds_total ", "policyrun_peak_rss_bytes "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

func TestLongLinesCounted(t *testing.T) {
	for _, skip := range []bool{false, true} {
		dir := t.TempDir()
		long := strings.Repeat("x", 3000)
		os.WriteFile(filepath.Join(dir, "a.log"), []byte("short\n"+long+"\nend\n"), 0o644)
		cfg := writeConfig(t, dir, fmt.Sprintf(`
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
      exit_on_eof: true
      poll_interval: 10ms
      max_line_size: 1k
      skip_long_lines: %v
  outputs:
    - name: stdout
`, skip))
		var out bytes.Buffer
		p, err := New(cfg, Options{Stdout: &out})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		p.Close()
		s := p.Summary()
		var sum bytes.Buffer
		s.Write(&sum)
		if skip {
			if s.In != 2 || s.SkippedLines != 1 || !strings.Contains(sum.String(), "long lines: truncated 0, skipped 1") {
				t.Errorf("skip: summary %+v\n%s", s, sum.String())
			}
		} else if s.In != 3 || s.TruncatedLines != 1 || !strings.Contains(out.String(), `"log":"`+strings.Repeat("x", 1024)+`"`) {
			t.Errorf("truncate: summary %+v", s)
		}
	}
}

// TestJSONCheckpointUpgraded: a checkpoint in the older JSON layout is
// resumed from and rewritten as protobuf by the next save.
func TestJSONCheckpointUpgraded(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("one\ntwo\n"), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
      exit_on_eof: true
      poll_interval: 10ms
      db: tail.db
  outputs:
    - name: null
`)
	runOnce := func() Summary {
		p, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		p.Close()
		return p.Summary()
	}
	if s := runOnce(); s.In != 2 {
		t.Fatalf("first run read %d records", s.In)
	}
	db := filepath.Join(dir, "tail.db")
	data, _ := os.ReadFile(db)
	cp, _, err := checkpoint.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	enc := checkpoint.Encoder{Format: checkpoint.JSON}
	js, err := enc.Encode(cp)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(db, js, 0o644)
	f, _ := os.OpenFile(filepath.Join(dir, "a.log"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("three\n")
	f.Close()
	if s := runOnce(); s.In != 1 {
		t.Fatalf("run from the JSON checkpoint read %d records, want 1", s.In)
	}
	data, _ = os.ReadFile(db)
	if _, format, err := checkpoint.Decode(data); err != nil || format != checkpoint.Protobuf {
		t.Errorf("checkpoint after the run: format %v, err %v; want protobuf", format, err)
	}
}

// TestOutputErrorStopsRun checks that an output that cannot be written ends
// the run with its error, even while another input, whose records go
// elsewhere, would read on forever.
func TestOutputErrorStopsRun(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("a1\na2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.log"), []byte("b1\nb2\n"), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: a.log
      tag: a
      read_from_head: true
      poll_interval: 10ms
    - name: tail
      path: b.log
      tag: b
      read_from_head: true
      poll_interval: 10ms
  outputs:
    - name: file
      match: a
      path: /dev/full
    - name: null
      match: b
`)
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = p.Run(ctx)
	if ctx.Err() != nil {
		t.Fatal("the run went on after an output failed")
	}
	if err == nil || !strings.Contains(err.Error(), "no space left") || strings.Count(err.Error(), "output file") != 1 {
		t.Errorf("Run = %v, want the output's error, named once", err)
	}
}

// TestCRIHeldParts checks what happens to CRI P parts whose F line does not
// come: after flush_timeout they are delivered (logtag P) and the checkpoint
// moves past them; at the end of input they are delivered and the
// checkpoint covers them, so that a second run reads nothing again.
func TestCRIHeldParts(t *testing.T) {
	const lines = "2026-11-29T21:00:00Z stdout F one\n2026-11-29T21:00:00Z stdout P never-ended\n"
	for _, exitOnEOF := range []bool{false, true} {
		t.Run(fmt.Sprintf("exit_on_eof=%v", exitOnEOF), func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "c.log"), []byte(lines), 0o644)
			cfg := writeConfig(t, dir, fmt.Sprintf(`
pipeline:
  inputs:
    - name: tail
      path: c.log
      parser: cri
      read_from_head: true
      exit_on_eof: %v
      poll_interval: 10ms
      flush_timeout: 50ms
      db: tail.db
  outputs:
    - name: file
      path: out.log
`, exitOnEOF))
			run := func() {
				p, err := New(cfg, Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if exitOnEOF {
					if err := p.Run(ctx); err != nil {
						t.Fatal(err)
					}
					return
				}
				done := make(chan error, 1)
				go func() { done <- p.Run(ctx) }()
				for ctx.Err() == nil && !strings.Contains(readFile(t, dir, "out.log"), "never-ended") {
					time.Sleep(10 * time.Millisecond)
				}
				// The checkpoint is saved after the batch is delivered.
				time.Sleep(100 * time.Millisecond)
				cancel()
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			run()
			run()
			want := `{"stream":"stdout","logtag":"F","log":"one"}` + "\n" +
				`{"stream":"stdout","logtag":"P","log":"never-ended"}` + "\n"
			if got := readFile(t, dir, "out.log"); got != want {
				t.Errorf("after two runs, out.log =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// seenStage counts the records it is given.
type seenStage struct{ n *int64 }

func (s seenStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	*s.n += int64(len(recs))
	return recs, StageCounts{}
}

func (seenStage) Close() error { return nil }

// TestRouting checks the tag matching of stages and outputs past the 64
// that the cache keeps as bits, and that a record no output matches is
// counted as unrouted, not as out.
func TestRouting(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("1\n2\n3\n"), 0o644)
	var b strings.Builder
	b.WriteString("pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n      tag: app\n      read_from_head: true\n      exit_on_eof: true\n  filters:\n")
	const stages = 70
	for i := range stages {
		match := "app"
		if i%2 == 1 {
			match = "other"
		}
		fmt.Fprintf(&b, "    - name: policy\n      match: %s\n      file: s%d.policy\n", match, i)
	}
	b.WriteString("  outputs:\n")
	for range 66 {
		b.WriteString("    - name: null\n      match: other\n")
	}
	cfg := writeConfig(t, dir, b.String())
	seen := make([]int64, stages)
	next := 0
	p, err := New(cfg, Options{NewProcessor: func(config.Filter, string) (Processor, error) {
		next++
		return seenStage{&seen[next-1]}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, n := range seen {
		if want := int64(3 * (1 - i%2)); n != want {
			t.Errorf("stage %d saw %d records, want %d", i, n, want)
		}
	}
	s := p.Summary()
	if s.In != 3 || s.Out != 0 || s.Unrouted != 3 {
		t.Errorf("in %d, out %d, unrouted %d; want 3, 0, 3", s.In, s.Out, s.Unrouted)
	}
	var sum bytes.Buffer
	s.Write(&sum)
	if !strings.Contains(sum.String(), "out 0, dropped 0, faulted 0, unparsed 0, unrouted 3\n") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

// TestBatchSize checks that service batch_size bounds the records of a
// batch (it was accepted and ignored).
func TestBatchSize(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte(strings.Repeat("x\n", 1000)), 0o644)
	cfg := writeConfig(t, dir, `
service:
  batch_size: 100
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
      exit_on_eof: true
  filters:
    - name: policy
      file: unused.policy
  outputs:
    - name: null
`)
	var biggest int
	p, err := New(cfg, Options{NewProcessor: func(config.Filter, string) (Processor, error) {
		return batchStage{&biggest}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Summary(); s.Out != 1000 || biggest != 100 {
		t.Errorf("out %d, biggest batch %d; want 1000, 100", s.Out, biggest)
	}
}

// TestChunks checks that a batch goes through the stages in chunks of
// about chunkInput bytes, every record once and in order.
func TestChunks(t *testing.T) {
	dir := t.TempDir()
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, "%04d%s\n", i, strings.Repeat("x", 1020))
	}
	os.WriteFile(filepath.Join(dir, "a.log"), []byte(lines.String()), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: a.log
      read_from_head: true
      exit_on_eof: true
  filters:
    - name: policy
      file: unused.policy
  outputs:
    - name: null
`)
	st := &orderStage{}
	p, err := New(cfg, Options{NewProcessor: func(config.Filter, string) (Processor, error) {
		return st, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := p.Summary(); s.In != 1000 || s.Out != 1000 || st.seen != 1000 {
		t.Errorf("in %d, out %d, stage saw %d; want 1000 each", s.In, s.Out, st.seen)
	}
	if want := chunkInput/1025 + 1; st.biggest > want || st.biggest < want-1 {
		t.Errorf("biggest chunk %d records, want about %d", st.biggest, want)
	}
	if st.disorder != "" {
		t.Error(st.disorder)
	}
}

// orderStage counts the records it is given, the largest chunk, and
// checks that the lines ("0000xxx…", "0001xxx…") come in order.
type orderStage struct {
	seen, biggest int
	disorder      string
}

func (s *orderStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	s.biggest = max(s.biggest, len(recs))
	for _, r := range recs {
		v, _ := r.Get(record.NewPath("log"))
		if got, want := r.Arena().Str(v)[:4], fmt.Sprintf("%04d", s.seen); got != want && s.disorder == "" {
			s.disorder = fmt.Sprintf("record %d is line %s", s.seen, got)
		}
		s.seen++
	}
	return recs, StageCounts{}
}

func (s *orderStage) Close() error { return nil }

// batchStage records the largest batch it is given.
type batchStage struct{ biggest *int }

func (s batchStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	*s.biggest = max(*s.biggest, len(recs))
	return recs, StageCounts{}
}

func (batchStage) Close() error { return nil }

// TestRelativeExcludePath checks that a relative exclude_path is resolved
// against the config's directory, as path is: otherwise it excludes nothing
// unless policyrun runs from that directory.
func TestRelativeExcludePath(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "logs"), 0o755)
	os.WriteFile(filepath.Join(dir, "logs", "a.log"), []byte("keep\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "logs", "skip.log"), []byte("skip\n"), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: logs/*.log
      exclude_path: logs/skip.log
      read_from_head: true
      exit_on_eof: true
  outputs:
    - name: stdout
`)
	var out bytes.Buffer
	p, err := New(cfg, Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\"log\":\"keep\"}\n" {
		t.Errorf("output = %q, want only the kept file", out.String())
	}
}

// TestCheckpointDirMissing checks that a db in a directory that does not
// exist stops the pipeline at start, rather than warning at every batch.
func TestCheckpointDirMissing(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: a.log
      db: state/tail.db
  outputs:
    - name: null
`)
	p, err := New(cfg, Options{})
	if err == nil {
		p.Close()
		t.Fatal("New accepted a db in a missing directory")
	}
	if !strings.Contains(err.Error(), "input at line 4: db state/tail.db: its directory does not exist") {
		t.Errorf("error = %v", err)
	}
}

// TestPartialMatchDrop checks a stage that matches part of a batch and
// drops some of its records: exactly those go, and the records after them
// stay. (Stages write what they keep over the slice they are given; reading
// that slice afterwards as the selection dropped kept records and let
// dropped ones through.)
func TestPartialMatchDrop(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte(`{"n":1}
{"n":2,"level":"debug"}
{"n":3}
{"n":4}
{"n":5,"level":"debug"}
{"n":6}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "b.log"), []byte(`{"n":10,"level":"debug"}`+"\n"), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: "*.log"
      tag: t.*
      parser: json
      read_from_head: true
      exit_on_eof: true
  filters:
    - name: policy
      match: "*a.log"
      file: unused.policy
  outputs:
    - name: stdout
`)
	var out bytes.Buffer
	p, err := New(cfg, Options{Stdout: &out, NewProcessor: func(config.Filter, string) (Processor, error) { return dropStage{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		i := strings.Index(l, `"n":`)
		ns = append(ns, strings.TrimRight(strings.SplitN(l[i+4:], ",", 2)[0], "}"))
	}
	slices.Sort(ns)
	if got := strings.Join(ns, " "); got != "1 10 3 4 6" {
		t.Errorf("records out: %s, want 1 10 3 4 6 (2 and 5 dropped; 10 not matched)", got)
	}
	if s := p.Summary(); s.Dropped != 2 || s.Out != 5 {
		t.Errorf("dropped %d, out %d; want 2, 5", s.Dropped, s.Out)
	}
}

// TestCRIHeldPartsOtherStreamBusy checks that a stdout join that never
// ends is delivered after flush_timeout even while stderr lines keep
// coming: lines that do not end the join must not restart its wait.
func TestCRIHeldPartsOtherStreamBusy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.log")
	os.WriteFile(path, []byte("2026-11-29T21:00:00Z stdout P never-ended\n"), 0o644)
	cfg := writeConfig(t, dir, `
pipeline:
  inputs:
    - name: tail
      path: c.log
      parser: cri
      read_from_head: true
      poll_interval: 10ms
      flush_timeout: 100ms
  outputs:
    - name: file
      path: out.log
`)
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	flushed := false
	for i := 0; i < 100 && !flushed; i++ {
		fmt.Fprintf(f, "2026-11-29T21:00:00Z stderr F busy %d\n", i)
		time.Sleep(20 * time.Millisecond)
		flushed = strings.Contains(readFile(t, dir, "out.log"), "never-ended")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !flushed {
		t.Error("the stdout join was held for 2 s with flush_timeout 100ms while stderr lines came")
	}
}
