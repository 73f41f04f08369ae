package output

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/internal/testkit/testcert"
	"github.com/policyrun/policyrun/internal/testkit/testnet"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
	"github.com/policyrun/policyrun/pipeline/buffer"
	"github.com/policyrun/policyrun/record"
)

// refusingReceiver is a receiver, served until the test ends, that
// answers status to every request while refusing is true, as it is at
// first; it returns the receiver, its URL and the switch.
func refusingReceiver(t *testing.T, status int) (*otlptest.Receiver, string, *atomic.Bool) {
	rc := otlptest.New(t)
	refusing := new(atomic.Bool)
	refusing.Store(true)
	rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if refusing.Load() {
			http.Error(w, "refused", status)
			return true
		}
		return false
	}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL, refusing
}

// batch of plain records {"n": from} … {"n": from+n-1}.
func numbered(t *testing.T, from, n int) []*record.Record {
	t.Helper()
	a := record.NewArena()
	recs := make([]*record.Record, n)
	for i := range n {
		r, err := a.DecodeJSON([]byte(fmt.Sprintf(`{"n":%d,"pad":"%s"}`, from+i, strings.Repeat("p", 40))), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = r
	}
	return recs
}

// fastRetry makes retries quick enough for tests.
var fastRetry = RetryConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond}

// start builds an output of type name with settings s (changed by mod),
// starts it, and shuts it down at the end of the test.
func start(t *testing.T, name string, mod func(Settings), env Env) (*buffered, *testsync.Buffer) {
	t.Helper()
	f, _ := Lookup(name)
	s := f.NewSettings()
	mod(s)
	var log testsync.Buffer
	env.Alias = name + ".0"
	env.Logger = slog.New(slog.NewTextHandler(&log, nil))
	if env.DataDir == "" {
		env.DataDir = t.TempDir()
	}
	o, err := f.New(s, env)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		o.Shutdown(ctx)
	})
	return o.(*buffered), &log
}

func otlpTo(url string, mod func(*OTLPConfig)) func(Settings) {
	return func(s Settings) {
		c := s.(*OTLPConfig)
		c.URL = url + OTLPPath
		c.Retry = fastRetry
		c.Timeout = 2 * time.Second
		if mod != nil {
			mod(c)
		}
	}
}

func write(t *testing.T, o Output, recs []*record.Record) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := o.Write(ctx, recs, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOTLPDelivers sends through each encoding and compression, and checks
// that a memory buffer's Write returns only once the receiver has the
// records, and the headers.
func TestOTLPDelivers(t *testing.T) {
	for _, enc := range []string{"protobuf", "json"} {
		for _, comp := range []string{"gzip", "zstd", "none"} {
			t.Run(enc+"/"+comp, func(t *testing.T) {
				rc := otlptest.New(t)
				srv := httptest.NewServer(rc)
				defer srv.Close()
				o, _ := start(t, "otlp", otlpTo(srv.URL, func(c *OTLPConfig) {
					c.Encoding, c.Compression = enc, comp
					c.Headers = map[string]string{"Authorization": "Bearer s3cret"}
				}), Env{})
				for i := range 5 {
					write(t, o, numbered(t, i*10, 10))
					if got := rc.Count(); got != (i+1)*10 {
						t.Fatalf("after Write %d the receiver has %d records", i, got)
					}
				}
				rc.Each(t, 50)
				if got := rc.Header("Authorization"); got != "Bearer s3cret" {
					t.Errorf("Authorization = %q", got)
				}
				if got := rc.Header("Content-Encoding"); got != strings.TrimSuffix(comp, "none") {
					t.Errorf("Content-Encoding = %q with compression %s", got, comp)
				}
				if s := o.Stats(); s.Records != 50 || s.Retries != 0 || s.Bytes == 0 || s.BufferChunks != 0 {
					t.Errorf("stats = %+v", s)
				}
			})
		}
	}
}

// TestRetries runs a receiver that misbehaves for a while in each way
// (503, 429 with Retry-After, stalls past the timeout, resets the
// connection) and checks that every record arrives and the retries are
// counted.
func TestRetries(t *testing.T) {
	tests := []struct {
		name   string
		refuse func(w http.ResponseWriter, r *http.Request, n int64) bool
		mod    func(*OTLPConfig)
	}{
		{"503", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n <= 3 {
				http.Error(w, "overloaded", 503)
				return true
			}
			return false
		}, nil},
		{"502 and 504", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n <= 2 {
				http.Error(w, "bad gateway", 502+2*int(n-1))
				return true
			}
			return false
		}, nil},
		{"stall", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n <= 2 {
				io.Copy(io.Discard, r.Body) // so that the server notices the client leave
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return true
			}
			return false
		}, func(c *OTLPConfig) { c.Timeout = 100 * time.Millisecond }},
		{"reset", func(w http.ResponseWriter, r *http.Request, n int64) bool {
			if n <= 3 {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.(*net.TCPConn).SetLinger(0) // RST
					conn.Close()
				}
				return true
			}
			return false
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := otlptest.New(t)
			rc.Refuse = tt.refuse
			srv := httptest.NewServer(rc)
			defer srv.Close()
			o, _ := start(t, "otlp", otlpTo(srv.URL, tt.mod), Env{})
			write(t, o, numbered(t, 0, 20))
			rc.Each(t, 20)
			// One write of 20 records is one request: each retry is of
			// all 20.
			if s := o.Stats(); s.Retries == 0 || s.RetriedRecords != 20*s.Retries || s.Records != 20 || s.Rejected != 0 {
				t.Errorf("stats = %+v", s)
			}
		})
	}
}

