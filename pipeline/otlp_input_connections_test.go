package pipeline

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
)

// TestOTLPInputPersistentConnections sends requests one after another
// with one client: the otlp input keeps the connection open, so the
// client dials once and every request after the first reuses it, refused
// requests included.
func TestOTLPInputPersistentConnections(t *testing.T) {
	url, p, _ := otlpServer(t, toNull)
	var dials atomic.Int64
	var d net.Dialer
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	requests := []struct {
		name, url, ct, enc string
		body               []byte
		status             int
	}{
		{"protobuf", url, ctProtobuf, "", otlpRequest(t, 0, 10, false), 200},
		{"JSON", url, ctJSON, "", otlpRequest(t, 10, 10, true), 200},
		{"gzip", url, ctProtobuf, "gzip", gzipped(t, otlpRequest(t, 20, 10, false)), 200},
		{"zstd", url, ctJSON, "zstd", zstded(t, otlpRequest(t, 30, 10, true)), 200},
		{"garbage", url, ctProtobuf, "", []byte("\xff\xff garbage"), 400},
		{"wrong content type", url, "text/plain", "", []byte("hello"), 415},
		{"another path", strings.TrimSuffix(url, OTLPPath) + "/v1/traces", ctProtobuf, "", otlpRequest(t, 0, 1, false), 404},
		{"protobuf again", url, ctProtobuf, "", otlpRequest(t, 40, 10, false), 200},
	}
	for i, rq := range requests {
		var got httptrace.GotConnInfo
		trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { got = info }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
			http.MethodPost, rq.url, bytes.NewReader(rq.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", rq.ct)
		if rq.enc != "" {
			req.Header.Set("Content-Encoding", rq.enc)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", rq.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != rq.status {
			t.Errorf("%s: %d %s, want %d", rq.name, resp.StatusCode, body, rq.status)
		}
		if i > 0 && !got.Reused {
			t.Errorf("%s (request %d): on a new connection, not the one kept open", rq.name, i+1)
		}
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("the client dialed %d times for %d requests in a row, want 1", n, len(requests))
	}
	if in := p.Summary().Inputs[0]; in.In != 50 {
		t.Errorf("input summary %+v, want 50 records in", in)
	}
}
