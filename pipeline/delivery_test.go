package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/internal/testkit/testnet"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
)

// numberedLines are n JSON lines {"n": from} … for a tail with parser json.
func numberedLines(from, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"n":%d,"msg":"line %d"}`+"\n", from+i, from+i)
	}
	return b.String()
}

// otlpOutput is an outputs section: one otlp output to url, fast retries,
// with more keys.
func otlpOutput(url string, more ...string) string {
	s := "  outputs:\n    - name: otlp\n      endpoint: " + url + "\n      retry: {initial_interval: 10ms, max_interval: 50ms}\n"
	for _, m := range more {
		s += "      " + m + "\n"
	}
	return s
}

// downURL is an address where nothing listens.
func downURL(t *testing.T) string { return "http://" + testnet.FreeAddr(t) }

// dataDirService is a service section: data_dir data (for filesystem
// buffers), and service.grace, what a run's end leaves the outputs to
// deliver what they hold. A run whose receiver is down needs little, as
// nothing will be delivered; one whose receiver is up needs plenty, as
// a filesystem buffer's chunks are sent only then: given 100 ms, a run
// loaded by others (-race) ended before its replay had been answered.
// The outputs' shutdown ends once they hold nothing, so plenty costs
// nothing when all goes well.
func dataDirService(receiverUp bool) string {
	grace := "100ms"
	if receiverUp {
		grace = "30s"
	}
	return "service:\n  grace: " + grace + "\n  data_dir: data\n"
}

// TestTailToOTLP reads a file to its end into an otlp output and checks
// that everything arrived before the run ended.
func TestTailToOTLP(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", numberedLines(0, 500))
	rc := otlptest.New(t)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg := tailConfig(t, dir, otlpOutput(srv.URL), "a.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
	p := runPipeline(t, cfg, Options{})
	rc.Each(t, 500)
	s := p.Summary()
	if o := s.Outputs[0]; o.Out != 500 || !o.Buffered {
		t.Errorf("output summary = %+v", o)
	}
	text := summaryText(s)
	if !strings.Contains(text, "output otlp.0: out 500, bytes ") || !strings.Contains(text, "retries 0 (0 records), rejected 0, dropped 0, failed 0, lost 0; buffer 0 bytes in 0 chunks") {
		t.Errorf("summary:\n%s", text)
	}
	checkMetrics(t, p, `policyrun_output_records_out_total{name="otlp.0"} 500`, `policyrun_output_retries_total{name="otlp.0"} 0`,
		"# TYPE policyrun_output_buffer_bytes gauge", `policyrun_output_buffer_chunks{name="otlp.0"} 0`)
}

// TestMemoryBufferHoldsCheckpoint checks the guarantee with a memory
// buffer: while the receiver is down the tail's checkpoint does not pass
// what was not delivered; a stop gives up after service.grace; the next
// run delivers it all.
func TestMemoryBufferHoldsCheckpoint(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", numberedLines(0, 100))
	down := downURL(t)
	rest := otlpOutput(down) + "service:\n  grace: 200ms\n"
	cfg := tailConfig(t, dir, rest, "a.log", "parser: json", "poll_interval: 10ms", "db: tail.db")
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	if !eventually(5*time.Second, func() bool { return p.Summary().Outputs[0].Retries > 0 }) {
		t.Fatal("no retries against a receiver that is down")
	}
	stopped := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stop did not end after service.grace")
	}
	if d := time.Since(stopped); d < 150*time.Millisecond {
		t.Errorf("the stop took %v: it did not wait for the grace", d)
	}
	p.Close()
	s := p.Summary()
	if o := s.Outputs[0]; o.Lost != 100 || o.Out != 0 {
		t.Errorf("output = %+v, want 100 lost", o)
	}

	// The receiver is back: the next run reads the lines again.
	rc := otlptest.New(t)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg = tailConfig(t, dir, otlpOutput(srv.URL), "a.log", "parser: json", "poll_interval: 10ms", "db: tail.db", "exit_on_eof: true")
	runPipeline(t, cfg, Options{})
	rc.Each(t, 100)
}

// TestFilesystemBufferSurvivesRestart checks the guarantee with a
// filesystem buffer: the checkpoint moves once the chunks are on disk,
// the receiver being down; the next run replays them.
func TestFilesystemBufferSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", numberedLines(0, 300))
	fs := []string{"buffer:", "  type: filesystem"}
	cfg := tailConfig(t, dir, otlpOutput(downURL(t), fs...)+dataDirService(false), "a.log", "parser: json", "poll_interval: 10ms",
		"db: tail.db", "exit_on_eof: true")
	p := runPipeline(t, cfg, Options{})
	o := p.Summary().Outputs[0]
	if o.BufferChunks == 0 || o.Out != 0 || o.Lost != 0 {
		t.Fatalf("output = %+v, want chunks held", o)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "data", "otlp.0", "*.chunk")); len(files) == 0 {
		t.Fatal("no chunk files under data_dir/otlp.0")
	}

	rc := otlptest.New(t)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	cfg = tailConfig(t, dir, otlpOutput(srv.URL, fs...)+dataDirService(true), "a.log", "parser: json", "poll_interval: 10ms",
		"db: tail.db", "exit_on_eof: true")
	p = runPipeline(t, cfg, Options{})
	rc.Each(t, 300)
	if o := p.Summary().Outputs[0]; o.BufferChunks != 0 || o.Out != 300 {
		t.Errorf("second run: output %+v", o)
	}
	if p.Summary().In != 0 {
		t.Errorf("the second run read %d lines again: the checkpoint did not move", p.Summary().In)
	}
}

// TestOutputRefusesCounted: a receiver that refuses everything with a 400
// does not stop the run; the records are counted as rejected and the
// checkpoint moves.
func TestOutputRefusesCounted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.log", numberedLines(0, 10))
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "no such tenant", 400)
	}))
	defer srv.Close()
	var log bytes.Buffer
	cfg := tailConfig(t, dir, otlpOutput(srv.URL), "a.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
	p := runPipeline(t, cfg, Options{Logger: testLogger(&log)})
	if o := p.Summary().Outputs[0]; o.Rejected != 10 || o.Retries != 0 {
		t.Errorf("output = %+v", o)
	}
	if !strings.Contains(log.String(), "no such tenant") {
		t.Errorf("log:\n%s", log.String())
	}
}

func TestDeliveryConfigErrors(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"  outputs:\n    - name: otlp\n      endpoint: http://x:4318\n      buffer:\n        type: filesystem\n",
			"p.yaml:9: a filesystem buffer needs service.data_dir"},
		{"  outputs:\n    - name: otlp\n      endpoint: x:4318\n", `p.yaml:7: endpoint "x:4318": expected a URL`},
		{"  outputs:\n    - name: otlp\n", "p.yaml:6: output otlp needs endpoint"},
		{"  outputs:\n    - name: otlp\n      endpoint: http://x\n      buffer.type: disk\n", `p.yaml:8: unknown buffer type "disk"`},
		{"  outputs:\n    - name: http\n      uri: http://x\n      retry: {initial_intervals: 1s}\n", `p.yaml:8: retry: unknown key "initial_intervals" (did you mean "initial_interval"?)`},
		{"  outputs:\n    - name: http\n      uri: http://x\n      headers: [a]\n", "p.yaml:8: expected a mapping of names to values"},
		{"  outputs:\n    - name: otlp\n      endpoint: http://x\n      tls.cert_file: c.pem\n", "p.yaml:6: tls.cert_file and tls.key_file go together"},
	} {
		src := "pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n" + tt.src
		_, err := config.Parse("p.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s\nerr = %v, want %q", tt.src, err, tt.want)
		}
	}
	cfg, err := config.Parse("p.yaml", []byte("pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  outputs:\n    - name: otlp\n      endpoint: http://c:4318\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Outputs[0].Settings.(*output.OTLPConfig).URL; got != "http://c:4318/v1/logs" {
		t.Errorf("endpoint = %q, want the OTLP path added", got)
	}
}