// TestRetryAfter checks that a 429's Retry-After is honoured, as seconds,
// rather than the backoff (here an hour).
func TestRetryAfter(t *testing.T) {
	rc := otlptest.New(t)
	var first time.Time
	var second atomic.Int64
	rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		switch n {
		case 1:
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", 429)
			return true
		case 2:
			second.Store(int64(time.Since(first)))
		}
		return false
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	o, _ := start(t, "otlp", otlpTo(srv.URL, func(c *OTLPConfig) {
		c.Retry = RetryConfig{InitialInterval: time.Hour, MaxInterval: time.Hour}
	}), Env{})
	write(t, o, numbered(t, 0, 3))
	rc.Each(t, 3)
	if d := time.Duration(second.Load()); d < 900*time.Millisecond || d > 5*time.Second {
		t.Errorf("retried after %v, want about the 1 s of Retry-After", d)
	}
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"3": 3 * time.Second, "Tue, 01 Dec 2026 10:00:07 GMT": 7 * time.Second,
		"": 0, "soon": 0, "-1": 0, "Tue, 01 Dec 2026 09:00:00 GMT": 0, "99999": time.Hour,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", h, got, want)
		}
	}
}

// TestRefusals checks that a 400 is not retried, is counted as rejected
// (the Write says so) and its message logged; and that a partial success
// counts its rejected records.
func TestRefusals(t *testing.T) {
	rc := otlptest.New(t)
	rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"code":3,"message":"field attributes: too many"}`)
			return true
		}
		return false
	}
	rc.Answer = func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"partialSuccess":{"rejectedLogRecords":"2","errorMessage":"2 records too old"}}`)
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	o, log := start(t, "otlp", otlpTo(srv.URL, nil), Env{})
	if res := write(t, o, numbered(t, 0, 5)); res.Rejected != 5 {
		t.Errorf("refused Write: %+v, want 5 rejected", res)
	}
	if res := write(t, o, numbered(t, 5, 5)); res.Rejected != 2 {
		t.Errorf("partial success: %+v, want 2 rejected", res)
	}
	if s := o.Stats(); s.Rejected != 7 || s.Retries != 0 || s.Records != 3 {
		t.Errorf("stats = %+v", s)
	}
	if rc.Requests.Load() != 2 {
		t.Errorf("%d requests: a 400 was retried", rc.Requests.Load())
	}
	for _, want := range []string{"field attributes: too many", "400 Bad Request"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, log)
		}
	}
	// A protobuf partial success and Status.
	ps := []byte{0x0a, 0x07, 0x08, 0x03, 0x12, 0x03, 'o', 'l', 'd'}
	if n, msg := OTLPResponse(200, "application/x-protobuf", ps); n != 3 || msg != "old" {
		t.Errorf("protobuf partial success = %d, %q", n, msg)
	}
	if _, msg := OTLPResponse(400, "application/x-protobuf", []byte{0x08, 0x03, 0x12, 0x02, 'n', 'o'}); msg != "no" {
		t.Errorf("protobuf status message = %q", msg)
	}
}

