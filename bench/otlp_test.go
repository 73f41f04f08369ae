package bench

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
)

// TestBenchOTLP runs the load generator against a receiver that decodes
// every request and throttles some: every record arrives, the refusals
// are retried, and the report says what was measured.
func TestBenchOTLP(t *testing.T) {
	for _, c := range []struct{ encoding, compression string }{{"protobuf", "none"}, {"json", "gzip"}, {"protobuf", "zstd"}} {
		rc := otlptest.New(t)
		rc.Key = "status" // every generated record has one
		rc.Refuse = func(w http.ResponseWriter, _ *http.Request, n int64) bool {
			if n%7 != 0 {
				return false
			}
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", 503)
			return true
		}
		srv := httptest.NewServer(rc)
		l := OTLPLoad{URL: srv.URL + "/v1/logs", Records: 2000, Warmup: 500, Clients: 4, Batch: 50, Seed: 1,
			Encoding: c.encoding, Compression: c.compression}
		var stdout, stderr strings.Builder
		err := l.Run(&stdout, &stderr)
		srv.Close()
		if err != nil {
			t.Fatalf("%+v: %v\n%s", c, err, stderr.String())
		}
		out := stdout.String()
		if rc.Total() != 2500 {
			t.Errorf("%+v: %d records arrived, want 2500", c, rc.Total())
		}
		if !strings.Contains(out, "records 2000, warmup 500, requests 40, clients 4") || !strings.Contains(out, "records/s") ||
			!strings.Contains(out, "p99") || strings.Contains(out, "retries 0,") {
			t.Errorf("%+v: report %q", c, out)
		}
	}
}

// TestBenchOTLPRejected: only the records a partial success rejects count
// as rejected, in either encoding: the Collector's receiver answers an
// ExportLogsServiceResponse with an empty partial_success, which every
// answer counted as one rejection.
func TestBenchOTLPRejected(t *testing.T) {
	for _, tt := range []struct {
		ct, body string
		want     int64
	}{
		{"application/x-protobuf", "", 0},
		{"application/x-protobuf", "\x0a\x00", 0},                  // partial_success {}
		{"application/x-protobuf", "\x0a\x05\x08\x03\x12\x01x", 3}, // rejected 3, "x"
		{"application/json", `{}`, 0},
		{"application/json", `{"partialSuccess":{}}`, 0},
		{"application/json", `{"partialSuccess":{"rejectedLogRecords":"2"}}`, 2},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tt.ct)
			io.WriteString(w, tt.body)
		}))
		b := &otlpBench{url: srv.URL}
		status, _, rej, err := b.post(context.Background(), srv.Client(), tt.ct, []byte("x"))
		srv.Close()
		if err != nil || status != 200 || rej != tt.want {
			t.Errorf("%s %q: status %d, rejected %d, %v; want %d", tt.ct, tt.body, status, rej, err, tt.want)
		}
	}
}
