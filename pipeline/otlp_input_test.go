package pipeline

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/policyrun/policyrun/internal/testkit/otlptest"
	"github.com/policyrun/policyrun/internal/testkit/testcert"
	"github.com/policyrun/policyrun/record"
)

// otlpRequest encodes records {"n": from} … {"n": from+n-1} as one OTLP
// request (their maps become the LogRecords' bodies).
func otlpRequest(t testing.TB, from, n int, json bool) []byte {
	t.Helper()
	a := record.NewArena()
	recs := make([]*record.Record, n)
	for i := range n {
		r, err := a.DecodeJSON(fmt.Appendf(nil, `{"n":%d,"msg":"hello %d"}`, from+i, from+i), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		recs[i] = r
	}
	var enc record.OTLPEncoder
	if json {
		return enc.AppendJSON(nil, recs)
	}
	return enc.AppendProto(nil, recs)
}

func zstded(t testing.TB, b []byte) []byte {
	t.Helper()
	w, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	return w.EncodeAll(b, nil)
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(b)
	w.Close()
	return z.Bytes()
}

// otlpServer runs a pipeline of one otlp input (listen on a free port,
// with more keys) and the outputs of rest until the test ends, and
// returns the URL to post to and the pipeline.
func otlpServer(t *testing.T, rest string, more ...string) (string, *Pipeline, func()) {
	t.Helper()
	dir := t.TempDir()
	cfg := writeConfig(t, dir, otlpYAML(rest, more...))
	var log bytes.Buffer
	p, err := New(cfg, Options{Logger: testLogger(&log)})
	if err != nil {
		t.Fatal(err)
	}
	stopRun := background(t, p)
	stop := func() {
		if err := stopRun(); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(stop)
	scheme := "http"
	for _, m := range more {
		if strings.HasPrefix(m, "tls") {
			scheme = "https"
		}
	}
	return scheme + "://" + p.OTLPAddrs()[0].String() + OTLPPath, p, stop
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func post(t testing.TB, c *http.Client, url, contentType, encoding string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, b}
}

// TestOTLPInputRoundTrip posts requests in protobuf and JSON, plain and
// gzipped, through an otlp input and an otlp output: every record arrives
// and every request is answered 200 with an empty response in its own
// encoding.
func TestOTLPInputRoundTrip(t *testing.T) {
	rc := otlptest.New(t)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	url, p, stop := otlpServer(t, otlpOutput(srv.URL))
	c := &http.Client{}
	n := 0
	for i, tt := range []struct {
		ct   string
		json bool
		enc  string
	}{{ctProtobuf, false, ""}, {ctJSON, true, ""}, {ctProtobuf, false, "gzip"}, {ctJSON + "; charset=utf-8", true, "gzip"},
		{ctProtobuf, false, "zstd"}, {ctJSON, true, "ZSTD"}} {
		body := otlpRequest(t, n, 10, tt.json)
		enc := tt.enc
		switch enc {
		case "gzip":
			body = gzipped(t, body)
		case "zstd", "ZSTD":
			body = zstded(t, body)
		}
		a := post(t, c, url, tt.ct, enc, body)
		if a.status != 200 {
			t.Fatalf("request %d: %d %s", i, a.status, a.body)
		}
		want := ""
		if tt.json {
			want = "{}"
		}
		if string(a.body) != want || !strings.HasPrefix(tt.ct, a.header.Get("Content-Type")) {
			t.Errorf("request %d: answered %q as %s", i, a.body, a.header.Get("Content-Type"))
		}
		n += 10
	}
	// A memory buffer: the 200 came after the receiver had the records.
	rc.Each(t, n)
	stop()
	s := p.Summary()
	if in := s.Inputs[0]; in.Alias != "otlp.0" || in.In != int64(n) || in.Requests[200] != 6 {
		t.Errorf("input summary %+v", in)
	}
	if text := summaryText(s); !strings.Contains(text, "input otlp.0: in 60, bytes ") || !strings.Contains(text, "requests 200: 6") {
		t.Errorf("summary:\n%s", text)
	}
	checkMetrics(t, p, `policyrun_input_requests_total{name="otlp.0",code="200"} 6`)
}

// TestOTLPInputBadRequests sends what a receiver must refuse, each with its
// status and a message in the request's encoding, then a good request:
// the server is unharmed.
func TestOTLPInputBadRequests(t *testing.T) {
	url, p, _ := otlpServer(t, toNull, "max_request_size: 64k")
	good := otlpRequest(t, 0, 10, false)
	bomb := gzipped(t, make([]byte, 10<<20)) // 10 MiB of zeros in about 10 KiB
	zbomb := zstded(t, make([]byte, 10<<20))
	if len(bomb) > 64<<10 || len(zbomb) > 64<<10 {
		t.Fatalf("the bombs are %d and %d bytes", len(bomb), len(zbomb))
	}
	c := &http.Client{}
	tests := []struct {
		name, ct, enc string
		body          []byte
		status        int
		msg           string
	}{
		{"garbage", ctProtobuf, "", []byte("\xff\xff\xff\xff garbage"), 400, "does not decode"},
		{"truncated protobuf", ctProtobuf, "", good[:len(good)/2], 400, "does not decode"},
		{"bad JSON", ctJSON, "", []byte(`{"resourceLogs":[{`), 400, "does not decode"},
		{"JSON of the wrong shape", ctJSON, "", []byte(`{"resourceLogs":{"a":1}}`), 400, "does not decode"},
		{"wrong content type", "text/plain", "", good, 415, "Content-Type"},
		{"no content type", "", "", good, 415, "Content-Type"},
		{"unknown encoding", ctProtobuf, "br", good, 415, "Content-Encoding"},
		{"not gzip", ctProtobuf, "gzip", good, 400, "not gzip"},
		{"oversized", ctProtobuf, "", make([]byte, 65<<10), 413, "max_request_size"},
		{"gzip bomb", ctProtobuf, "gzip", bomb, 413, "decompressed"},
		{"not zstd", ctProtobuf, "zstd", good, 400, "not zstd"},
		{"zstd cut short", ctProtobuf, "zstd", zstded(t, good)[:20], 400, "not zstd"},
		{"zstd bomb", ctProtobuf, "zstd", zbomb, 413, "decompressed"},
	}
	for _, tt := range tests {
		a := post(t, c, url, tt.ct, tt.enc, tt.body)
		if a.status != tt.status || !strings.Contains(string(a.body), tt.msg) {
			t.Errorf("%s: %d %q, want %d with %q", tt.name, a.status, a.body, tt.status, tt.msg)
		}
		if tt.ct == ctJSON {
			var st struct {
				Code    int
				Message string
			}
			if err := json.Unmarshal(a.body, &st); err != nil || st.Code != 3 {
				t.Errorf("%s: the answer is not a JSON Status: %q", tt.name, a.body)
			}
		}
	}
	// Oversized without a length: read up to the limit, then refused.
	req, _ := http.NewRequest(http.MethodPost, url, io.MultiReader(bytes.NewReader(make([]byte, 70<<10))))
	req.Header.Set("Content-Type", ctProtobuf)
	req.ContentLength = -1
	if resp, err := c.Do(req); err != nil || resp.StatusCode != 413 {
		t.Errorf("chunked oversized request: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if resp, err := c.Get(url); err != nil || resp.StatusCode != 405 {
		t.Errorf("GET: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if a := post(t, c, strings.TrimSuffix(url, OTLPPath)+"/v1/traces", ctProtobuf, "", good); a.status != 404 {
		t.Errorf("another path: %d", a.status)
	}
	if a := post(t, c, url, ctProtobuf, "", good); a.status != 200 {
		t.Errorf("a good request after the bad ones: %d %s", a.status, a.body)
	}
	if got := p.Summary().Inputs[0]; got.In != 10 || got.Requests[400] != 7 || got.Requests[413] != 4 || got.Requests[415] != 3 {
		t.Errorf("input summary %+v", got)
	}
}

// stalling is a receiver that holds every request until released.
func stalling(t *testing.T) (*otlptest.Receiver, *httptest.Server, func()) {
	rc := otlptest.New(t)
	release := make(chan struct{})
	var once sync.Once
	rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		<-release
		return false
	}
	srv := httptest.NewServer(rc)
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(func() { free(); srv.Close() })
	return rc, srv, free
}

// TestOTLPInputFullBuffer fills a memory buffer whose receiver stalls:
// under block the next request is answered 503 with Retry-After, under
// drop_newest 200 with a partial success counting its records.
func TestOTLPInputFullBuffer(t *testing.T) {
	size := len(otlpRequest(t, 0, 10, false)) // the output's payload for 10 records, near enough
	for _, mode := range []string{"block", "drop_newest"} {
		t.Run(mode, func(t *testing.T) {
			rc, srv, release := stalling(t)
			url, p, _ := otlpServer(t, otlpOutput(srv.URL, "compression: none", "workers: 1",
				fmt.Sprintf("buffer: {max_size: %d, when_full: %s}", 5*size, mode)))
			c := &http.Client{}
			var wg sync.WaitGroup
			var ok atomic.Int64
			for i := range 4 { // they wait for delivery, holding the buffer
				wg.Add(1)
				go func() {
					defer wg.Done()
					if a := post(t, c, url, ctProtobuf, "", otlpRequest(t, i*10, 10, false)); a.status == 200 && len(a.body) == 0 {
						ok.Add(1)
					}
				}()
			}
			if !eventually(5*time.Second, func() bool { return p.Summary().Outputs[0].BufferChunks == 4 }) {
				t.Fatalf("output %+v", p.Summary().Outputs[0])
			}
			for _, json := range []bool{false, true} {
				ct := ctProtobuf
				if json {
					ct = ctJSON
				}
				a := post(t, c, url, ct, "", otlpRequest(t, 100, 10, json))
				switch mode {
				case "block":
					if a.status != 503 || a.header.Get("Retry-After") == "" {
						t.Errorf("%s into a full buffer: %d %q, Retry-After %q", ct, a.status, a.body, a.header.Get("Retry-After"))
					}
				case "drop_newest":
					var n int64
					var msg string
					if json {
						var r struct {
							PartialSuccess struct {
								RejectedLogRecords string
								ErrorMessage       string
							}
						}
						if err := jsonUnmarshal(a.body, &r); err != nil {
							t.Fatal(err)
						}
						fmt.Sscan(r.PartialSuccess.RejectedLogRecords, &n)
						msg = r.PartialSuccess.ErrorMessage
					} else {
						n, msg = partialSuccess(a.body)
					}
					if a.status != 200 || n != 10 || !strings.Contains(msg, "dropped") {
						t.Errorf("%s into a full buffer: %d, rejected %d (%q)", ct, a.status, n, msg)
					}
				}
			}
			release()
			wg.Wait()
			if ok.Load() != 4 {
				t.Errorf("%d of the 4 waiting requests were answered 200", ok.Load())
			}
			rc.Each(t, 40)
			if o := p.Summary().Outputs[0]; mode == "drop_newest" && o.Dropped != 20 {
				t.Errorf("output %+v, want 20 dropped", o)
			}
		})
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// partialSuccess reads an ExportLogsServiceResponse in protobuf.
func partialSuccess(b []byte) (int64, string) {
	// 0x0a len { 0x08 varint 0x12 len msg }
	if len(b) < 2 || b[0] != 0x0a {
		return 0, ""
	}
	ps := b[2:]
	if len(ps) < 2 || ps[0] != 0x08 {
		return 0, ""
	}
	var n int64
	i, shift := 1, 0
	for ; i < len(ps); i++ {
		n |= int64(ps[i]&0x7f) << shift
		shift += 7
		if ps[i]&0x80 == 0 {
			i++
			break
		}
	}
	if i+2 > len(ps) || ps[i] != 0x12 {
		return n, ""
	}
	return n, string(ps[i+2:])
}

// TestOTLPInputDownstreamRefusal: records the receiver refuses (400) are
// answered as a partial success.
func TestOTLPInputDownstreamRefusal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "quota exceeded", 400)
	}))
	defer srv.Close()
	url, _, _ := otlpServer(t, otlpOutput(srv.URL))
	a := post(t, &http.Client{}, url, ctProtobuf, "", otlpRequest(t, 0, 7, false))
	if n, msg := partialSuccess(a.body); a.status != 200 || n != 7 || !strings.Contains(msg, "refused") {
		t.Errorf("answer %d: rejected %d, %q", a.status, n, msg)
	}
}