// TestDownThenUp sends to a port where nothing listens, then starts the
// receiver there: everything arrives.
func TestDownThenUp(t *testing.T) {
	addr := testnet.FreeAddr(t)
	o, _ := start(t, "otlp", otlpTo("http://"+addr, nil), Env{})
	rc := otlptest.New(t)
	go func() {
		time.Sleep(300 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		srv := &http.Server{Handler: rc}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}()
	write(t, o, numbered(t, 0, 10))
	rc.Each(t, 10)
	if s := o.Stats(); s.Retries == 0 {
		t.Errorf("stats = %+v: no retries", s)
	}
}

// TestMaxElapsed checks that retries run out after retry.max_elapsed: the
// records are counted as failed and, from a memory buffer, reported as not
// delivered; a filesystem buffer keeps the chunk.
func TestMaxElapsed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", 503)
	}))
	defer srv.Close()
	limit := func(c *OTLPConfig) { c.Retry.MaxElapsed = 200 * time.Millisecond }
	o, log := start(t, "otlp", otlpTo(srv.URL, limit), Env{})
	if res := write(t, o, numbered(t, 0, 4)); res.Rejected != 4 {
		t.Errorf("Write = %+v, want 4 not delivered", res)
	}
	if s := o.Stats(); s.Failed != 4 || s.Retries == 0 {
		t.Errorf("stats = %+v", s)
	}
	if !strings.Contains(log.String(), "retries ran out") {
		t.Errorf("log:\n%s", log)
	}
	fs, _ := start(t, "otlp", otlpTo(srv.URL, func(c *OTLPConfig) {
		limit(c)
		c.Buffer.Type = buffer.Filesystem
	}), Env{})
	write(t, fs, numbered(t, 0, 4))
	if !testsync.Eventually(wait, func() bool { return fs.Stats().Failed == 4 }) {
		t.Fatalf("stats = %+v", fs.Stats())
	}
	if s := fs.Stats(); s.BufferChunks != 1 {
		t.Errorf("the chunk was not kept: %+v", s)
	}
}

// TestFilesystemJoins checks that payloads gathered in one chunk while the
// receiver was down go as one valid request, in both encodings.
func TestFilesystemJoins(t *testing.T) {
	for _, enc := range []string{"protobuf", "json"} {
		t.Run(enc, func(t *testing.T) {
			rc, url, down := refusingReceiver(t, 503)
			o, _ := start(t, "otlp", otlpTo(url, func(c *OTLPConfig) {
				c.Encoding, c.Workers = enc, 1
				c.Buffer.Type = buffer.Filesystem
			}), Env{})
			for i := range 20 {
				write(t, o, numbered(t, i*5, 5)) // returns once on disk
			}
			down.Store(false)
			if !testsync.Eventually(wait, func() bool { return rc.Count() == 100 }) {
				t.Fatalf("%d of 100 records arrived", rc.Count())
			}
			rc.Each(t, 100)
			// One chunk in flight, the other 19 writes in one more.
			if n := rc.Requests.Load(); n > 25 {
				t.Errorf("%d requests for 20 writes to a down receiver: chunks were not gathered", n)
			}
		})
	}
}

// TestHTTPOutput sends NDJSON.
func TestHTTPOutput(t *testing.T) {
	rc := otlptest.New(t)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	o, _ := start(t, "http", func(s Settings) {
		c := s.(*HTTPOutputConfig)
		c.URL, c.Retry, c.Compression = srv.URL+"/ingest", fastRetry, "gzip"
	}, Env{})
	write(t, o, numbered(t, 0, 7))
	rc.Each(t, 7)
}

