package output

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/internal/contentenc"
	"github.com/policyrun/policyrun/pipeline/buffer"
	"github.com/policyrun/policyrun/record"
)

// The delivery machinery of the network outputs (otlp, http): a Write
// encodes its records into payloads, puts them in the output's buffer, and
// returns as the buffer's guarantee says; workers take chunks from the
// buffer, join their payloads into one request, and send it, retrying
// with exponential backoff and full jitter.

// Delivery defaults, as the OpenTelemetry Collector's otlphttp exporter
// has them, but for max_elapsed (0: retry for ever, so that nothing held
// is given up).
const (
	DefaultWorkers         = 4
	DefaultTimeout         = 30 * time.Second
	DefaultInitialInterval = 5 * time.Second
	DefaultMaxInterval     = 30 * time.Second
	// MaxPayload bounds one payload (one Put): a larger Write is split.
	MaxPayload = 4 << 20
)

// DeliveryConfig is the keys every buffered output shares.
type DeliveryConfig struct {
	Workers    int
	Timeout    time.Duration
	Retry      RetryConfig
	Buffer     BufferConfig
	DeadLetter DeadLetterConfig
}

// RetryConfig is retry.*.
type RetryConfig struct {
	InitialInterval, MaxInterval time.Duration
	MaxElapsed                   time.Duration // 0: for ever
}

// BufferConfig is buffer.*.
type BufferConfig struct {
	Type        string // memory | filesystem
	MaxSize     int64  // 0: the type's default
	WhenFull    string // block | drop_newest
	Compression string // filesystem: gzip, zstd or none
	ChunkSize   int64  // filesystem: 0, buffer.DefaultChunkSize
	Sync        string // filesystem: buffer.SyncFull or buffer.SyncNormal
	line        int
}

func defaultDelivery() DeliveryConfig {
	return DeliveryConfig{
		Workers:    DefaultWorkers,
		Timeout:    DefaultTimeout,
		Retry:      RetryConfig{InitialInterval: DefaultInitialInterval, MaxInterval: DefaultMaxInterval},
		Buffer:     BufferConfig{Type: buffer.Memory, WhenFull: buffer.Block, Compression: "none"},
		DeadLetter: DeadLetterConfig{MaxSize: DefaultDeadLetterMaxSize},
	}
}

// nested adds to keys a group of keys under prefix, readable both as a
// mapping (buffer: {type: filesystem}) and as dotted keys
// (buffer.type: filesystem), as Fluent Bit writes storage.type.
func nested(keys map[string]func(*yaml.Node), v Values, prefix string, sub map[string]func(*yaml.Node)) {
	keys[prefix] = func(n *yaml.Node) { v.Mapping(n, prefix, sub) }
	for k, set := range sub {
		keys[prefix+"."+k] = set
	}
}

func (c *DeliveryConfig) keys(keys map[string]func(*yaml.Node), v Values) {
	keys["workers"] = func(n *yaml.Node) {
		if c.Workers = v.Int(n); c.Workers < 1 {
			v.Errorf(n.Line, "workers must be at least 1")
		}
	}
	keys["timeout"] = func(n *yaml.Node) {
		if c.Timeout = v.Duration(n); c.Timeout <= 0 {
			v.Errorf(n.Line, "timeout must be more than 0")
		}
	}
	nested(keys, v, "retry", map[string]func(*yaml.Node){
		"initial_interval": func(n *yaml.Node) { c.Retry.InitialInterval = v.Duration(n) },
		"max_interval":     func(n *yaml.Node) { c.Retry.MaxInterval = v.Duration(n) },
		"max_elapsed":      func(n *yaml.Node) { c.Retry.MaxElapsed = v.Duration(n) },
	})
	nested(keys, v, "buffer", map[string]func(*yaml.Node){
		"type": func(n *yaml.Node) {
			c.Buffer.Type, c.Buffer.line = v.OneOf(n, "buffer type", buffer.Memory, buffer.Filesystem), n.Line
		},
		"max_size":  func(n *yaml.Node) { c.Buffer.MaxSize = v.Size(n) },
		"when_full": func(n *yaml.Node) { c.Buffer.WhenFull = v.OneOf(n, "when_full", buffer.Block, buffer.DropNewest) },
		"compression": func(n *yaml.Node) {
			c.Buffer.Compression = v.OneOf(n, "buffer compression", append(contentenc.Names(), "none")...)
		},
		"chunk_size": func(n *yaml.Node) { c.Buffer.ChunkSize = v.Size(n) },
		"sync":       func(n *yaml.Node) { c.Buffer.Sync = v.OneOf(n, "buffer sync", buffer.SyncFull, buffer.SyncNormal) },
	})
	c.DeadLetter.keys(keys, v)
}

