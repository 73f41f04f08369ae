package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/internal/contentenc"
	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/record"
)

// OTLPLoad is a run of the OTLP/HTTP load generator (policyrun bench
// otlp): generated records (B5's shape, as policyrun gen otlp makes them)
// sent to an endpoint from Clients at once, each on a persistent
// connection, Warmup records first and not measured.
type OTLPLoad struct {
	URL         string
	Clients     int
	Batch       int    // records per request
	Records     int    // 0 with Wait: only wait
	Encoding    string // protobuf or json
	Compression string // none, or a Content-Encoding of contentenc
	Warmup      int
	Seed        uint64
	ServerPID   int           // > 0: measure the server's CPU and memory (Linux /proc)
	Wait        time.Duration // wait this long for the endpoint to accept connections
}

// Valid reports whether the load can be run.
func (l *OTLPLoad) Valid() bool {
	_, known := contentenc.Lookup(l.Compression)
	return (l.Encoding == "protobuf" || l.Encoding == "json") && l.Clients >= 1 && l.Batch >= 1 && l.Records >= 0 &&
		(l.Records > 0 || l.Wait > 0) && l.Warmup >= 0 && (known || l.Compression == "none")
}

// Run sends the load and writes what it measured to stdout: the records
// measured and the warm-up before them (so that a script checks what the
// server counted without knowing the flags' defaults), records/s and the
// request latency's p50 and p99, and with ServerPID the server's CPU
// seconds per million records and resident memory. Progress goes to
// stderr.
func (l *OTLPLoad) Run(stdout, stderr io.Writer) error {
	enc, _ := contentenc.Lookup(l.Compression)
	if l.Wait > 0 {
		if err := waitListening(l.URL, l.Wait); err != nil {
			return err
		}
		if l.Records == 0 {
			return nil // only waited
		}
	}
	b := &otlpBench{url: l.URL, clients: l.Clients, json: l.Encoding == "json", enc: enc, stderr: stderr}
	fmt.Fprintf(stderr, "bench otlp: generating requests of %d records (%s, compression %s)\n", l.Batch, l.Encoding, l.Compression)
	b.requests = benchRequests(l.Batch, min(l.Records+l.Warmup, 100_000), l.Seed, b.json, enc)
	if l.Warmup > 0 {
		if _, err := b.run(l.Warmup, l.Batch); err != nil {
			return err
		}
	}
	var before procStat
	var sampler *rssSampler
	if l.ServerPID > 0 {
		var err error
		if before, err = readProc(l.ServerPID); err != nil {
			return fmt.Errorf("--server-pid: %w", err)
		}
		sampler = sampleRSS(l.ServerPID)
	}
	res, err := b.run(l.Records, l.Batch)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "records %d, warmup %d, requests %d, clients %d, %s, compression %s: %.0f records/s in %.2f s; request p50 %.2f ms, p99 %.2f ms; retries %d, rejected %d\n",
		res.records, l.Warmup, res.requests, l.Clients, l.Encoding, l.Compression, float64(res.records)/res.wall.Seconds(), res.wall.Seconds(),
		ms(res.p50), ms(res.p99), res.retries, res.rejected)
	if l.ServerPID > 0 {
		after, err := readProc(l.ServerPID)
		steady, peak := sampler.stop()
		if err != nil {
			return fmt.Errorf("--server-pid: %w", err)
		}
		cpu := after.cpu - before.cpu
		fmt.Fprintf(stdout, "server: %.3f CPU s for %d records: %.3f CPU s per million; RSS steady %.1f MiB, peak %.1f MiB\n",
			cpu.Seconds(), res.records, cpu.Seconds()/float64(res.records)*1e6, mib(steady), mib(max(peak, after.hwm)))
	}
	return nil
}

