package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testnet"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// outage is how long the receiver of TestDeliveryThroughOutage is down:
// issue 13's "down for 30 s", far longer than retry.max_interval, so the
// output retries through many backoff rounds at the maximum.
const outage = 30 * time.Second

// TestDeliveryThroughOutage runs a pipeline (a tail input and an otlp
// input into an otlp output) whose receiver goes down for 30 s while
// lines are written and OTLP clients keep sending, under each buffer
// type with a small max_size: every line and every acknowledged request
// arrives once the receiver is back, the buffer never holds more than
// max_size, and the output keeps retrying all through the outage. With a
// memory buffer no request is answered 200 before its records were
// delivered; with a filesystem buffer requests are answered while the
// receiver is down (the chunks hold them) until the buffer is full.
//
// The subtests run in parallel with each other and with the package's
// other parallel tests: the outage is wall time, not CPU.
func TestDeliveryThroughOutage(t *testing.T) {
	needChildProcess(t)
	t.Parallel()
	for _, buf := range []string{"memory", "filesystem"} {
		t.Run(buf, func(t *testing.T) {
			t.Parallel()
			testOutage(t, buf)
		})
	}
}

func testOutage(t *testing.T, buf string) {
	rcv := newFlakyServer(t)
	metrics, listen := testnet.FreeAddr(t), testnet.FreeAddr(t)
	const maxSize = 64 << 10
	chunk := ""
	if buf == "filesystem" {
		chunk = ", chunk_size: 8k"
	}
	dir := writeFiles(t, map[string]string{"p.yaml": fmt.Sprintf(`
service:
  data_dir: data
  metrics: %s
  grace: 2s
pipeline:
  inputs:`+tailLogs+`
    - name: otlp
      listen: %s
  outputs:
    - name: otlp
      endpoint: %s
      timeout: 1s
      workers: 2
      retry: {initial_interval: 50ms, max_interval: 1s}
      buffer: {type: %s, max_size: %d%s}
`, metrics, listen, rcv.url(), buf, maxSize, chunk)})
	// The file is there at the start: the tail finds files created later
	// only at its next scan (refresh_interval, a minute).
	os.Mkdir(filepath.Join(dir, "logs"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "logs", "a.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c := startRun(t, dir, "p.yaml")
	if !testsync.Eventually(10*time.Second, func() bool { return metric(metrics, `policyrun_output_retries_total{name="otlp.0"}`) >= 0 }) {
		t.Fatalf("no metrics\n%s", c.stderr)
	}

	// Lines 0 … 5,999 and OTLP records 10,000 … 17,999, all written and
	// sent from before the outage to well into it. The clients give up on
	// a request after half a second and send it again, as exporters do;
	// under a memory buffer the copies they gave up on stay queued until
	// delivered, so the buffer fills and the input answers 503.
	const lines, otlpFrom, clients, requests, per = 6000, 10000, 4, 40, 50
	w := writeLines(t, filepath.Join(dir, "logs", "a.log"), 0, lines, 100, 150*time.Millisecond)
	cl := &otlpClients{clients: clients, requests: requests, per: per, from: otlpFrom, timeout: 500 * time.Millisecond, pace: 50 * time.Millisecond, backoff: 100 * time.Millisecond}
	cl.start(listen)
	peak := bufferPeak(metrics, `policyrun_output_buffer_bytes{name="otlp.0"}`)

	time.Sleep(time.Second)
	rcv.down()
	time.Sleep(2 * time.Second)
	retriesEarly := metric(metrics, `policyrun_output_retries_total{name="otlp.0"}`)
	time.Sleep(outage - 2*time.Second)
	retriesLate := metric(metrics, `policyrun_output_retries_total{name="otlp.0"}`)
	// The receiver is still down: what it holds cannot grow. Under a
	// memory buffer every acknowledged record is among them (a 200 only
	// once delivered); under a filesystem buffer some are not yet.
	var ackedDown, undelivered int
	cl.acked.Range(func(k, _ any) bool {
		ackedDown++
		if !rcv.rc.Has(int64(k.(int))) {
			undelivered++
		}
		return true
	})
	heldDown := rcv.rc.Count()
	rcv.up()

	<-w
	cl.sent.Wait()
	total := lines + clients*requests*per
	if !testsync.Eventually(60*time.Second, func() bool { return rcv.rc.Count() == total }) {
		t.Errorf("%d of %d records arrived\n%s", rcv.rc.Count(), total, c.stderr)
	}
	bufPeak := peak()
	retries := metric(metrics, `policyrun_output_retries_total{name="otlp.0"}`)
	failed := metric(metrics, `policyrun_output_records_failed_total{name="otlp.0"}`)
	c.stop(t, syscall.SIGTERM, 10*time.Second)
	for n := range lines {
		if !rcv.rc.Has(int64(n)) {
			t.Fatalf("line %d did not arrive", n)
		}
	}
	for n := otlpFrom; n < otlpFrom+clients*requests*per; n++ {
		if !rcv.rc.Has(int64(n)) {
			t.Fatalf("record %d, acknowledged, did not arrive", n)
		}
	}
	t.Logf("%s: %d records, %d had arrived when the receiver came back; %d acknowledged by then, %d of them not yet delivered; retries %d after 2 s of the outage, %d at its end, %d in all; buffer peak %d bytes; %d answers 503",
		buf, total, heldDown, ackedDown, undelivered, retriesEarly, retriesLate, retries, bufPeak, cl.refused.Load())
	if bufPeak > maxSize {
		t.Errorf("the buffer held %d bytes, max_size %d", bufPeak, maxSize)
	}
	if cl.refused.Load() == 0 {
		t.Errorf("no answer 503: the buffer never filled (peak %d bytes)", bufPeak)
	}
	// Retrying goes on through the whole outage (retry.max_elapsed is 0:
	// forever), at most a second apart per worker.
	if retriesEarly <= 0 || retriesLate-retriesEarly < int64(outage/time.Second)/2 {
		t.Errorf("retries: %d after 2 s of the outage, %d at its end", retriesEarly, retriesLate)
	}
	if failed != 0 {
		t.Errorf("%d records failed", failed)
	}
	switch buf {
	case "memory":
		if undelivered != 0 {
			t.Errorf("%d records were acknowledged before they were delivered", undelivered)
		}
	case "filesystem":
		if undelivered == 0 {
			t.Errorf("no request was acknowledged while the receiver was down (%d acknowledged in all)", ackedDown)
		}
	}
}