func (c *DeliveryConfig) check(v Values, line int) {
	if c.Retry.InitialInterval <= 0 {
		v.Errorf(line, "retry.initial_interval must be more than 0")
	}
	if c.Retry.MaxInterval < c.Retry.InitialInterval {
		v.Errorf(line, "retry.max_interval must be at least retry.initial_interval")
	}
	if c.Buffer.Type != buffer.Filesystem && c.Buffer.Compression != "" && c.Buffer.Compression != "none" {
		v.Errorf(line, "buffer.compression is for buffer.type filesystem")
	}
	if c.Buffer.Type != buffer.Filesystem && c.Buffer.Sync != "" {
		v.Errorf(line, "buffer.sync is for buffer.type filesystem")
	}
	c.DeadLetter.check(v, line, c.Buffer)
}

// NeedsDataDir reports whether the output keeps files under
// service.data_dir, and the line that says so.
func (c *DeliveryConfig) NeedsDataDir() (int, bool) {
	return c.Buffer.line, c.Buffer.Type == buffer.Filesystem
}

// A DataDirUser is the settings of an output that keeps files under
// service.data_dir: the config requires it.
type DataDirUser interface {
	NeedsDataDir() (line int, ok bool)
}

// codec turns records into payloads and a chunk's payloads into one
// request body. It is used by one goroutine at a time.
type codec interface {
	encode(dst []byte, recs []*record.Record) []byte
	join(dst []byte, payloads [][]byte) []byte
	// concatenates reports whether join concatenates: a chunk whose
	// payloads the buffer has back to back (Chunk.Joined) is then sent
	// as it is.
	concatenates() bool
	reads() Reading
}

// sender sends one request body.
type sender interface {
	send(ctx context.Context, body []byte) sendResult
}

// sendResult classifies a send.
type sendResult struct {
	kind outcome
	// rejected records of a delivered request (an OTLP partial success).
	rejected int64
	// retryAfter is what the receiver asked for (Retry-After), 0 if nothing.
	retryAfter time.Duration
	// msg says what went wrong (the response's message, the error).
	msg string
	// sent is the bytes on the wire (after compression).
	sent int
}

type outcome uint8

const (
	delivered outcome = iota
	retryable         // connection errors, timeouts, 429, 502, 503, 504
	permanent         // other refusals: not retried, counted as rejected
)

// buffered is an output with a buffer and delivery workers.
type buffered struct {
	alias    string
	log      *slog.Logger
	cfg      DeliveryConfig
	newCodec func() codec
	states   sync.Pool // *writeState
	send     sender
	buf      buffer.Buffer
	// dead keeps what the receiver refused for good, or whose retries
	// ran out (nil without dead_letter); deadDir is its directory.
	dead    *deadLetter
	deadDir string

	workers   sync.WaitGroup
	stop      context.CancelFunc
	started   bool
	shutdown  sync.Once
	logLimits [3]rateLimit

	records, bytes, retries, retried, rejected, dropped, failed, lost, deadLettered atomic.Int64
}

func newBuffered(alias string, env Env, cfg DeliveryConfig, newCodec func() codec, send sender) (*buffered, error) {
	log := env.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &buffered{alias: alias, log: log, cfg: cfg, newCodec: newCodec, send: send}
	if cfg.DeadLetter.Path != "" {
		o.deadDir = Resolve(env.Dir, cfg.DeadLetter.Path)
	}
	if env.Check {
		return o, nil
	}
	if o.deadDir != "" {
		d, err := openDeadLetter(o.deadDir, cfg.DeadLetter.MaxSize)
		if err != nil {
			return nil, err
		}
		o.dead = d
	}
	bc := buffer.Config{Type: cfg.Buffer.Type, MaxSize: cfg.Buffer.MaxSize, WhenFull: cfg.Buffer.WhenFull,
		ChunkSize: cfg.Buffer.ChunkSize, Sync: cfg.Buffer.Sync, Logger: log}
	if cfg.Buffer.Compression != "none" {
		bc.Compression = cfg.Buffer.Compression
	}
	if bc.Type == buffer.Filesystem {
		if env.DataDir == "" {
			return nil, errors.New("a filesystem buffer needs service.data_dir")
		}
		bc.Dir = filepath.Join(env.DataDir, alias)
	}
	b, err := buffer.New(bc)
	if err != nil {
		return nil, err
	}
	o.buf = b
	return o, nil
}

func (o *buffered) Start(ctx context.Context) error {
	if o.buf == nil || o.started {
		return nil
	}
	o.started = true
	// Workers outlive the run's context: a stop lets them deliver for
	// service.grace (Shutdown), then stops them.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	o.stop = cancel
	for range o.cfg.Workers {
		o.workers.Add(1)
		go func() {
			defer o.workers.Done()
			o.work(wctx)
		}()
	}
	return nil
}

