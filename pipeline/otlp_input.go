package pipeline

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/internal/contentenc"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/record"
)

// The otlp input: an OTLP/HTTP server (POST /v1/logs, protobuf or JSON,
// gzip or zstd). Each request is decoded into an arena of its own, runs through
// the stages, and is written to the outputs; it is answered 200 only once
// every output that takes its records holds them (docs/pipeline.md,
// "Delivery guarantees"). Requests are served concurrently, on persistent
// connections.

// OTLPPath is the one path the input serves.
const OTLPPath = output.OTLPPath

type otlpInput struct {
	p   *Pipeline
	cfg config.Input
	// sock is the listening socket, which a restart by a reload hands
	// over (handoffListener); ln is it as the server takes it (TLS).
	sock   *handoffListener
	ln     net.Listener
	srv    *http.Server
	states sync.Pool // *otlpState
	// decoders are the content encodings' decoders, bound to
	// max_request_size.
	decoders map[string]contentenc.Decoder

	stats *inputStats
	// inflight is how many more bytes of bodies may be held at once
	// (max_inflight_size less what the requests in hand reserved).
	inflight atomic.Int64
	// decoding holds a token for each request being decoded, run and
	// written (decodeSlots).
	decoding chan struct{}
}

// otlpState is one request's room: reused from request to request.
type otlpState struct {
	arena *record.Arena
	recs  []*record.Record
	body  bytes.Buffer
	plain []byte // the body decompressed
	sc    scratch
	tags  *tagCache
	resp  []byte
}

// newOTLPInput builds the otlp input ic of cfg, listening on sock when it
// is not nil (the socket of the input it replaces, on the same address),
// else on a socket of its own.
func (p *Pipeline) newOTLPInput(cfg *config.Config, ic config.Input, sock *net.TCPListener) (*otlpInput, error) {
	in := &otlpInput{p: p, cfg: ic, stats: p.inputCounters(ic.Alias), decoders: map[string]contentenc.Decoder{},
		decoding: make(chan struct{}, decodeSlots())}
	in.inflight.Store(ic.OTLP.MaxInflightSize)
	for _, name := range contentenc.Names() {
		e, _ := contentenc.Lookup(name)
		in.decoders[name] = e.NewDecoder(ic.OTLP.MaxRequestSize)
	}
	tlsCfg, err := serverTLS(cfg.Dir, &ic.OTLP)
	if err != nil {
		return nil, err
	}
	if exposed(ic.OTLP.Listen) && ic.OTLP.ClientCAFile == "" {
		// As the metrics endpoint warns: said at start and by run --check.
		msg := "otlp input listens beyond loopback and authenticates no client (no tls.client_ca_file): anyone who reaches it can send records"
		if tlsCfg == nil {
			msg += ", in plain text (no tls.cert_file)"
		}
		p.log.Warn(msg, "input", ic.Alias, "listen", ic.OTLP.Listen)
	}
	if p.check {
		return in, nil
	}
	if sock == nil {
		ln, err := net.Listen("tcp", ic.OTLP.Listen)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", ic.OTLP.Listen, err)
		}
		sock = ln.(*net.TCPListener)
	}
	in.sock = &handoffListener{TCPListener: sock}
	in.ln = in.sock
	if tlsCfg != nil {
		in.ln = tls.NewListener(in.sock, tlsCfg)
	}
	in.srv = &http.Server{
		Handler:           in,
		ReadHeaderTimeout: min(10*time.Second, ic.OTLP.ReadTimeout),
		// A request's headers and body within read_timeout: a client
		// that stalls is answered 408 (handle) rather than holding its
		// connection and its buffer for ever.
		ReadTimeout: ic.OTLP.ReadTimeout,
		IdleTimeout: 2 * time.Minute,
		// Handshake failures and the like, at info: a port scan must
		// not fill the log.
		ErrorLog: slog.NewLogLogger(p.log.With("input", ic.Alias).Handler(), slog.LevelInfo),
	}
	return in, nil
}

