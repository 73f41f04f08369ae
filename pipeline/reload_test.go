package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/pipeline/config"
)

// writeGen writes the policies of generation k, two filters that each
// mark the records they run on with the generation, at prefix ("" or
// "attributes."): gen.policy sets v to "gK", mark.policy sets by_gK. A
// record that two generations ran on would carry two by_ keys, or a v
// and a by_ key that disagree.
func writeGen(t *testing.T, dir string, k int, prefix string) {
	t.Helper()
	writeFile(t, dir, "gen.policy", fmt.Sprintf("policy \"gen\"\n\nset .%sv = \"g%d\"\n", prefix, k))
	writeFile(t, dir, "mark.policy", fmt.Sprintf("policy \"mark\"\n\nset .%sby_g%d = true\n", prefix, k))
}

// genFilters are the filters of writeGen's policies.
const genFilters = `  filters:
    - name: policy
      file: gen.policy
    - name: policy
      file: mark.policy
`

// marked is what the generations did to one record of the output.
type marked struct {
	n     int64
	gen   int // from v; -1 when it has none
	marks int // by_ keys
	byGen int // the generation of the first by_ key
}

// readMarked reads the file output's records: the number of each at num
// (a path of keys) and the marks of genPolicy at prefix.
func readMarked(t *testing.T, path string, num []string, prefix []string) []marked {
	t.Helper()
	var out []marked
	for _, line := range testfs.ReadJSONLines[json.RawMessage](t, path) {
		var rec map[string]any
		d := json.NewDecoder(bytes.NewReader(line))
		d.UseNumber()
		if err := d.Decode(&rec); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		n, ok := dig(rec, num).(json.Number)
		if !ok {
			t.Fatalf("no %v in %s", num, line)
		}
		m := marked{gen: -1, byGen: -1}
		m.n, _ = n.Int64()
		at, _ := dig(rec, prefix).(map[string]any)
		if v, ok := at["v"].(string); ok {
			fmt.Sscanf(v, "g%d", &m.gen)
		}
		for k := range at {
			var g int
			if _, err := fmt.Sscanf(k, "by_g%d", &g); err == nil {
				m.marks++
				m.byGen = g
			}
		}
		out = append(out, m)
	}
	return out
}

