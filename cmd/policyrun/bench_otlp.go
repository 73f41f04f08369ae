package main

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

const benchOTLPUsage = `
usage: policyrun bench otlp [--url URL] [--clients N] [--batch N] [--records N]
                            [--encoding protobuf|json] [--compression none|gzip|zstd]
                            [--gzip] [--warmup N]
                            [--seed S] [--server-pid PID] [--wait D]

Sends generated OTLP log records (as policyrun gen otlp makes them: B5's
shape) to an OTLP/HTTP endpoint, any of them (policyrun's otlp input,
the OpenTelemetry Collector, Fluent Bit), from N clients at once, each on
a persistent connection. A request refused with 429, 502, 503 or 504, or
a connection error, is sent again (after Retry-After, when given). After
--warmup records, not measured, it sends --records and prints records/s
and the request latency's p50 and p99. With --server-pid (Linux), it also
prints the server process's CPU seconds per million records over the
measured records (user+sys, from /proc) and its resident memory: steady
(the median of samples every 100 ms) and peak. --wait waits for the
endpoint to accept connections first (a server just started); with
--records 0 it only waits. --compression sends each request compressed
(Content-Encoding), compressed once ahead; --gzip is --compression gzip.
`

// runBenchOTLP is policyrun bench otlp; args follow the word otlp.
func runBenchOTLP(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench otlp", benchOTLPUsage, stderr)
	target := fs.String("url", "http://127.0.0.1:4318/v1/logs", "the OTLP/HTTP logs endpoint")
	clients := fs.Int("clients", 16, "clients sending at once, each on its own connection")
	batch := fs.Int("batch", gen.OTLPBatch, "records per request")
	records := fs.Int("records", 1_000_000, "records to send and measure")
	encoding := fs.String("encoding", "protobuf", "protobuf or json")
	compression := fs.String("compression", "none", "none, or the requests' Content-Encoding: "+strings.Join(contentenc.Names(), " or "))
	gz := fs.Bool("gzip", false, "gzip the requests (--compression gzip)")
	warmup := fs.Int("warmup", 50_000, "records sent first, not measured")
	seed := fs.Uint64("seed", 1, "the generator's seed")
	pid := fs.Int("server-pid", 0, "the server's process id, to measure its CPU and memory (Linux /proc)")
	wait := fs.Duration("wait", 0, "wait up to this long for the endpoint to accept connections before sending")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if *gz {
		*compression = "gzip"
	}
	enc, known := contentenc.Lookup(*compression)
	if *encoding != "protobuf" && *encoding != "json" || *clients < 1 || *batch < 1 || *records < 0 || *records == 0 && *wait == 0 ||
		*warmup < 0 || !known && *compression != "none" {
		fs.Usage()
		return 2
	}
	if *wait > 0 {
		if err := waitListening(*target, *wait); err != nil {
			fmt.Fprintln(stderr, "policyrun bench otlp:", err)
			return 2
		}
		if *records == 0 {
			return 0 // only waited
		}
	}
	b := &otlpBench{url: *target, clients: *clients, json: *encoding == "json", enc: enc, stderr: stderr}
	fmt.Fprintf(stderr, "bench otlp: generating requests of %d records (%s, compression %s)\n", *batch, *encoding, *compression)
	b.requests = benchRequests(*batch, min(*records+*warmup, 100_000), *seed, b.json, enc)
	if *warmup > 0 {
		if _, err := b.run(*warmup, *batch); err != nil {
			fmt.Fprintln(stderr, "policyrun bench otlp:", err)
			return 2
		}
	}
	var before procStat
	var sampler *rssSampler
	if *pid > 0 {
		var err error
		if before, err = readProc(*pid); err != nil {
			fmt.Fprintln(stderr, "policyrun bench otlp: --server-pid:", err)
			return 2
		}
		sampler = sampleRSS(*pid)
	}
	res, err := b.run(*records, *batch)
	if err != nil {
		fmt.Fprintln(stderr, "policyrun bench otlp:", err)
		return 2
	}
	fmt.Fprintf(stdout, "records %d, requests %d, clients %d, %s, compression %s: %.0f records/s in %.2f s; request p50 %.2f ms, p99 %.2f ms; retries %d, rejected %d\n",
		res.records, res.requests, *clients, *encoding, *compression, float64(res.records)/res.wall.Seconds(), res.wall.Seconds(),
		ms(res.p50), ms(res.p99), res.retries, res.rejected)
	if *pid > 0 {
		after, err := readProc(*pid)
		steady, peak := sampler.stop()
		if err != nil {
			fmt.Fprintln(stderr, "policyrun bench otlp: --server-pid:", err)
			return 2
		}
		cpu := after.cpu - before.cpu
		fmt.Fprintf(stdout, "server: %.3f CPU s for %d records: %.3f CPU s per million; RSS steady %.1f MiB, peak %.1f MiB\n",
			cpu.Seconds(), res.records, cpu.Seconds()/float64(res.records)*1e6, mib(steady), mib(max(peak, after.hwm)))
	}
	return 0
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
