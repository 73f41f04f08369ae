package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/internal/testkit/testnet"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// TestOTLPInputBadRequestsProcess sends a running policyrun (an otlp
// input, max_request_size 1M, into null) the bad requests issue 13 names:
// garbage, a truncated protobuf, a wrong content type, a body over the
// limit (with and without a Content-Length), and gzip and zstd bombs that
// decompress to 256 MiB. Each gets its status, a good request after it
// gets 200, the process's peak memory stays far below what a bomb would
// take, and it stops cleanly, counting only the good records.
func TestOTLPInputBadRequestsProcess(t *testing.T) {
	needChildProcess(t)
	listen := testnet.FreeAddr(t)
	dir := writeFiles(t, map[string]string{"in.yaml": fmt.Sprintf(`
pipeline:
  inputs:
    - name: otlp
      listen: %s
      max_request_size: 1M
  outputs:
    - name: null
      encode: false
`, listen)})
	c := startRun(t, dir, "in.yaml")
	url := "http://" + listen + "/v1/logs"
	c.waitListening(t, listen)

	good := otlptest.Request(0, 10)
	const bomb = 256 << 20
	tests := []struct {
		name     string
		ct, ce   string
		body     []byte
		chunked  bool // no Content-Length: the limit is found while reading
		want     int
		wantText string // in the answer's message
	}{
		{"garbage", "application/x-protobuf", "", []byte("\xff\xfe garbage"), false, 400, "does not decode"},
		{"truncated protobuf", "application/x-protobuf", "", good[:len(good)-5], false, 400, "does not decode"},
		{"truncated JSON", "application/json", "", []byte(`{"resourceLogs":[{"scopeLogs":[`), false, 400, "does not decode"},
		{"wrong content type", "text/plain", "", good, false, 415, "application/x-protobuf"},
		{"over the limit", "application/x-protobuf", "", make([]byte, 2<<20), false, 413, "max_request_size"},
		{"over the limit, chunked", "application/x-protobuf", "", make([]byte, 2<<20), true, 413, "max_request_size"},
		{"gzip bomb", "application/x-protobuf", "gzip", gzipZeros(t, bomb), false, 413, "max_request_size"},
		{"zstd bomb", "application/x-protobuf", "zstd", zstdZeros(t, bomb), false, 413, "max_request_size"},
	}
	send := func(ct, ce string, body []byte, chunked bool) (int, string) {
		t.Helper()
		code, _, answer, err := post(http.DefaultClient, url, ct, ce, body, chunked)
		if err != nil {
			t.Fatalf("%v\n%s", err, c.stderr)
		}
		return code, string(answer)
	}
	for _, tt := range tests {
		code, msg := send(tt.ct, tt.ce, tt.body, tt.chunked)
		if code != tt.want || !strings.Contains(msg, tt.wantText) {
			t.Errorf("%s: %d %q, want %d with %q", tt.name, code, msg, tt.want, tt.wantText)
		}
		if code, msg := send("application/x-protobuf", "", good, false); code != 200 {
			t.Fatalf("after %s, a good request: %d %q\n%s", tt.name, code, msg, c.stderr)
		}
	}
	peak := peakRSS(t, c.cmd.Process.Pid)
	t.Logf("peak RSS %d MiB", peak>>20)
	if peak > 200<<20 { // 47 MiB here, 140 under the race detector
		t.Errorf("peak RSS %d MiB: a bomb was decompressed past the limit", peak>>20)
	}
	c.stop(t, syscall.SIGTERM, 10*time.Second)
	if sum := c.stderr.String(); !strings.Contains(sum, fmt.Sprintf("in %d,", len(tests)*10)) {
		t.Errorf("the summary should count the %d good records alone:\n%s", len(tests)*10, sum)
	}
}

// gzipZeros is n zero bytes, gzipped: a member of 1 MiB of them, again
// and again (a gzip stream may hold many members, and decompresses to
// them all).
func gzipZeros(t *testing.T, n int) []byte {
	var member bytes.Buffer
	w, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if _, err := w.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	return bytes.Repeat(member.Bytes(), n>>20)
}