func dig(v any, path []string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// tally checks that the output holds each record of [0, total) once,
// each marked by exactly one generation, and returns the duplicates, the
// records lost (for the test's log) and the generations seen.
func tally(t *testing.T, recs []marked, total int64) (dups, lost, gens int) {
	t.Helper()
	count := map[int64]int{}
	seen := map[int]bool{}
	for _, r := range recs {
		count[r.n]++
		seen[r.gen] = true
		if r.marks != 1 || r.byGen != r.gen {
			t.Errorf("record %d: v names generation %d and %d by_ keys (the first of generation %d): not exactly one policy ran on it", r.n, r.gen, r.marks, r.byGen)
		}
	}
	for n := range total {
		switch c := count[n]; {
		case c == 0:
			lost++
		case c > 1:
			dups += c - 1
		}
	}
	if len(count) != int(total) {
		t.Errorf("%d distinct records out of %d sent; some were not sent", len(count), total)
	}
	if dups != 0 || lost != 0 {
		t.Errorf("%d duplicates, %d lost", dups, lost)
	}
	return dups, lost, len(seen)
}

// stopWhenOut waits until total records are out of p, and stops it.
func stopWhenOut(t *testing.T, p *Pipeline, stop func() error, total int64) {
	t.Helper()
	if !eventually(20*time.Second, func() bool { return p.Summary().Out == total }) {
		t.Fatalf("%d of %d records out", p.Summary().Out, total)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// startRun builds the pipeline of cfg, logging to log, runs it in the
// background (until stop) and waits until it is ready.
func startRun(t *testing.T, cfg *config.Config, log *testsync.Buffer) (*Pipeline, func() error) {
	t.Helper()
	p, err := New(cfg, Options{Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	stop := background(t, p)
	if !eventually(5*time.Second, func() bool { ok, _ := p.Ready(); return ok }) {
		t.Fatal("the pipeline is not ready")
	}
	return p, stop
}

// reloadUnderLoad reloads p reloads times, 30 ms apart, each time with the
// next generation's policies at prefix, while load runs; mark is called
// after each reload returns, with the generation now running.
func reloadUnderLoad(t *testing.T, p *Pipeline, dir, prefix string, reloads int, mark func(gen int)) {
	t.Helper()
	for k := 1; k <= reloads; k++ {
		time.Sleep(30 * time.Millisecond)
		writeGen(t, dir, k, prefix)
		if err := p.Reload(); err != nil {
			t.Fatalf("reload %d: %v", k, err)
		}
		mark(k)
	}
}

// TestReloadUnderLoadTail appends records to a real file that a tail
// input reads, while the policies are replaced 10 times; each record must
// reach the file output exactly once, marked by exactly one generation's
// policies, generations in order (one input: batches are delivered in
// order), and each record appended after a reload returned by that
// generation or a later one.
func TestReloadUnderLoadTail(t *testing.T) {
	const reloads, burst = 10, 40
	dir := t.TempDir()
	writeGen(t, dir, 0, "")
	writeFile(t, dir, "app.log", "")
	cfg := tailConfig(t, dir, genFilters+toFile+"service:\n  batch_size: 100\n", "app.log", "parser: json", "db: tail.db", "poll_interval: 5ms")
	var log testsync.Buffer
	p, stop := startRun(t, cfg, &log)

	// The writer appends bursts of records until told to stop; written
	// counts the records whose write has returned.
	var written atomic.Int64
	var done atomic.Bool
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		f, err := os.OpenFile(filepath.Join(dir, "app.log"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for n := int64(0); !done.Load(); {
			var b bytes.Buffer
			for range burst {
				fmt.Fprintf(&b, `{"n":%d,"msg":"hello %d"}`+"\n", n, n)
				n++
			}
			if _, err := f.Write(b.Bytes()); err != nil {
				t.Error(err)
				return
			}
			written.Store(n)
			time.Sleep(time.Millisecond)
		}
	}()
	// after[k] is how many records had been written when reload k
	// returned: every record from there on was read after it.
	after := make([]int64, reloads+1)
	reloadUnderLoad(t, p, dir, "", reloads, func(k int) { after[k] = written.Load() })
	time.Sleep(50 * time.Millisecond) // records after the last reload
	done.Store(true)
	<-wrote
	total := written.Load()
	stopWhenOut(t, p, stop, total)

	recs := readMarked(t, filepath.Join(dir, "out.log"), []string{"n"}, nil)
	dups, lost, gens := tally(t, recs, total)
	last := 0
	for _, r := range recs {
		if r.gen < last {
			t.Fatalf("record %d: generation %d after generation %d", r.n, r.gen, last)
		}
		last = r.gen
		for k := reloads; k > 0; k-- {
			if r.n >= after[k] {
				if r.gen < k {
					t.Errorf("record %d, written after reload %d returned, ran on generation %d", r.n, k, r.gen)
				}
				break
			}
		}
	}
	if last != reloads {
		t.Errorf("the last record ran on generation %d, not %d", last, reloads)
	}
	s := p.Summary()
	if s.Reloads != reloads || s.FailedReloads != 0 {
		t.Errorf("reloads: ok %d, failed %d; want %d, 0\n%s", s.Reloads, s.FailedReloads, reloads, log.String())
	}
	if gens < 3 {
		t.Errorf("only %d generations ran on the records: the reloads were not under load", gens)
	}
	t.Logf("tail: %d records, %d reloads, %d generations seen, %d duplicates, %d lost", total, reloads, gens, dups, lost)
}

// TestReloadUnderLoadOTLP posts requests from 8 clients to an otlp input
// (real HTTP, persistent connections) while the policies are replaced 10
// times; every record of a request answered 200 must reach the file
// output exactly once, marked by exactly one generation's policies, all the
// records of a request by the same one (a request is a batch), and a
// request sent after a reload returned by that generation or a later one.
func TestReloadUnderLoadOTLP(t *testing.T) {
	const reloads, clients, per = 10, 8, 20
	dir := t.TempDir()
	writeGen(t, dir, 0, "attributes.")
	cfg := writeConfig(t, dir, otlpYAML(genFilters+toFile))
	var log testsync.Buffer
	p, stop := startRun(t, cfg, &log)
	url := "http://" + p.OTLPAddrs()[0].String() + OTLPPath

	var running atomic.Int64 // the generation whose reload has returned
	// floor[i] is the generation that ran when request i was sent.
	var mu sync.Mutex
	floor := map[int64]int{}
	stopLoad := postLoad(clients, func(c *http.Client, i int64) bool {
		gen := int(running.Load())
		mu.Lock()
		floor[i] = gen
		mu.Unlock()
		if a := post(t, c, url, ctProtobuf, "", otlpRequest(t, int(i)*per, per, false)); a.status != 200 {
			t.Errorf("request %d: %d %s", i, a.status, a.body)
			return false
		}
		return true
	})
	reloadUnderLoad(t, p, dir, "attributes.", reloads, func(k int) { running.Store(int64(k)) })
	time.Sleep(50 * time.Millisecond)
	requests := stopLoad()
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	total := requests * per
	recs := readMarked(t, filepath.Join(dir, "out.log"), []string{"body", "n"}, []string{"attributes"})
	dups, lost, gens := tally(t, recs, total)
	byRequest := map[int64]int{}
	lastGen := 0
	for _, r := range recs {
		i := r.n / per
		if g, ok := byRequest[i]; ok && g != r.gen {
			t.Errorf("request %d: records on generations %d and %d", i, g, r.gen)
		}
		byRequest[i] = r.gen
		if r.gen < floor[i] {
			t.Errorf("record %d, of a request sent after reload %d returned, ran on generation %d", r.n, floor[i], r.gen)
		}
		if floor[i] == reloads {
			lastGen = max(lastGen, r.gen)
		}
	}
	if lastGen != reloads {
		t.Errorf("no record sent after the last reload ran on generation %d", reloads)
	}
	if gens < 3 {
		t.Errorf("only %d generations ran on the records: the reloads were not under load", gens)
	}
	if s := p.Summary(); s.Reloads != reloads || s.FailedReloads != 0 {
		t.Errorf("reloads: ok %d, failed %d; want %d, 0\n%s", s.Reloads, s.FailedReloads, reloads, log.String())
	}
	t.Logf("otlp: %d records in %d requests, %d reloads, %d generations seen, %d duplicates, %d lost", total, requests, reloads, gens, dups, lost)
}

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

// postLoad runs clients goroutines over one HTTP client, each calling
// send with the next request's number (0, 1, ...) until send returns
// false or stop is called; stop waits for them and returns the number
// of requests begun.
func postLoad(clients int, send func(c *http.Client, i int64) bool) (stop func() int64) {
	var next atomic.Int64
	var done atomic.Bool
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				if !send(c, next.Add(1)-1) {
					return
				}
			}
		}()
	}
	return func() int64 {
		done.Store(true)
		wg.Wait()
		return next.Load()
	}
}

// appendRecords appends records {"n": from} … {"n": to-1} to dir/name.
func appendRecords(t *testing.T, dir, name string, from, to int) {
	t.Helper()
	var b strings.Builder
	for n := from; n < to; n++ {
		fmt.Fprintf(&b, `{"n":%d}`+"\n", n)
	}
	appendFile(t, dir, name, b.String())
}
