package output

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/internal/contentenc"
)

// HTTPConfig is what the otlp and http outputs share of an HTTP client.
type HTTPConfig struct {
	URL         string            // endpoint (otlp) or uri (http)
	Headers     map[string]string // sent with every request (authorization goes here)
	Compression string            // a contentenc name (gzip, zstd) or none
	TLS         ClientTLS
	urlLine     int
}

// ClientTLS is tls.* of an output.
type ClientTLS struct {
	CAFile, CertFile, KeyFile string
	InsecureSkipVerify        bool
}

func (c *HTTPConfig) keys(keys map[string]func(*yaml.Node), v Values, urlKey string) {
	keys[urlKey] = func(n *yaml.Node) { c.URL, c.urlLine = v.Str(n), n.Line }
	keys["headers"] = func(n *yaml.Node) { c.Headers = v.StrMap(n) }
	keys["compression"] = func(n *yaml.Node) {
		c.Compression = v.OneOf(n, "compression", append(contentenc.Names(), "none")...)
	}
	nested(keys, v, "tls", map[string]func(*yaml.Node){
		"ca_file":              func(n *yaml.Node) { c.TLS.CAFile = v.Str(n) },
		"cert_file":            func(n *yaml.Node) { c.TLS.CertFile = v.Str(n) },
		"key_file":             func(n *yaml.Node) { c.TLS.KeyFile = v.Str(n) },
		"insecure_skip_verify": func(n *yaml.Node) { c.TLS.InsecureSkipVerify = v.Bool(n) },
	})
}

// check reports a missing or bad URL; defaultPath is put in an empty path.
func (c *HTTPConfig) check(v Values, line int, what, urlKey, defaultPath string) {
	if c.URL == "" {
		v.Errorf(line, "output %s needs %s: the URL to send to (http://host:port/path)", what, urlKey)
		return
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		v.Errorf(c.urlLine, "%s %q: expected a URL such as http://collector:4318%s", urlKey, c.URL, defaultPath)
		return
	}
	if u.Path == "" && defaultPath != "" {
		u.Path = defaultPath
		c.URL = u.String()
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		v.Errorf(line, "tls.cert_file and tls.key_file go together (a client certificate and its key)")
	}
}

// httpSender posts bodies to one URL.
type httpSender struct {
	url         string
	contentType string
	headers     http.Header
	host        string               // a Host header, which Go sends from req.Host
	enc         *contentenc.Encoding // nil: none
	timeout     time.Duration
	client      *http.Client
	// message reads what a response says: the records it rejected (an
	// OTLP partial success) and its message.
	message func(status int, contentType string, body []byte) (rejected int64, msg string)
}

func newHTTPSender(c *HTTPConfig, env Env, contentType string, timeout time.Duration, workers int) (*httpSender, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// One connection a worker, kept: without MaxConnsPerHost a request
	// that finds none idle opens another while one is about to be freed.
	tr.MaxIdleConnsPerHost = workers
	tr.MaxIdleConns = workers
	tr.MaxConnsPerHost = workers
	tlsCfg, err := c.TLS.config(env.Dir)
	if err != nil {
		return nil, err
	}
	if tlsCfg != nil {
		tr.TLSClientConfig = tlsCfg
	}
	s := &httpSender{url: c.URL, contentType: contentType, headers: http.Header{}, timeout: timeout,
		client: &http.Client{Transport: tr, CheckRedirect: keepMethod}}
	s.enc, _ = contentenc.Lookup(c.Compression)
	for k, v := range c.Headers {
		if strings.EqualFold(k, "host") {
			s.host = v
			continue
		}
		s.headers.Set(k, v)
	}
	if s.headers.Get("User-Agent") == "" {
		s.headers.Set("User-Agent", "policyrun")
	}
	return s, nil
}

// ReadCertPool reads the PEM certificates of file, resolved against dir,
// into a pool; key names the setting in the errors (tls.ca_file).
func ReadCertPool(dir, file, key string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(Resolve(dir, file))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s %s: no PEM certificate in it", key, file)
	}
	return pool, nil
}

func (t *ClientTLS) config(dir string) (*tls.Config, error) {
	if *t == (ClientTLS{}) {
		return nil, nil
	}
	cfg := &tls.Config{InsecureSkipVerify: t.InsecureSkipVerify, MinVersion: tls.VersionTLS12}
	if t.CAFile != "" {
		pool, err := ReadCertPool(dir, t.CAFile, "tls.ca_file")
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if t.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(Resolve(dir, t.CertFile), Resolve(dir, t.KeyFile))
		if err != nil {
			return nil, fmt.Errorf("tls.cert_file, tls.key_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// keepMethod follows only the redirects that send the POST again (307,
// 308): after a 301, 302 or 303 Go would send a GET without the body, and
// its 200 would count records as delivered that never were. Those
// answers are taken as they are: refusals, counted as rejected.
func keepMethod(req *http.Request, via []*http.Request) error {
	if req.Method != http.MethodPost {
		return http.ErrUseLastResponse
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// maxResponse is how much of a response body is read for its message.
const maxResponse = 64 << 10

func (s *httpSender) send(ctx context.Context, body []byte) sendResult {
	if s.enc != nil {
		body = s.enc.Append(nil, body)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	// Nothing reads the body once send returns (httpbody.go).
	bodies := &sentBodies{body: body}
	defer func() {
		cancel()
		bodies.revoke()
	}()
	var first io.ReadCloser // none for an empty body: sent with Content-Length: 0, not chunked
	if len(body) > 0 {
		first = bodies.reader()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, first)
	if err != nil {
		if first != nil {
			first.Close()
		}
		return sendResult{kind: permanent, msg: err.Error()}
	}
	if first != nil {
		// NewRequest knows the length of its own readers only; GetBody
		// lets the transport send it again (a dead idle connection, an
		// HTTP/2 stream refused) and a 307 or 308 follow it.
		req.ContentLength, req.GetBody = int64(len(body)), bodies.getBody
	}
	for k, v := range s.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", s.contentType)
	if s.enc != nil {
		req.Header.Set("Content-Encoding", s.enc.Name)
	}
	if s.host != "" {
		req.Host = s.host
	}
	resp, err := s.client.Do(req)
	if err != nil {
		// Connection refused or reset, a timeout, a TLS failure: all are
		// retried (a bad certificate too: it may be replaced).
		msg := err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			msg = fmt.Sprintf("no answer within the timeout (%v)", s.timeout)
		}
		return sendResult{kind: retryable, msg: msg}
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // so that the connection is reused
	resp.Body.Close()
	if rerr != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// An answer that broke off may have held a partial success: the
		// records are not known to be taken, and are sent again (the
		// receiver may have them: at-least-once).
		return sendResult{kind: retryable, msg: fmt.Sprintf("%s, but its answer broke off: %v", resp.Status, rerr)}
	}
	r := sendResult{sent: len(body)}
	var rejected int64
	var msg string
	if s.message != nil {
		rejected, msg = s.message(resp.StatusCode, resp.Header.Get("Content-Type"), data)
	} else {
		msg = textMessage(data)
	}
	r.msg = fmt.Sprintf("%s: %s", resp.Status, msg)
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		r.kind, r.rejected = delivered, rejected
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		r.kind = retryable
		r.retryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	default:
		r.kind = permanent
	}
	return r
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(min(secs, int64(time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), time.Hour)
	}
	return 0
}

// textMessage is a response body as a short message.
func textMessage(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