// TestOTLPInputConcurrent sends from 16 clients at once, on persistent
// connections, through a policy (run with -race).
func TestOTLPInputConcurrent(t *testing.T) {
	rc := otlptest.New(t)
	srv := httptest.NewServer(rc)
	defer srv.Close()
	dirPolicy := "  filters:\n    - name: policy\n      file: " + writePolicy(t, "policy \"p\"\n\nset .attributes.seen = true\n") + "\n"
	url, p, stop := otlpServer(t, dirPolicy+otlpOutput(srv.URL))
	const clients, each, per = 16, 10, 20
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				from := (cl*each + i) * per
				json, ct := cl%2 == 1, ctProtobuf
				if json {
					ct = ctJSON
				}
				if a := post(t, c, url, ct, "", otlpRequest(t, from, per, json)); a.status != 200 {
					t.Errorf("client %d request %d: %d %s", cl, i, a.status, a.body)
				}
			}
		}()
	}
	wg.Wait()
	rc.Each(t, clients*each*per)
	stop()
	if s := p.Summary(); s.Filters[0].In != clients*each*per || s.Outputs[0].Out != clients*each*per {
		t.Errorf("summary %+v", s)
	}
}

// TestOTLPInputStopDrains stops the run while requests wait on a slow
// receiver: they are answered 200 once delivered, within the grace, and
// the run ends.
func TestOTLPInputStopDrains(t *testing.T) {
	rc := otlptest.New(t)
	rc.Refuse = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		time.Sleep(300 * time.Millisecond)
		return false
	}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	url, p, stop := otlpServer(t, otlpOutput(srv.URL))
	c := &http.Client{}
	var wg sync.WaitGroup
	statuses := make([]int, 5)
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = post(t, c, url, ctProtobuf, "", otlpRequest(t, i*10, 10, false)).status
		}()
	}
	// Every request in hand (its records counted in), none answered yet
	// (the receiver holds each delivery 300 ms): then the stop.
	if !eventually(5*time.Second, func() bool { return p.Summary().In == 50 }) {
		t.Fatalf("in %d, want 50", p.Summary().In)
	}
	stop()
	wg.Wait()
	for i, s := range statuses {
		if s != 200 {
			t.Errorf("request %d: %d", i, s)
		}
	}
	rc.Each(t, 50)
	if _, err := c.Post(url, ctProtobuf, bytes.NewReader(nil)); err == nil {
		t.Error("the input still accepts requests after the stop")
	}
}

