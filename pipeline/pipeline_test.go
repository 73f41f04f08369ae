package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

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
	writeFile(t, dir, "app.log", strings.Join(lines, "\n")+"\n")
	cfg := tailConfig(t, dir, `  filters:
    - name: policy
      match: app.*
      file: unused.policy
  outputs:
    - name: stdout
      match: app.*
    - name: file
      match: nothing
      path: out.log
`, "app.log", "tag: app.*", "parser: json", "exit_on_eof: true", "poll_interval: 10ms", "db: tail.db")
	var out bytes.Buffer
	opts := Options{Stdout: &out, NewProcessor: every(dropDebug)}
	s := runPipeline(t, cfg, opts).Summary()
	if s.In != 502 || s.Dropped != 100 || s.Out != 402 || s.Unparsed != 1 || s.Faulted != 1 {
		t.Errorf("summary = %+v", s)
	}
	if got := strings.Count(out.String(), "\n"); got != 402 {
		t.Errorf("stdout has %d lines, want 402", got)
	}
	if !strings.Contains(out.String(), `"parse_error"`) {
		t.Error("the unparsed line is not in the output")
	}
	if b := readFile(t, dir, "out.log"); len(b) != 0 {
		t.Errorf("the file output matched nothing but got %d bytes", len(b))
	}
	if sum := summaryText(s); !strings.Contains(sum, "records: in 502, out 402, dropped 100, faulted 1, unparsed 1") ||
		!strings.Contains(sum, "faults: type_mismatch 1") {
		t.Errorf("summary text:\n%s", sum)
	}

	// A second run resumes from the checkpoint: nothing is read again.
	out.Reset()
	if s := runPipeline(t, cfg, opts).Summary(); s.In != 0 || out.Len() != 0 {
		t.Errorf("second run read %d records again: %q", s.In, out.String())
	}
}

func TestMetricsEndpoint(t *testing.T) {
	p := &Pipeline{log: slog.Default()}
	p.gen.Store(&generation{})
	p.stats.In.Add(3)
	p.stats.addStage(StageCounts{Faulted: 2, Faults: map[string]int64{"division_by_zero": 2}})
	for _, bad := range []string{"example.com:9000", "127.0.0.1:65536", ":9000"} {
		if _, err := p.ServeMetrics(context.Background(), bad); err == nil {
			t.Fatalf("%s was accepted", bad)
		}
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
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"policyrun_records_in_total 3", `policyrun_faults_total{reason="division_by_zero"} 2`, "process_cpu_seconds_total ", "policyrun_peak_rss_bytes "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestUnmatchedPatternMetric checks that a path pattern that matches
// nothing is warned of and counted in the metrics.
func TestUnmatchedPatternMetric(t *testing.T) {
	dir := t.TempDir()
	var logs strings.Builder
	cfg := tailConfig(t, dir, toNull, "missing-*.log", "exit_on_eof: true", "poll_interval: 10ms")
	p := runPipeline(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	checkMetrics(t, p, "policyrun_tail_patterns_unmatched 1\n")
	if !strings.Contains(logs.String(), "path pattern matches no file") {
		t.Errorf("no warning: %s", logs.String())
	}
}

// TestMetricsLocalhost checks that localhost binds only a loopback address
// it resolves to, and is refused when it resolves to none.
func TestMetricsLocalhost(t *testing.T) {
	var logs strings.Builder
	p := &Pipeline{log: slog.New(slog.NewTextHandler(&logs, nil))}
	defer func(f func(context.Context, string) ([]net.IPAddr, error)) { lookupIP = f }(lookupIP)
	resolves := func(ips ...string) {
		lookupIP = func(_ context.Context, host string) ([]net.IPAddr, error) {
			if host != "localhost" {
				t.Errorf("looked up %q", host)
			}
			var out []net.IPAddr
			for _, s := range ips {
				out = append(out, net.IPAddr{IP: net.ParseIP(s)})
			}
			return out, nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resolves("10.0.0.5")
	if _, err := p.ServeMetrics(ctx, "localhost:0"); err == nil || !strings.Contains(err.Error(), "no loopback address") {
		t.Errorf("localhost resolving to 10.0.0.5: %v", err)
	}
	resolves("10.0.0.5", "::1", "127.0.0.1")
	addr, err := p.ServeMetrics(ctx, "localhost:0")
	if err != nil {
		t.Fatal(err)
	}
	if ip := addr.(*net.TCPAddr).IP; !ip.Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("listening on %v, want 127.0.0.1", addr)
	}
	if !strings.Contains(logs.String(), "ignored=[10.0.0.5]") {
		t.Errorf("no warning of the ignored address: %s", logs.String())
	}
	// An address written out is the user's choice, with a warning.
	logs.Reset()
	addr, err = p.ServeMetrics(ctx, "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if !addr.(*net.TCPAddr).IP.IsUnspecified() || !strings.Contains(logs.String(), "non-loopback") {
		t.Errorf("0.0.0.0: listening on %v, log %s", addr, logs.String())
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
	writeFile(t, dir, "a.log", "a1\na2\n")
	writeFile(t, dir, "b.log", "b1\nb2\n")
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
	if err == nil || !strings.Contains(err.Error(), "no space left") || strings.Count(err.Error(), "output file.0: ") != 1 {
		t.Errorf("Run = %v, want the output's error, named once by its alias", err)
	}
}

// TestRelativeExcludePath checks that a relative exclude_path is resolved
// against the config's directory, as path is: otherwise it excludes nothing
// unless policyrun runs from that directory.
func TestRelativeExcludePath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "logs/a.log", "keep\n")
	writeFile(t, dir, "logs/skip.log", "skip\n")
	cfg := tailConfig(t, dir, toStdout, "logs/*.log", "exclude_path: logs/skip.log", "exit_on_eof: true")
	var out bytes.Buffer
	runPipeline(t, cfg, Options{Stdout: &out})
	if out.String() != "{\"log\":\"keep\"}\n" {
		t.Errorf("output = %q, want only the kept file", out.String())
	}
}