func serverTLS(dir string, o *config.OTLPInput) (*tls.Config, error) {
	if o.CertFile == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(resolve(dir, o.CertFile), resolve(dir, o.KeyFile))
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file, tls.key_file: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if o.ClientCAFile != "" {
		pool, err := output.ReadCertPool(dir, o.ClientCAFile, "tls.client_ca_file")
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// OTLPAddrs returns the addresses the otlp inputs listen on, in config
// order (with listen: 127.0.0.1:0, the port each was given).
func (p *Pipeline) OTLPAddrs() []net.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	var addrs []net.Addr
	for _, ref := range p.order {
		if in := ref.otlp; in != nil && in.ln != nil {
			addrs = append(addrs, in.ln.Addr())
		}
	}
	return addrs
}

// run serves until ctx ends, then stops accepting, lets the requests in
// hand finish (their Writes end with service.grace at the latest) and
// returns.
func (in *otlpInput) run(ctx context.Context) error {
	if err := in.sock.open(); err != nil {
		return fmt.Errorf("input %s: %w", in.cfg.Alias, err)
	}
	done := make(chan error, 1)
	go func() { done <- in.srv.Serve(in.ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("input %s: %w", in.cfg.Alias, err)
	case <-ctx.Done():
	}
	// Shutdown closes the listener and idle connections, and waits for
	// the requests in hand: a Write among them gives up when the grace
	// ends (writeCtx), and is answered 503. A client that is still
	// sending a second after that is cut off.
	sctx, cancel := context.WithTimeout(context.Background(), in.p.cfg.Service.Grace+time.Second)
	defer cancel()
	if in.srv.Shutdown(sctx) != nil {
		in.srv.Close()
	}
	<-done
	return nil
}

// close closes the server and its socket, unless the socket was handed
// over to the input that replaces it.
func (in *otlpInput) close() error {
	if in.srv == nil {
		return nil
	}
	err := in.srv.Close()
	if !in.sock.handedOver.Load() {
		in.ln.Close() // when it never served: Close knows only Serve's listeners
		in.sock.TCPListener.Close()
	}
	return err
}

func (in *otlpInput) count(status int) { in.stats.count(status) }

// Encodings of a request, and of its answer.
const (
	ctProtobuf = "application/x-protobuf"
	ctJSON     = "application/json"
)

func (in *otlpInput) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.URL.Path != OTLPPath {
		in.fail(w, ct, http.StatusNotFound, "no such path: OTLP logs go to "+OTLPPath)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		in.fail(w, ct, http.StatusMethodNotAllowed, "OTLP logs are POSTed")
		return
	}
	if ct != ctProtobuf && ct != ctJSON {
		in.fail(w, ct, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: OTLP/HTTP is %s or %s", r.Header.Get("Content-Type"), ctProtobuf, ctJSON))
		return
	}
	enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding")))
	switch enc {
	case "", "identity":
		enc = ""
	default:
		if in.decoders[enc] == nil {
			in.fail(w, ct, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Encoding %q: %s or none", enc, strings.Join(contentenc.Names(), ", ")))
			return
		}
	}
	max := in.cfg.OTLP.MaxRequestSize
	if r.ContentLength > max {
		in.fail(w, ct, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is %d bytes; max_request_size is %d", r.ContentLength, max))
		return
	}
	// The body's bytes are reserved before it is read: as many as it
	// says it has, or max_request_size when it does not say.
	reserve := max
	if r.ContentLength >= 0 {
		reserve = r.ContentLength
	}
	if !in.take(reserve) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Connection", "close") // its body is not read
		in.fail(w, ct, http.StatusServiceUnavailable, "too many request bodies in flight (max_inflight_size); retry later")
		return
	}
	// The body decompressed and the records it decodes to are reserved
	// too, once their size is known (handle): a compressed body's
	// Content-Length is not what it holds.
	var held int64
	defer func() { in.inflight.Add(reserve + held) }()
	st, _ := in.states.Get().(*otlpState)
	if st == nil {
		st = &otlpState{arena: record.NewArena(), tags: newTagCache(in.cfg.Tag, in.p.gen.Load())}
		st.arena.Limits.MaxRecords = in.cfg.OTLP.MaxRequestRecords
	}
	defer in.release(st)
	status, msg := in.handle(st, r.Body, enc, ct, &held)
	if status != http.StatusOK {
		switch status {
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", "1")
		case http.StatusRequestTimeout:
			w.Header().Set("Connection", "close")
		}
		in.fail(w, ct, status, msg)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	w.Write(st.resp)
	in.count(http.StatusOK)
}

// handle reads, decodes, runs and writes one request; on success st.resp
// is the answer's body.
// enc is the body's content encoding, "" for none.
//
// held is set to the bytes of the decompressed body and of the decoded
// records it reserved of max_inflight_size, which the caller gives back.
func (in *otlpInput) handle(st *otlpState, body io.Reader, enc, ct string, held *int64) (int, string) {
	max := in.cfg.OTLP.MaxRequestSize
	st.body.Reset()
	if n, err := st.body.ReadFrom(io.LimitReader(body, max+1)); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return http.StatusRequestTimeout, fmt.Sprintf("the body did not arrive within read_timeout (%v)", in.cfg.OTLP.ReadTimeout)
		}
		return http.StatusBadRequest, "reading the request: " + err.Error()
	} else if n > max {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request is over max_request_size (%d bytes)", max)
	}
	data := st.body.Bytes()
	if enc != "" {
		// Decompressed within the same bound: a small bomb is a 413,
		// not the process's memory.
		var err error
		st.plain, err = in.decoders[enc].Decode(st.plain[:0], data)
		if errors.Is(err, contentenc.ErrTooLarge) {
			return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request, decompressed, is over max_request_size (%d bytes)", max)
		}
		if err != nil {
			return http.StatusBadRequest, "the body is not " + enc + ": " + err.Error()
		}
		n := int64(len(st.plain))
		if !in.take(n) {
			return http.StatusServiceUnavailable, "too many request bodies in flight (max_inflight_size); retry later"
		}
		*held = n
		data = st.plain
	}
	// A body is small beside what it decodes to (an empty LogRecord is two
	// bytes on the wire and hundreds in an arena), so what it decoded to
	// is reserved of max_inflight_size too, once it is known; and, since
	// that is known only once the arena holds it, only decodeSlots
	// requests decode at once. (The slot is not held past the decode: a
	// request may wait for its delivery, and the others must not wait
	// behind it.)
	//
	// From its decode to its Write, the request runs on one generation:
	// the fields it decodes are those its policies use.
	g := in.p.acquire()
	defer g.release()
	st.tags = st.tags.forGen(g)
	in.decoding <- struct{}{}
	st.arena.Reset()
	var recs []*record.Record
	var err error
	if ct == ctJSON {
		recs, err = st.arena.DecodeOTLPJSON(data, record.Referenced, st.recs[:0])
	} else {
		recs, err = st.arena.DecodeOTLPProjection(data, record.Referenced, st.recs[:0], g.keep)
	}
	st.recs = recs
	decoded := int64(st.arena.Reserved())
	<-in.decoding
	if errors.Is(err, record.ErrTooManyRecords) {
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("the request holds more than max_request_records (%d) LogRecords", in.cfg.OTLP.MaxRequestRecords)
	}
	if err != nil {
		return http.StatusBadRequest, "the request does not decode: " + err.Error()
	}
	if !in.take(decoded) {
		return http.StatusServiceUnavailable, "too many requests in hand (max_inflight_size); retry later"
	}
	*held += decoded
	in.stats.bytes.Add(int64(len(data)))
	n := int64(len(recs))
	if n > 0 {
		tag := st.arena.NewStringFrom(in.cfg.Tag)
		for _, r := range recs {
			r.SetTagValue(tag)
			r.Commit()
		}
		in.stats.in.Add(n)
		in.p.stats.In.Add(n)
		in.p.stats.BytesIn.Add(int64(len(data)))
	}
	var res output.Result
	err = in.p.processWith(recs, st.tags, &st.sc, output.WriteOptions{NoWait: true}, &res)
	clear(st.recs)
	switch {
	case errors.Is(err, output.ErrFull):
		return http.StatusServiceUnavailable, "an output's buffer is full; retry later"
	case errors.Is(err, errStopped):
		return http.StatusServiceUnavailable, "stopping; retry later"
	case err != nil:
		in.p.log.Error("an OTLP request could not be written; answered 503", "input", in.cfg.Alias, "err", err)
		return http.StatusServiceUnavailable, "the records could not be written; retry later"
	}
	st.resp = otlpSuccess(st.resp[:0], ct, min(res.Dropped+res.Rejected, n), res)
	return http.StatusOK, ""
}

// otlpSuccess is an ExportLogsServiceResponse, with a partial_success when
// records were not taken.
func otlpSuccess(dst []byte, ct string, rejected int64, res output.Result) []byte {
	if rejected == 0 {
		if ct == ctJSON {
			return append(dst, "{}"...)
		}
		return dst
	}
	var why []string
	if res.Dropped > 0 {
		why = append(why, fmt.Sprintf("%d dropped by a full output buffer (when_full: drop_newest)", res.Dropped))
	}
	if res.Rejected > 0 {
		why = append(why, fmt.Sprintf("%d refused downstream", res.Rejected))
	}
	msg := strings.Join(why, "; ")
	if ct == ctJSON {
		dst = append(dst, `{"partialSuccess":{"rejectedLogRecords":"`...)
		dst = strconv.AppendInt(dst, rejected, 10)
		dst = append(dst, `","errorMessage":`...)
		dst = strconv.AppendQuote(dst, msg)
		return append(dst, "}}"...)
	}
	var ps []byte
	ps = append(ps, 0x08) // rejected_log_records, varint
	ps = binary.AppendUvarint(ps, uint64(rejected))
	ps = append(ps, 0x12) // error_message
	ps = binary.AppendUvarint(ps, uint64(len(msg)))
	ps = append(ps, msg...)
	dst = append(dst, 0x0a) // partial_success
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	return append(dst, ps...)
}

// exposed reports whether a listen address reaches beyond loopback: every
// interface (an empty host, 0.0.0.0, ::), an address that is not
// loopback, or a name other than localhost.
func exposed(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false // refused when the config was read
	}
	if ip := net.ParseIP(host); ip != nil {
		return !ip.IsLoopback()
	}
	return host != "localhost"
}

// decodeSlots is how many requests are decoded at once; the others wait
// with their bodies read. Decoding is all CPU, so more than twice the
// processors would gain no throughput and only grow more arenas before
// max_inflight_size can count them.
func decodeSlots() int { return 2 * runtime.GOMAXPROCS(0) }

// take reserves n bytes of max_inflight_size, if they are left.
func (in *otlpInput) take(n int64) bool {
	if in.inflight.Add(-n) < 0 {
		in.inflight.Add(n)
		return false
	}
	return true
}

// pooledState is the most memory a request's room keeps when it goes back
// to the pool: a room that a large request grew is let go, so that the
// input's memory at rest is not its largest request's times the rooms.
const pooledState = 8 << 20

// release returns st to the pool, unless a large request grew it.
func (in *otlpInput) release(st *otlpState) {
	if st.arena.Used() > pooledState || st.body.Cap() > pooledState || cap(st.plain) > pooledState {
		return
	}
	in.states.Put(st)
}

// fail answers a request that is refused, with a google.rpc.Status in the
// request's encoding (plain text when it has none we know).
func (in *otlpInput) fail(w http.ResponseWriter, ct string, status int, msg string) {
	in.count(status)
	var body []byte
	switch ct {
	case ctJSON:
		body = fmt.Appendf(nil, `{"code":%d,"message":%s}`, grpcCode(status), strconv.Quote(msg))
	case ctProtobuf:
		body = append(body, 0x08)
		body = binary.AppendUvarint(body, uint64(grpcCode(status)))
		body = append(body, 0x12)
		body = binary.AppendUvarint(body, uint64(len(msg)))
		body = append(body, msg...)
	default:
		ct, body = "text/plain; charset=utf-8", []byte(msg+"\n")
	}
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	w.Write(body)
}

// grpcCode is the google.rpc.Code of an HTTP status, as OTLP maps them.
func grpcCode(status int) int {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return 3 // INVALID_ARGUMENT
	case http.StatusNotFound:
		return 5 // NOT_FOUND
	case http.StatusServiceUnavailable:
		return 14 // UNAVAILABLE
	case http.StatusRequestTimeout:
		return 4 // DEADLINE_EXCEEDED
	case http.StatusMethodNotAllowed:
		return 12 // UNIMPLEMENTED
	}
	return 2 // UNKNOWN
}

// statuses returns the statuses of m in order.
func statuses(m map[int]int64) []int {
	return slices.Sorted(maps.Keys(m))
}
