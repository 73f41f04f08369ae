package pipeline

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testnet"
)

// TestHealthEndpoints: /healthz answers 200 while the process serves;
// /readyz answers 200 once the pipeline runs and 503, with the reason,
// when an output's buffer is full (its receiver down, nothing more fits)
// and when the run is stopping.
func TestHealthEndpoints(t *testing.T) {
	ln := testnet.FreeAddr(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, "service:\n  data_dir: data\n  grace: 100ms\npipeline:\n  inputs:\n    - name: otlp\n      listen: 127.0.0.1:0\n"+
		"  outputs:\n    - name: otlp\n      endpoint: http://"+ln+"\n      retry: {initial_interval: 1h, max_interval: 1h}\n"+
		"      buffer: {type: filesystem, max_size: 8k, when_full: drop_newest}\n")
	p, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := p.ServeMetrics(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz before the run: %d", code)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "not started") {
		t.Errorf("/readyz before the run: %d %q", code, body)
	}
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for code, _ := get("/readyz"); code != 200; code, _ = get("/readyz") {
		if time.Now().After(deadline) {
			t.Fatal("never ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Fill the output's buffer: its receiver is down and retries wait an
	// hour.
	url := "http://" + p.OTLPAddrs()[0].String() + OTLPPath
	for i := 0; i < 20; i++ {
		post(t, &http.Client{}, url, ctProtobuf, "", otlpRequest(t, i*50, 50, false))
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "output otlp.0: its buffer is full") {
		t.Errorf("/readyz with a full buffer: %d %q", code, body)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("/healthz with a full buffer: %d", code)
	}
	cancel()
	<-done
	p.Close()
}
