package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// TestReloadRestartsTailInput changes a tail input's tag in each of 6
// reloads while a writer appends to its file: each reload restarts the
// input (stopped as a stop does, started again from its checkpoint),
// and every record reaches the output exactly once. Without a db the
// restarted input resumes from where the one it replaces stood, in
// memory.
func TestReloadRestartsTailInput(t *testing.T) {
	for _, db := range []string{"db: tail.db", ""} {
		t.Run(map[bool]string{true: "with a db", false: "without a db"}[db != ""], func(t *testing.T) {
			const reloads = 6
			dir := t.TempDir()
			writeGen(t, dir, 0, "")
			writeFile(t, dir, "app.log", "")
			config := func(tag string) string {
				return tailYAML(genFilters+toFile, "app.log", "parser: json", "poll_interval: 5ms", "tag: "+tag, db)
			}
			var log testsync.Buffer
			p, stop := startRun(t, writeConfig(t, dir, config("a")), &log)
			var written atomic.Int64
			var done atomic.Bool
			wrote := make(chan struct{})
			go func() {
				defer close(wrote)
				for n := 0; !done.Load(); n += 20 {
					appendRecords(t, dir, "app.log", n, n+20)
					written.Store(int64(n + 20))
					time.Sleep(time.Millisecond)
				}
			}()
			for k := 1; k <= reloads; k++ {
				time.Sleep(30 * time.Millisecond)
				p.mu.Lock()
				before := p.order[0]
				p.mu.Unlock()
				writeFile(t, dir, "pipeline.yaml", config(fmt.Sprintf("t%d", k)))
				if err := p.Reload(); err != nil {
					t.Fatalf("reload %d: %v", k, err)
				}
				p.mu.Lock()
				after := p.order[0]
				p.mu.Unlock()
				if after == before || after.tail.cfg.Tag != fmt.Sprintf("t%d", k) {
					t.Fatalf("reload %d did not restart the input", k)
				}
			}
			time.Sleep(30 * time.Millisecond)
			done.Store(true)
			<-wrote
			total := written.Load()
			stopWhenOut(t, p, stop, total)
			dups, lost, _ := tally(t, readMarked(t, filepath.Join(dir, "out.log"), []string{"n"}, nil), total)
			if s := p.Summary(); s.Inputs[0].In != total {
				t.Errorf("the input's counter says %d records, not %d: it did not count on across restarts", s.Inputs[0].In, total)
			}
			if !strings.Contains(log.String(), `"input tail.0"="tag changed"`) {
				t.Errorf("the log does not say why the input restarted:\n%s", log.String())
			}
			t.Logf("%d records, %d restarts, %d duplicates, %d lost", total, reloads, dups, lost)
		})
	}
}

// TestReloadRestartsOTLPInput changes an otlp input's tag in each of 6
// reloads while 4 clients post: the restarted input takes over its
// predecessor's socket, so the address stays and no client is refused;
// every request answered 200 is in the output exactly once. A client
// whose idle connection the old server closed as it stopped sends again,
// as OTLP exporters do: the request was not read.
func TestReloadRestartsOTLPInput(t *testing.T) {
	const reloads, clients, per = 6, 4, 10
	dir := t.TempDir()
	writeGen(t, dir, 0, "attributes.")
	config := func(tag string) string { return otlpYAML(genFilters+toFile, "tag: "+tag) }
	var log testsync.Buffer
	p, stop := startRun(t, writeConfig(t, dir, config("a")), &log)
	addr := p.OTLPAddrs()[0].String()
	url := "http://" + addr + OTLPPath
	var resent atomic.Int64
	stopLoad := postLoad(clients, func(c *http.Client, i int64) bool {
		body := otlpRequest(t, int(i)*per, per, false)
		for try := 0; ; try++ {
			resp, err := c.Post(url, ctProtobuf, bytes.NewReader(body))
			if err != nil {
				if strings.Contains(err.Error(), "refused") || try == 5 {
					t.Errorf("request %d: %v", i, err)
					return false
				}
				resent.Add(1)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("request %d: %d %s", i, resp.StatusCode, b)
				return false
			}
			return true
		}
	})
	for k := 1; k <= reloads; k++ {
		time.Sleep(30 * time.Millisecond)
		writeFile(t, dir, "pipeline.yaml", config(fmt.Sprintf("t%d", k)))
		if err := p.Reload(); err != nil {
			t.Fatalf("reload %d: %v", k, err)
		}
		if got := p.OTLPAddrs()[0].String(); got != addr {
			t.Fatalf("reload %d moved the input from %s to %s", k, addr, got)
		}
	}
	time.Sleep(30 * time.Millisecond)
	requests := stopLoad()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	total := requests * per
	dups, lost, _ := tally(t, readMarked(t, filepath.Join(dir, "out.log"), []string{"body", "n"}, []string{"attributes"}), total)
	if s := p.Summary(); s.Inputs[0].In != total {
		t.Errorf("the input's counter says %d records, not %d", s.Inputs[0].In, total)
	}
	if _, err := http.Post(url, ctProtobuf, bytes.NewReader(nil)); err == nil {
		t.Error("the socket is still open after the stop")
	}
	t.Logf("%d records in %d requests, %d restarts, %d sent again after a closed connection, %d duplicates, %d lost",
		total, requests, reloads, resent.Load(), dups, lost)
}

// TestReloadAddsAndRemovesInputs: an input added by a reload starts, one
// removed stops (after saving its checkpoint: added back, it reads on
// from there), and a change of service.batch_size restarts the tail
// inputs.
func TestReloadAddsAndRemovesInputs(t *testing.T) {
	dir := t.TempDir()
	writeGen(t, dir, 0, "")
	writeFile(t, dir, "a.log", "")
	writeFile(t, dir, "b.log", "")
	input := func(name string) string {
		return tailInput(name+".log", "alias: "+name, "parser: json", "poll_interval: 5ms", "db: "+name+".db")
	}
	config := func(service string, inputs ...string) string {
		return "service:\n" + service + pipelineYAML(genFilters+toFile, inputs...)
	}
	var log testsync.Buffer
	p, stop := startRun(t, writeConfig(t, dir, config("  batch_size: 1000\n", input("a"))), &log)
	appendRecords(t, dir, "a.log", 0, 10)
	waitOut(t, p, dir, 10)

	writeFile(t, dir, "pipeline.yaml", config("  batch_size: 1000\n", input("a"), input("b")))
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, dir, "b.log", 10, 20)
	waitOut(t, p, dir, 20)

	writeFile(t, dir, "pipeline.yaml", config("  batch_size: 1000\n", input("a")))
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, dir, "b.log", 20, 30) // not read: b is gone
	appendRecords(t, dir, "a.log", 30, 40)
	waitOut(t, p, dir, 30)
	time.Sleep(50 * time.Millisecond)
	if out := p.Summary().Out; out != 30 {
		t.Errorf("%d records out, want 30: the removed input read on", out)
	}

	writeFile(t, dir, "pipeline.yaml", config("  batch_size: 500\n", input("a"), input("b")))
	if err := p.Reload(); err != nil {
		t.Fatal(err)
	}
	gens := waitOut(t, p, dir, 40)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if len(gens) != 40 {
		t.Errorf("%d records, want 40", len(gens))
	}
	tally(t, readMarked(t, filepath.Join(dir, "out.log"), []string{"n"}, nil), 40)
	for _, want := range []string{`"input b"=added`, `"input b"=removed`, `"input a"="service.batch_size changed"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log does not say %s:\n%s", want, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db")); err != nil {
		t.Errorf("the removed input saved no checkpoint: %v", err)
	}
}
