package pipeline

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	"github.com/policyrun/policyrun/internal/testkit/testcert"
)

// rawRequest opens a connection to url's host and writes a request's
// headers and the start of its body, then leaves it open: a client that
// stalls. The connection is closed when the test ends.
func rawRequest(t *testing.T, url, headers, body string) net.Conn {
	t.Helper()
	host := strings.TrimPrefix(url, "http://")
	host = host[:strings.IndexByte(host, '/')]
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-protobuf\r\n%s\r\n%s", OTLPPath, host, headers, body)
	return c
}

// answerOf reads the answer on c, within d: its status, and whether the
// server closed the connection after it.
func answerOf(t *testing.T, c net.Conn, d time.Duration) (status int, closed bool) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", d, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	_, err = br.ReadByte()
	return resp.StatusCode, err != nil
}

// TestOTLPInputStalledBodies: a body that stops arriving — short of its
// Content-Length, or inside a chunk that says it is larger — is answered
// 408 within read_timeout and its connection closed. It held its
// connection and its buffer for ever.
func TestOTLPInputStalledBodies(t *testing.T) {
	url, p, _ := otlpServer(t, toNull, "read_timeout: 300ms")
	tests := []struct{ name, headers, body string }{
		{"short of its length", "Content-Length: 19000000\r\n", strings.Repeat("x", 5000)},
		{"inside a chunk", "Transfer-Encoding: chunked\r\n", "fffff\r\nabc"},
		{"no body at all", "Content-Length: 10\r\n", ""},
	}
	for _, tt := range tests {
		c := rawRequest(t, url, tt.headers, tt.body)
		start := time.Now()
		status, closed := answerOf(t, c, 10*time.Second)
		if status != http.StatusRequestTimeout || !closed {
			t.Errorf("%s: %d, closed %v, after %v; want 408 and the connection closed", tt.name, status, closed, time.Since(start))
		}
	}
	if n := p.Summary().Inputs[0].Requests[http.StatusRequestTimeout]; n != int64(len(tests)) {
		t.Errorf("%d requests counted 408, want %d", n, len(tests))
	}
}

// TestOTLPInputInflightBound: the bodies in flight are bounded all
// together; a request that would pass max_inflight_size is answered 503
// with Retry-After before its body is read, and is taken once the room is
// free again.
func TestOTLPInputInflightBound(t *testing.T) {
	url, p, _ := otlpServer(t, toNull, "read_timeout: 1s", "max_request_size: 1M", "max_inflight_size: 1M")
	stalled := rawRequest(t, url, "Content-Length: 1048576\r\n", "partial")
	time.Sleep(100 * time.Millisecond) // the stalled request is in hand
	a := post(t, &http.Client{}, url, ctProtobuf, "", otlpRequest(t, 0, 10, false))
	if a.status != http.StatusServiceUnavailable || a.header.Get("Retry-After") == "" {
		t.Fatalf("beside a stalled 1M body: %d %s, want 503 with Retry-After", a.status, a.body)
	}
	if status, _ := answerOf(t, stalled, 10*time.Second); status != http.StatusRequestTimeout {
		t.Fatalf("the stalled request: %d, want 408", status)
	}
	if a := post(t, &http.Client{}, url, ctProtobuf, "", otlpRequest(t, 0, 10, false)); a.status != http.StatusOK {
		t.Errorf("once the room is free: %d %s", a.status, a.body)
	}
	if s := p.Summary(); s.In != 10 {
		t.Errorf("in %d, want 10", s.In)
	}
}

// TestOTLPInputMaxRecords: a request of more LogRecords than
// max_request_records is refused 413 before it is run, whatever its
// size: 50,000 empty LogRecords are 100 KB and expanded to 230 MB.
func TestOTLPInputMaxRecords(t *testing.T) {
	url, p, _ := otlpServer(t, toNull, "max_request_records: 100")
	for _, tt := range []struct {
		body   []byte
		ct     string
		status int
	}{
		{emptyLogRecords(100), ctProtobuf, http.StatusOK},
		{emptyLogRecords(101), ctProtobuf, http.StatusRequestEntityTooLarge},
		{emptyLogRecords(50000), ctProtobuf, http.StatusRequestEntityTooLarge},
		{otlpRequest(t, 0, 101, true), ctJSON, http.StatusRequestEntityTooLarge},
		{otlpRequest(t, 0, 100, true), ctJSON, http.StatusOK},
	} {
		if a := post(t, &http.Client{}, url, tt.ct, "", tt.body); a.status != tt.status {
			t.Errorf("%s of %d bytes: %d %s, want %d", tt.ct, len(tt.body), a.status, a.body, tt.status)
		}
	}
	s := p.Summary()
	if s.In != 200 || s.Inputs[0].Requests[http.StatusRequestEntityTooLarge] != 3 {
		t.Errorf("in %d, requests %v; want 200 in and three 413", s.In, s.Inputs[0].Requests)
	}
}