// writeState is a Write's codec and room to encode, reused.
type writeState struct {
	c    codec
	data []byte
}

// Reads is what the output's codec reads of the records.
func (o *buffered) Reads() Reading { return o.newCodec().reads() }

func (o *buffered) getState() *writeState {
	if ws, ok := o.states.Get().(*writeState); ok {
		return ws
	}
	return &writeState{c: o.newCodec()}
}

// Write encodes recs into payloads of at most MaxPayload (or a quarter of
// the buffer, if smaller), puts them in the buffer, and, for a memory
// buffer, waits for their delivery.
func (o *buffered) Write(ctx context.Context, recs []*record.Record, opts WriteOptions) (Result, error) {
	var res Result
	if o.buf == nil || len(recs) == 0 {
		return res, nil
	}
	limit := MaxPayload
	if q := o.cfg.Buffer.MaxSize / 4; q > 0 && q < int64(limit) {
		limit = int(q)
	}
	ws := o.getState()
	defer o.states.Put(ws)
	c := ws.c
	var receipts []buffer.Receipt
	var pending []int64 // records of each receipt
	var put func(recs []*record.Record) error
	put = func(recs []*record.Record) error {
		ws.data = c.encode(ws.data[:0], recs)
		data := ws.data
		if len(data) > limit && len(recs) > 1 {
			half := len(recs) / 2
			if err := put(recs[:half]); err != nil {
				return err
			}
			return put(recs[half:])
		}
		r, err := o.buf.Put(ctx, data, len(recs), opts.NoWait)
		switch {
		case errors.Is(err, buffer.ErrDropped), errors.Is(err, buffer.ErrTooBig):
			n := int64(len(recs))
			res.Dropped += n
			o.dropped.Add(n)
			if errors.Is(err, buffer.ErrTooBig) {
				o.logLimited(0, "a record is larger than the buffer's max_size: dropped", "records", n, "bytes", len(data))
			}
			return nil
		case errors.Is(err, buffer.ErrFull):
			return ErrFull
		case err != nil:
			return err
		}
		receipts = append(receipts, r)
		pending = append(pending, int64(len(recs)))
		return nil
	}
	err := put(recs)
	for i, r := range receipts {
		n, werr := r.Wait(ctx)
		if werr != nil {
			if err == nil {
				err = fmt.Errorf("%d records not delivered: %w", pending[i], werr)
			}
			continue
		}
		res.Rejected += n
	}
	return res, err
}

// work is one delivery worker.
func (o *buffered) work(ctx context.Context) {
	c := o.newCodec()
	var joined []byte
	for {
		ch, err := o.buf.Get(ctx)
		if err != nil {
			return
		}
		body := ch.Payloads[0] // one payload is sent as it is
		switch {
		case len(ch.Payloads) == 1:
		case ch.Joined != nil && c.concatenates():
			body = ch.Joined
		default:
			joined = c.join(joined[:0], ch.Payloads)
			body = joined
		}
		if !o.deliver(ctx, ch, body) {
			return
		}
	}
}

// deliver sends a chunk until it is delivered, refused, or its retries run
// out; it reports false when ctx ended first (the chunk is then left to
// the buffer's Close: kept on disk, or lost from memory).
func (o *buffered) deliver(ctx context.Context, ch *buffer.Chunk, body []byte) bool {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		r := o.send.send(ctx, body)
		if ctx.Err() != nil {
			return false
		}
		switch r.kind {
		case delivered:
			ok := ch.Records - min(r.rejected, ch.Records)
			o.records.Add(ok)
			o.bytes.Add(int64(r.sent))
			if r.rejected > 0 {
				o.rejected.Add(r.rejected)
				o.logLimited(1, "the receiver rejected part of a request", "rejected", r.rejected, "records", ch.Records, "msg", r.msg)
			}
			o.buf.Done(ch, r.rejected)
			return true
		case permanent:
			o.rejected.Add(ch.Records)
			if o.keepDead(ch, body, "the receiver refused a request", r.msg) {
				return true
			}
			o.logLimited(1, "the receiver refused a request; its records are counted as rejected", "records", ch.Records, "msg", r.msg)
			o.buf.Done(ch, ch.Records)
			return true
		}
		delay, ok := o.nextTry(r, attempt, start)
		if !ok {
			o.failed.Add(ch.Records)
			if o.keepDead(ch, body, "delivery failed and its retries ran out (retry.max_elapsed)", r.msg) {
				return true
			}
			o.log.Error("delivery failed and its retries ran out (retry.max_elapsed)", "records", ch.Records,
				"attempts", attempt+1, "msg", r.msg, "kept", o.buf.Durable())
			o.buf.Keep(ch)
			return true
		}
		o.retries.Add(1)
		o.retried.Add(ch.Records)
		o.logLimited(2, "delivery failed; retrying", "records", ch.Records, "attempt", attempt+1, "in", delay.Round(time.Millisecond), "msg", r.msg)
		if !Sleep(ctx, delay) {
			return false
		}
	}
}