// waitListening dials the URL's host until it accepts a connection.
func waitListening(rawURL string, d time.Duration) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), map[string]string{"https": "443"}[u.Scheme]+map[bool]string{true: "80"}[u.Scheme != "https"])
	}
	deadline := time.Now().Add(d)
	for {
		conn, err := net.DialTimeout("tcp", host, time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not accept connections after %v: %w", host, d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mib(b int64) float64        { return float64(b) / (1 << 20) }

type otlpBench struct {
	url      string
	clients  int
	json     bool
	enc      *contentenc.Encoding // nil: none
	requests [][]byte             // replayed in turn
	stderr   io.Writer
}

// benchRequests makes the distinct requests that are replayed: n records
// in requests of batch, each encoded (and compressed, with enc) once.
func benchRequests(batch, n int, seed uint64, asJSON bool, enc *contentenc.Encoding) [][]byte {
	g := gen.NewOTLP(seed)
	a := record.NewArena()
	var e record.OTLPEncoder
	var recs []*record.Record
	var out [][]byte
	for i := 0; i < max(n, batch); i += batch {
		a.Reset()
		recs = g.Records(a, batch, recs[:0])
		var body []byte
		if asJSON {
			body = e.AppendJSON(nil, recs)
		} else {
			body = e.AppendProto(nil, recs)
		}
		if enc != nil {
			body = enc.Append(nil, body)
		}
		out = append(out, body)
	}
	return out
}

type benchResult struct {
	records, requests, retries, rejected int64
	wall, p50, p99                       time.Duration
}

// run sends records records in requests of batch from the clients, and
// measures.
func (b *otlpBench) run(records, batch int) (benchResult, error) {
	nreq := (records + batch - 1) / batch
	tr := &http.Transport{MaxIdleConns: b.clients, MaxIdleConnsPerHost: b.clients, MaxConnsPerHost: b.clients,
		DisableCompression: true, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ct := "application/x-protobuf"
	if b.json {
		ct = "application/json"
	}
	var next, retries, rejected atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, b.clients)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range b.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(nreq) || ctx.Err() != nil {
					return
				}
				body := b.requests[int(i)%len(b.requests)]
				for attempt := 0; ; attempt++ {
					t0 := time.Now()
					status, wait, rej, err := b.post(ctx, client, ct, body)
					if err == nil && status == 200 {
						lat[c] = append(lat[c], time.Since(t0))
						rejected.Add(rej)
						break
					}
					if err == nil && status != 429 && status != 502 && status != 503 && status != 504 {
						firstErr.CompareAndSwap(nil, fmt.Errorf("the endpoint answered %d: not retried", status))
						cancel()
						return
					}
					if attempt == 100 {
						firstErr.CompareAndSwap(nil, fmt.Errorf("a request was refused 100 times: %v (status %d)", err, status))
						cancel()
						return
					}
					retries.Add(1)
					if wait <= 0 {
						wait = time.Duration(min(attempt+1, 10)) * 10 * time.Millisecond
					}
					time.Sleep(wait)
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	if err, _ := firstErr.Load().(error); err != nil {
		return benchResult{}, err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	return benchResult{records: int64(records), requests: int64(nreq), retries: retries.Load(), rejected: rejected.Load(),
		wall: wall, p50: pct(0.50), p99: pct(0.99)}, nil
}

// post sends one request; it returns the status, the Retry-After asked
// for, and the records a partial success rejected.
func (b *otlpBench) post(ctx context.Context, c *http.Client, ct string, body []byte) (int, time.Duration, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("Content-Type", ct)
	if b.enc != nil {
		req.Header.Set("Content-Encoding", b.enc.Name)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	var wait time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		wait = time.Duration(s) * time.Second
	}
	// The records a partial success rejected, read from the answer in
	// either encoding: the Collector answers an ExportLogsServiceResponse
	// with an empty partial_success, which rejects nothing.
	rej, _ := output.OTLPResponse(resp.StatusCode, resp.Header.Get("Content-Type"), data)
	return resp.StatusCode, wait, rej, nil
}

// procStat is what /proc says of a process.
type procStat struct {
	cpu time.Duration // user + system
	hwm int64         // peak RSS, bytes
}

// clockTick is USER_HZ, 100 on every Linux that policyrun runs on.
const clockTick = 100

func readProc(pid int) (procStat, error) {
	var s procStat
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return s, err
	}
	// The fields after the command's closing parenthesis: state is 3,
	// utime 14 and stime 15 (counting from 1 over the whole line).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return s, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	s.cpu = time.Duration(ut+st) * time.Second / clockTick
	s.hwm = procStatus(pid, "VmHWM:")
	return s, nil
}

// procStatus reads a kB field of /proc/PID/status, in bytes.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

type rssSampler struct {
	done    chan struct{}
	wg      sync.WaitGroup
	samples []int64
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				if v := procStatus(pid, "VmRSS:"); v > 0 {
					s.samples = append(s.samples, v)
				}
			}
		}
	}()
	return s
}

// stop returns the median and the largest sample.
func (s *rssSampler) stop() (steady, peak int64) {
	close(s.done)
	s.wg.Wait()
	if len(s.samples) == 0 {
		return 0, 0
	}
	slices.Sort(s.samples)
	return s.samples[len(s.samples)/2], s.samples[len(s.samples)-1]
}