// TestOTLPInputDecodesBounded: many small requests that each expand a
// hundredfold (32,000 empty LogRecords in 64 KB) at once: what they decode
// to counts against max_inflight_size, and only decodeSlots decode at once,
// so those past the bound are answered 503 and taken when retried. When
// max_inflight_size counted the bodies alone, 64 of them at once took the
// heap up by 1.7 GB.
func TestOTLPInputDecodesBounded(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("the race detector's memory is in the heap figures")
	}
	url, p, _ := otlpServer(t, toNull, "max_inflight_size: 32M")
	body := emptyLogRecords(32000)
	const clients = 64
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			s := []metrics.Sample{{Name: sample[0].Name}}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	var wg sync.WaitGroup
	statuses := make([]int, clients)
	for i := range clients {
		wg.Go(func() {
			for {
				statuses[i] = post(t, &http.Client{}, url, ctProtobuf, "", body).status
				if statuses[i] != http.StatusServiceUnavailable {
					return
				}
				time.Sleep(10 * time.Millisecond) // sooner than Retry-After
			}
		})
	}
	wg.Wait()
	close(done)
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Fatalf("request %d: %d", i, st)
		}
	}
	if s := p.Summary(); s.In != clients*32000 {
		t.Errorf("in %d, want %d", s.In, clients*32000)
	}
	// max_inflight_size, with decodeSlots arenas of about 20 MB that
	// may pass it before they are counted, and three times as much again for
	// the garbage their growth leaves and the collector's lag: bounded
	// however many clients there are.
	limit := 4 * (32<<20 + uint64(decodeSlots())*20<<20)
	grew := peak.Load() - min(base, peak.Load())
	t.Logf("the heap grew by %d MB", grew>>20)
	if grew > limit {
		t.Errorf("the heap grew by %d MB with %d requests at once; want at most %d MB (%d decodes at once)", grew>>20, clients, limit>>20, decodeSlots())
	}
}

// emptyLogRecords is a request of n empty LogRecords in one ScopeLogs:
// two bytes each.
func emptyLogRecords(n int) []byte {
	field := func(num protowire.Number, v []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
	}
	lrs := []byte(strings.Repeat("\x12\x00", n)) // ScopeLogs.log_records, empty
	return field(1, field(2, lrs))               // the request's resource_logs, its scope_logs
}

// TestOTLPInputExposedWarns: an otlp input that listens beyond loopback
// without client authentication says so at start and under run --check,
// as the metrics endpoint does; on loopback, or with mutual TLS, it says
// nothing.
func TestOTLPInputExposedWarns(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.New(t, dir)
	tlsKeys := "\n      tls.cert_file: " + certs.ServerCert + "\n      tls.key_file: " + certs.ServerKey
	tests := []struct {
		listen, more string
		warn         string // a part of the warning; "" for none
	}{
		{"127.0.0.1:0", "", ""},
		{"localhost:0", "", ""},
		{"[::1]:0", "", ""},
		{"0.0.0.0:0", "", "in plain text"},
		{"[::]:0", "", "authenticates no client"},
		{":0", "", "in plain text"},
		{"0.0.0.0:0", tlsKeys, "authenticates no client"},
		{"0.0.0.0:0", tlsKeys + "\n      tls.client_ca_file: " + certs.CA, ""},
	}
	for _, tt := range tests {
		for _, check := range []bool{true, false} {
			src := "pipeline:\n  inputs:\n    - name: otlp\n      listen: \"" + tt.listen + "\"" + tt.more + "\n" + toNull
			var log bytes.Buffer
			p, err := New(writeConfig(t, dir, src), Options{Logger: testLogger(&log), Check: check})
			if err != nil {
				t.Fatal(err)
			}
			p.Close()
			got := log.String()
			if tt.warn == "" && got != "" || tt.warn != "" && !strings.Contains(got, tt.warn) {
				t.Errorf("listen %s%q (check %v): logged %q, want %q", tt.listen, tt.more, check, got, tt.warn)
			}
		}
	}
}