// nextTry is how long to wait after a retryable send, attempt (from 0)
// of those since start: the receiver's Retry-After, or the backoff. It
// reports false when the next attempt would come after
// retry.max_elapsed.
func (o *buffered) nextTry(r sendResult, attempt int, start time.Time) (time.Duration, bool) {
	delay := r.retryAfter
	if delay <= 0 {
		delay = backoff(o.cfg.Retry, attempt)
	}
	if max := o.cfg.Retry.MaxElapsed; max > 0 && time.Since(start)+delay > max {
		return delay, false
	}
	return delay, true
}

// Sleep waits for d, and reports whether ctx was still live then: the
// wait of the outputs' retries and of the pipeline's watch.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// keepDead writes a chunk that will not be delivered into the dead-letter
// directory and finishes it, reporting whether it did: without one, or
// when it is full or cannot be written, the caller does what it would do
// without (the error is logged).
func (o *buffered) keepDead(ch *buffer.Chunk, body []byte, why, msg string) bool {
	if o.dead == nil {
		return false
	}
	path, err := o.dead.put(body, ch.Records)
	if err != nil {
		o.log.Error(why+"; it cannot be kept in the dead-letter directory", "records", ch.Records, "msg", msg, "err", err)
		return false
	}
	o.deadLettered.Add(ch.Records)
	o.logLimited(1, why+"; kept in the dead-letter directory (policyrun replay sends it again)", "records", ch.Records, "file", path, "msg", msg)
	o.buf.Done(ch, ch.Records)
	return true
}

// backoff is the delay before retry attempt+1: exponential from the
// initial interval up to the max, with full jitter (uniform in [0, d]),
// so that many clients retrying at once spread out.
func backoff(r RetryConfig, attempt int) time.Duration {
	d := r.InitialInterval
	for i := 0; i < attempt && d < r.MaxInterval; i++ {
		d *= 2
	}
	d = min(d, r.MaxInterval)
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// Shutdown lets the workers deliver what the buffer holds until ctx is
// done, then stops them and closes the buffer: a filesystem buffer keeps
// what is left for the next start, a memory buffer's is counted as lost.
func (o *buffered) Shutdown(ctx context.Context) error {
	o.shutdown.Do(func() {
		if o.buf == nil {
			return
		}
		if o.started {
			// Until the workers have sent what is pending, or ctx ends.
			for o.buf.Stats().Pending > 0 && Sleep(ctx, 5*time.Millisecond) {
			}
			o.stop()
			o.workers.Wait()
		}
		pending := o.buf.Stats().Pending
		if lost := o.buf.Close(); lost > 0 {
			o.lost.Add(lost)
			o.log.Error("stopped with records undelivered in a memory buffer: they are lost (a tail input reads them again: its checkpoint did not pass them)",
				"records", lost)
		} else if pending > 0 && o.buf.Durable() {
			o.log.Warn("stopped with chunks undelivered; the filesystem buffer keeps them for the next start", "chunks", pending)
		}
	})
	return nil
}

func (o *buffered) Stats() Stats {
	s := Stats{
		Records: o.records.Load(), Bytes: o.bytes.Load(),
		Retries: o.retries.Load(), RetriedRecords: o.retried.Load(), Rejected: o.rejected.Load(), Dropped: o.dropped.Load(),
		Failed: o.failed.Load(), Lost: o.lost.Load(), DeadLettered: o.deadLettered.Load(), Buffered: true,
	}
	if o.buf != nil {
		b := o.buf.Stats()
		s.BufferBytes, s.BufferChunks, s.Corrupt, s.BufferFull = b.Bytes, b.Chunks, b.Corrupt, b.Full
	}
	return s
}

// rateLimit lets one log line of a kind through every rateEvery, so that
// a receiver refusing everything cannot flood the log; the lines held
// back are counted in the next one.
type rateLimit struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

const rateEvery = 5 * time.Second

func (o *buffered) logLimited(kind int, msg string, args ...any) {
	l := &o.logLimits[kind]
	l.mu.Lock()
	now := time.Now()
	if !l.last.IsZero() && now.Sub(l.last) < rateEvery {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	if n > 0 {
		args = append(args, "not_logged_since_last", n)
	}
	o.log.Warn(msg, args...)
}
