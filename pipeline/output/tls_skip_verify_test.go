package output

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/internal/testkit/testcert"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// network sets what the otlp and http outputs share: the URL (srv plus
// a path), fast retries, and mod on the HTTP client's keys and the
// delivery's.
func network(url string, mod func(*HTTPConfig, *DeliveryConfig)) func(Settings) {
	return func(s Settings) {
		var h *HTTPConfig
		var d *DeliveryConfig
		switch c := s.(type) {
		case *OTLPConfig:
			h, d = &c.HTTPConfig, &c.DeliveryConfig
			h.URL = url + OTLPPath
		case *HTTPOutputConfig:
			h, d = &c.HTTPConfig, &c.DeliveryConfig
			h.URL = url + "/ingest"
		default:
			panic("not a network output")
		}
		d.Retry, d.Timeout = fastRetry, 2*time.Second
		if mod != nil {
			mod(h, d)
		}
	}
}

// TestInsecureSkipVerify sends to an HTTPS receiver whose certificate is
// self-signed (httptest's own): with tls.insecure_skip_verify the records
// are delivered, whatever else tls.* says; without it, and with no
// tls.ca_file that signs the receiver's certificate, the handshake fails,
// which is retried (a TLS failure is retryable), nothing reaches the
// receiver, and the Write does not return delivered.
func TestInsecureSkipVerify(t *testing.T) {
	certs := testcert.New(t, t.TempDir()) // a CA that did not sign the receiver's certificate
	tests := []struct {
		name   string
		output string
		tls    ClientTLS
		ok     bool
	}{
		{"otlp/insecure_skip_verify", "otlp", ClientTLS{InsecureSkipVerify: true}, true},
		{"otlp/verify", "otlp", ClientTLS{}, false},
		{"http/insecure_skip_verify", "http", ClientTLS{InsecureSkipVerify: true}, true},
		{"http/verify", "http", ClientTLS{}, false},
		// Other tls keys make a TLS config of the output's own: the flag
		// still decides.
		{"otlp/insecure_skip_verify with a client certificate", "otlp",
			ClientTLS{CertFile: certs.ClientCert, KeyFile: certs.ClientKey, InsecureSkipVerify: true}, true},
		{"otlp/verify with a client certificate", "otlp",
			ClientTLS{CertFile: certs.ClientCert, KeyFile: certs.ClientKey}, false},
		{"otlp/insecure_skip_verify with another CA", "otlp", ClientTLS{CAFile: certs.CA, InsecureSkipVerify: true}, true},
		{"otlp/verify with another CA", "otlp", ClientTLS{CAFile: certs.CA}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := otlptest.New(t)
			srv := httptest.NewUnstartedServer(rc)
			srv.Config.ErrorLog = quietLog
			srv.StartTLS()
			defer srv.Close()
			o, log := start(t, tt.output, network(srv.URL, func(h *HTTPConfig, _ *DeliveryConfig) {
				h.TLS = tt.tls
			}), Env{})
			recs := numbered(t, 0, 5)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := o.Write(ctx, recs, WriteOptions{})
				done <- err
			}()
			if tt.ok {
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("Write: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the Write did not return")
				}
				rc.Each(t, 5)
				if s := o.Stats(); s.Records != 5 || s.Retries != 0 {
					t.Errorf("stats = %+v, want 5 records delivered at once", s)
				}
				return
			}
			// Not trusted: retried, and retried again.
			if !testsync.Eventually(wait, func() bool { return o.Stats().Retries >= 2 }) {
				t.Fatalf("no retries against an untrusted receiver: stats %+v", o.Stats())
			}
			select {
			case err := <-done:
				t.Fatalf("the Write returned (%v) while nothing was delivered", err)
			default:
			}
			cancel()
			if err := <-done; err == nil {
				t.Error("the Write, cancelled, reports no error for records never delivered")
			}
			if n := rc.Requests.Load(); n != 0 {
				t.Errorf("the receiver got %d requests over an unverified connection", n)
			}
			// Stopped at once (not after the cleanup's grace): the
			// records the memory buffer still holds are lost.
			stopped, stop := context.WithCancel(context.Background())
			stop()
			o.Shutdown(stopped)
			if s := o.Stats(); s.Records != 0 || s.Rejected != 0 || s.Lost != 5 {
				t.Errorf("stats = %+v, want nothing delivered or rejected, 5 lost", s)
			}
			if !strings.Contains(log.String(), "certificate") {
				t.Errorf("the log does not say why:\n%s", log)
			}
		})
	}
}
