package output

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/record"
)

// TestWorkersReuseConnections checks docs/pipeline.md's "workers: requests
// in flight at once, each on its own persistent connection": the receiver
// counts the connections opened to it (http.StateNew) while an output
// delivers 20 batches; a worker keeps its connection across requests, so
// there are never more connections than workers, and one worker uses one,
// through refusals, retries and TLS too.
func TestWorkersReuseConnections(t *testing.T) {
	const batches = 20
	tests := []struct {
		name    string
		output  string
		workers int
		writers int // goroutines writing the batches, each waiting for delivery
		tls     bool
		// refuse answers some requests instead of the receiver.
		refuse     func(w http.ResponseWriter, r *http.Request, n int64) bool
		delivered  int64 // records delivered in the end; the rest refused
		maxConns   int64
		minRetries int64
	}{
		{name: "otlp, one worker", output: "otlp", workers: 1, writers: 1, delivered: 100, maxConns: 1},
		// One batch in flight at a time: whichever worker takes it finds
		// the connection the last one left idle.
		{name: "otlp, four workers, one writer", output: "otlp", workers: 4, writers: 1, delivered: 100, maxConns: 1},
		{name: "otlp, four workers, four writers", output: "otlp", workers: 4, writers: 4, delivered: 100, maxConns: 4},
		{name: "http, one worker", output: "http", workers: 1, writers: 1, delivered: 100, maxConns: 1},
		{name: "otlp over TLS", output: "otlp", workers: 1, writers: 1, tls: true, delivered: 100, maxConns: 1},
		{name: "retried 503s", output: "otlp", workers: 1, writers: 1, delivered: 100, maxConns: 1, minRetries: batches,
			refuse: func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n%2 == 1 { // every batch's first try
					http.Error(w, "overloaded", http.StatusServiceUnavailable)
					return true
				}
				return false
			}},
		{name: "refused 400s", output: "otlp", workers: 1, writers: 1, delivered: 50, maxConns: 1,
			refuse: func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n%2 == 0 {
					http.Error(w, "no such tenant", http.StatusBadRequest)
					return true
				}
				return false
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := otlptest.New(t)
			rc.Refuse = tt.refuse
			var conns atomic.Int64
			srv := httptest.NewUnstartedServer(rc)
			srv.Config.ErrorLog = quietLog
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			if tt.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			o, _ := start(t, tt.output, network(srv.URL, func(h *HTTPConfig, d *DeliveryConfig) {
				d.Workers = tt.workers
				h.TLS.InsecureSkipVerify = tt.tls
			}), Env{})
			recs := make([][]*record.Record, batches)
			for i := range recs {
				recs[i] = numbered(t, i*5, 5)
			}
			var wg sync.WaitGroup
			for w := range tt.writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < batches; i += tt.writers {
						if _, err := o.Write(context.Background(), recs[i], WriteOptions{}); err != nil {
							t.Errorf("Write %d: %v", i, err)
						}
					}
				}()
			}
			wg.Wait()
			s := o.Stats()
			if s.Records != tt.delivered || s.Records+s.Rejected != 5*batches || s.Retries < tt.minRetries {
				t.Errorf("stats = %+v, want %d delivered of %d, at least %d retries", s, tt.delivered, 5*batches, tt.minRetries)
			}
			if n := conns.Load(); n < 1 || n > tt.maxConns {
				t.Errorf("%d connections for %d requests with %d workers, want at most %d",
					n, rc.Requests.Load(), tt.workers, tt.maxConns)
			}
		})
	}
}