// zstdZeros is n zero bytes, in zstd.
func zstdZeros(t *testing.T, n int) []byte {
	var b bytes.Buffer
	w, err := zstd.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for ; n > 0; n -= len(zeros) {
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestOTLPInputStopAnswers stops a gateway whose receiver stalls while
// requests wait on it: the input stops accepting connections at once,
// and every request in hand is answered (503 with Retry-After, since its
// records never reached the receiver) when service.grace runs out, not
// cut off; then the process exits cleanly.
func TestOTLPInputStopAnswers(t *testing.T) {
	needChildProcess(t)
	rcv := newFlakyServer(t)
	var seen atomic.Int64
	refuse := rcv.rc.Refuse
	rcv.rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		seen.Add(1)
		return refuse(w, r, n)
	}
	rcv.mode.Store("stall")
	listen := testnet.FreeAddr(t)
	const grace = 3 * time.Second
	dir := writeFiles(t, map[string]string{"gw.yaml": fmt.Sprintf(`
service:
  grace: %s
pipeline:
  inputs:
    - name: otlp
      listen: %s
  outputs:
    - name: otlp
      endpoint: %s
      compression: none
      workers: 1
      timeout: 1m
`, grace, listen, rcv.url())})
	c := startRun(t, dir, "gw.yaml")
	url := "http://" + listen + "/v1/logs"
	c.waitListening(t, listen)
	type answer struct {
		code  int
		retry string
		err   error
	}
	const requests = 5
	answers := make(chan answer, requests)
	for i := range requests {
		go func() {
			resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(otlptest.Request(i*10, 10)))
			if err != nil {
				answers <- answer{err: err}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answers <- answer{code: resp.StatusCode, retry: resp.Header.Get("Retry-After")}
		}()
	}
	if !testsync.Eventually(10*time.Second, func() bool { return seen.Load() > 0 }) {
		t.Fatalf("nothing reached the receiver\n%s", c.stderr)
	}
	time.Sleep(100 * time.Millisecond) // the other requests reach the gateway
	stopped := time.Now()
	c.cmd.Process.Signal(syscall.SIGTERM)
	if !testsync.Eventually(grace/2, func() bool { return !testnet.Dialable(listen) }) {
		t.Errorf("the gateway still accepts connections %v after SIGTERM", grace/2)
	}
	for range requests {
		select {
		case a := <-answers:
			if a.err != nil || a.code != 503 || a.retry == "" {
				t.Errorf("a request in hand at the stop: %d, Retry-After %q, %v; want 503 with Retry-After", a.code, a.retry, a.err)
			}
			if d := time.Since(stopped); d < grace/2 {
				t.Errorf("answered %v after the stop, before the grace (%v) ran out", d, grace)
			}
		case <-time.After(2 * grace):
			t.Fatalf("a request in hand was not answered\n%s", c.stderr)
		}
	}
	c.wait(t, 10*time.Second)
}

// TestExampleGateway runs examples/otlp/gateway.sh, the one command the
// README gives for the OTLP example, with this binary as policyrun: the
// receiver gets what the gateway's policy keeps, and both summaries show.
func TestExampleGateway(t *testing.T) {
	needChildProcess(t)
	for _, addr := range []string{"127.0.0.1:4318", "127.0.0.1:4319"} {
		if testnet.Dialable(addr) {
			t.Skipf("%s is in use: the example listens there", addr)
		}
	}
	cmd := exec.Command("sh", "../../examples/otlp/gateway.sh", "300")
	cmd.Env = append(os.Environ(), "POLICYRUN="+os.Args[0], "POLICYRUN_AS_CLI=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gateway.sh: %v\n%s", err, out)
	}
	text := string(out)
	wantAll(t, "the output", text, "records 300,", "== gateway ==", "input otlp.0: in 300,", "== receiver ==", "output stdout.0: out ")
	// The policy drops the debug records and the receiver gets the rest.
	var kept, got int
	gateway, receiver, _ := strings.Cut(text, "== receiver ==")
	if i := strings.Index(gateway, "output otlp.0: out "); i >= 0 {
		fmt.Sscanf(gateway[i:], "output otlp.0: out %d,", &kept)
	}
	if i := strings.Index(receiver, "records: in "); i >= 0 {
		fmt.Sscanf(receiver[i:], "records: in %d,", &got)
	}
	if kept == 0 || kept >= 300 || got != kept {
		t.Errorf("the gateway sent %d of 300 records and the receiver got %d:\n%s", kept, got, text)
	}
	if _, err := os.Stat("../../examples/otlp/data"); err == nil {
		t.Error("the example left its buffer in the repository (examples/otlp/data)")
	}
}