// TestOTLPInputTLS serves over TLS and mutual TLS.
func TestOTLPInputTLS(t *testing.T) {
	dir := t.TempDir()
	certs := testcert.New(t, dir)
	tlsKeys := []string{"tls.cert_file: " + certs.ServerCert, "tls.key_file: " + certs.ServerKey}
	url, _, _ := otlpServer(t, toNull, tlsKeys...)
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool}}}
	if a := post(t, trusting, url, ctProtobuf, "", otlpRequest(t, 0, 1, false)); a.status != 200 {
		t.Errorf("over TLS: %d %s", a.status, a.body)
	}
	url, _, _ = otlpServer(t, toNull, append(tlsKeys, "tls.client_ca_file: "+certs.CA)...)
	if _, err := trusting.Post(url, ctProtobuf, bytes.NewReader(otlpRequest(t, 0, 1, false))); err == nil {
		t.Error("mutual TLS accepted a client without a certificate")
	}
	withCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool,
		Certificates: []tls.Certificate{certs.Client(t)}}}}
	if a := post(t, withCert, url, ctProtobuf, "", otlpRequest(t, 0, 1, false)); a.status != 200 {
		t.Errorf("over mutual TLS: %d %s", a.status, a.body)
	}
}

// writePolicy writes a policy file and returns its path.
func writePolicy(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "p.policy", src)
	return dir + "/p.policy"
}

// TestOTLPInputCloseWithoutRun: a pipeline built and closed without a run
// frees its listen address.
func TestOTLPInputCloseWithoutRun(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		cfg := writeConfig(t, dir, otlpYAML(toNull))
		p, err := New(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		addr := p.OTLPAddrs()[0].String()
		p.Close()
		cfg = writeConfig(t, dir, pipelineYAML(toNull, inputItem("name: otlp", "listen: "+addr)))
		q, err := New(cfg, Options{})
		if err != nil {
			t.Fatalf("the address is still taken after Close: %v", err)
		}
		q.Close()
	}
}