// TestTLS sends over TLS with the receiver's CA, then with mutual TLS.
func TestTLS(t *testing.T) {
	certs := testcert.New(t, t.TempDir())
	for _, mutual := range []bool{false, true} {
		t.Run(fmt.Sprint("mutual=", mutual), func(t *testing.T) {
			rc := otlptest.New(t)
			srv := httptest.NewUnstartedServer(rc)
			srv.Config.ErrorLog = quietLog
			srv.TLS = &tls.Config{Certificates: []tls.Certificate{certs.Server(t)}}
			if mutual {
				srv.TLS.ClientAuth, srv.TLS.ClientCAs = tls.RequireAndVerifyClientCert, certs.Pool
			}
			srv.StartTLS()
			defer srv.Close()
			o, _ := start(t, "otlp", otlpTo(srv.URL, func(c *OTLPConfig) {
				c.TLS.CAFile = certs.CA
				if mutual {
					c.TLS.CertFile, c.TLS.KeyFile = certs.ClientCert, certs.ClientKey
				}
			}), Env{})
			write(t, o, numbered(t, 0, 3))
			rc.Each(t, 3)
		})
	}
	// Without the CA the server is not trusted: retried, never delivered.
	rc := otlptest.New(t)
	srv := httptest.NewUnstartedServer(rc)
	srv.Config.ErrorLog = quietLog
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{certs.Server(t)}}
	srv.StartTLS()
	defer srv.Close()
	o, log := start(t, "otlp", otlpTo(srv.URL, nil), Env{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := o.Write(ctx, numbered(t, 0, 1), WriteOptions{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Write to an untrusted server: %v", err)
	}
	if !testsync.Eventually(wait, func() bool { return strings.Contains(log.String(), "certificate") }) {
		t.Errorf("log does not mention the certificate:\n%s", log)
	}
}

// TestWhenFullNoWait checks the Write side of a full buffer: ErrFull with
// NoWait under block, and dropped records under drop_newest.
func TestWhenFullNoWait(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	size := int64(len((&otlpCodec{}).encode(nil, numbered(t, 0, 10))))
	max := 4*size + size/2 // four payloads of 10 records fit, not five
	for _, mode := range []string{buffer.Block, buffer.DropNewest} {
		o, _ := start(t, "otlp", otlpTo(srv.URL, func(c *OTLPConfig) {
			c.Compression, c.Workers, c.Timeout = "none", 1, time.Minute
			c.Buffer.MaxSize, c.Buffer.WhenFull = max, mode
		}), Env{})
		for range 4 {
			go o.Write(context.Background(), numbered(t, 0, 10), WriteOptions{})
		}
		if !testsync.Eventually(wait, func() bool { return o.Stats().BufferChunks == 4 }) {
			t.Fatalf("%s: stats = %+v", mode, o.Stats())
		}
		res, err := o.Write(context.Background(), numbered(t, 0, 10), WriteOptions{NoWait: true})
		switch mode {
		case buffer.Block:
			if !errors.Is(err, ErrFull) {
				t.Errorf("block: Write into a full buffer = %+v, %v; want ErrFull", res, err)
			}
		case buffer.DropNewest:
			if err != nil || res.Dropped != 10 || o.Stats().Dropped != 10 {
				t.Errorf("drop_newest: Write into a full buffer = %+v, %v; stats %+v", res, err, o.Stats())
			}
		}
		if s := o.Stats(); s.BufferBytes > max {
			t.Errorf("%s: %d bytes held, max_size %d", mode, s.BufferBytes, max)
		}
	}
}

// quietLog keeps a test server's expected handshake errors off the output.
var quietLog = stdlog.New(io.Discard, "", 0)

// wait is how long a test waits for the workers of an output: long, for
// a loaded machine, since a condition that holds ends the wait at once.
const wait = 10 * time.Second

// TestNullOutputs: encode: false counts records only; a null output with a
// buffer puts OTLP payloads in it and delivers them by counting.
func TestNullOutputs(t *testing.T) {
	f, _ := Lookup("null")
	s := f.NewSettings().(*NullConfig)
	s.Encode = false
	o, err := f.New(s, Env{})
	if err != nil {
		t.Fatal(err)
	}
	write(t, o, numbered(t, 0, 3))
	if st := o.Stats(); st.Records != 3 || st.Bytes != 0 {
		t.Errorf("encode: false: %+v", st)
	}
	b, _ := start(t, "null", func(s Settings) {
		c := s.(*NullConfig)
		c.Buffered, c.Buffer.Type = true, buffer.Filesystem
	}, Env{})
	write(t, b, numbered(t, 0, 5))
	// The records and the bytes of a delivery are counted one after the
	// other: wait for both.
	if !testsync.Eventually(wait, func() bool { st := b.Stats(); return st.Records == 5 && st.Bytes > 0 }) {
		t.Errorf("buffered null: %+v", b.Stats())
	}
}

// TestPlainMapping: Fluent Bit's logs_*_key options make a LogRecord of a
// plain record's keys; without them its map is the body.
func TestPlainMapping(t *testing.T) {
	const trace, span = "0123456789abcdef0123456789abcdef", "0123456789abcdef"
	line := `{"log":"disk full","level":"WARN","sev":13,"trace":"` + trace + `","span":"` + span + `","host":"n1"}`
	m := &PlainMapping{BodyKey: "log", BodyKeyAttributes: true, SeverityTextKey: "level", SeverityNumberKey: "sev",
		TraceIDKey: "trace", SpanIDKey: "span"}
	for _, c := range []*otlpCodec{{mapping: m}, {mapping: m, json: true}} {
		a := record.NewArena()
		r, err := a.DecodeJSON([]byte(line), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		r.SetTime(1_700_000_000_000_000_000)
		req := c.encode(nil, []*record.Record{r})
		b := record.NewArena()
		decode := b.DecodeOTLP
		if c.json {
			decode = b.DecodeOTLPJSON
		}
		recs, err := decode(req, record.Owned, nil)
		if err != nil || len(recs) != 1 {
			t.Fatalf("json=%v: %v, %d records", c.json, err, len(recs))
		}
		if got := string(recs[0].AppendJSON(nil)); !strings.Contains(got, `"body":"disk full","attributes":{"host":"n1"},"severity_text":"WARN","severity_number":13`) ||
			!strings.Contains(got, `"trace_id":"`+trace+`","span_id":"`+span+`"`) || !strings.Contains(got, `"time":"2023-11-14T22:13:20Z"`) {
			t.Errorf("json=%v: %s", c.json, got)
		}
	}
	// A record without the body key: its map is the body.
	a := record.NewArena()
	r, _ := a.DecodeJSON([]byte(`{"msg":"x"}`), record.Owned)
	req := (&otlpCodec{mapping: m}).encode(nil, []*record.Record{r})
	recs, _ := record.NewArena().DecodeOTLP(req, record.Owned, nil)
	if got := string(recs[0].AppendJSON(nil)); !strings.Contains(got, `"body":{"msg":"x"}`) {
		t.Errorf("without the body key: %s", got)
	}
}

// TestPlainMappingBadID: an id that is not hex of its length is left out.
func TestPlainMappingBadID(t *testing.T) {
	a := record.NewArena()
	r, _ := a.DecodeJSON([]byte(`{"log":"x","trace":"not hex"}`), record.Owned)
	req := (&otlpCodec{mapping: &PlainMapping{BodyKey: "log", TraceIDKey: "trace"}}).encode(nil, []*record.Record{r})
	recs, err := record.NewArena().DecodeOTLP(req, record.Owned, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(recs[0].AppendJSON(nil)); !strings.Contains(got, `"trace_id":""`) {
		t.Errorf("%s", got)
	}
}

// TestBrokenAnswer: a 2xx answer whose body breaks off partway is not a
// delivery (it may have held a partial success): the request is sent
// again. Its records were counted as delivered.
func TestBrokenAnswer(t *testing.T) {
	rc := otlptest.New(t)
	var broke atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broke.CompareAndSwap(false, true) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Length", "100")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			io.WriteString(w, `{"partialSuc`)
			w.(http.Flusher).Flush()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rc.ServeHTTP(w, r)
	}))
	defer srv.Close()
	o, _ := start(t, "otlp", otlpTo(srv.URL, nil), Env{})
	write(t, o, numbered(t, 0, 5))
	rc.Each(t, 5)
	if s := o.Stats(); s.Retries != 1 || s.Records != 5 {
		t.Errorf("stats = %+v, want one retry and 5 delivered", s)
	}
}
