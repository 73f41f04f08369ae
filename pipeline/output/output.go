// Package output holds the pipeline's outputs, each a registered type
// (registry.go): null (counts), stdout and file (JSON lines, the file
// rotated by size), and the network outputs. An output accepts whole
// batches.
package output

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"go.yaml.in/yaml/v3"

	"github.com/policyrun/policyrun/record"
)

// Output takes batches of records. The pipeline calls Start once, then
// Write from any number of goroutines at once, then Shutdown.
type Output interface {
	// Start starts what the output runs in the background.
	Start(ctx context.Context) error
	// Write hands recs to the output; they are valid only during the
	// call. It returns once the output holds them as its guarantee says
	// (docs/pipeline.md, "Delivery guarantees"): the pipeline then
	// checkpoints past them. Result counts the records it did not take.
	Write(ctx context.Context, recs []*record.Record, opts WriteOptions) (Result, error)
	// Shutdown stops the output, delivering what it holds until ctx is
	// done.
	Shutdown(ctx context.Context) error
	// Stats returns what the output did so far; safe to call from any
	// goroutine.
	Stats() Stats
}

// Reading is what an output reads of the records it is given, which says
// how much of each record an otlp input must build (record.OTLPProjection).
type Reading uint8

const (
	// ReadsRecords: the keys and values (JSON, NDJSON, OTLP/JSON): every
	// record is built whole.
	ReadsRecords Reading = iota
	// ReadsOTLPWire: OTLP records are encoded as OTLP protobuf, which an
	// OTLP record decoded from protobuf can be from its LogRecord's bytes
	// and its edits (record.OTLPProjection.Wire).
	ReadsOTLPWire
	// ReadsNothing: the records are counted only.
	ReadsNothing
)

// RecordReader is an Output that says what it reads of the records it
// is given; one that does not implement it reads them (ReadsRecords).
type RecordReader interface {
	Reads() Reading
}

// WriteOptions say how a Write may wait.
type WriteOptions struct {
	// NoWait makes a Write into a full buffer under when_full: block
	// return ErrFull at once, taking nothing, instead of waiting for
	// room (the OTLP input then answers 503).
	NoWait bool
}

// ErrFull is what a Write with NoWait returns when its buffer is full.
var ErrFull = errors.New("output buffer full")

// Result counts the records of a Write that the output did not take.
type Result struct {
	// Dropped: a full buffer under when_full: drop_newest.
	Dropped int64
	// Rejected: refused by the receiver, or whose retries ran out.
	Rejected int64
}

// Stats is what an output did.
type Stats struct {
	Records, Bytes int64 // delivered (written, for null, stdout and file)

	// Of the buffered outputs (docs/pipeline.md, "Metrics"):
	Retries int64 // sends that failed and were tried again
	// RetriedRecords counts the records of those sends (a record each
	// time its send is tried again).
	RetriedRecords int64
	Rejected       int64 // records the receiver refused (not retried)
	Dropped        int64 // records dropped by a full buffer under when_full: drop_newest
	Failed         int64 // records whose retries ran out (retry.max_elapsed)
	Lost           int64 // records still in a memory buffer when the output stopped
	// DeadLettered counts the records written into the dead-letter
	// directory (rejected or failed too).
	DeadLettered int64
	// BufferBytes and BufferChunks are what the buffer holds now; Corrupt
	// counts damaged chunk files found in a filesystem buffer.
	BufferBytes, BufferChunks, Corrupt int64
	// BufferFull is set while the buffer has no room (buffer.Stats.Full).
	BufferFull bool
	// Buffered is set for outputs with a buffer, whose counts above mean
	// something.
	Buffered bool
}

// syncOutput makes a writer that takes batches one at a time (null,
// stdout, file) an Output: Writes take turns, and Shutdown closes it.
type syncOutput struct {
	mu     sync.Mutex
	w      batchWriter
	closed bool
}

type batchWriter interface {
	Write(recs []*record.Record) error
	Close() error
	Stats() (records, bytes int64)
}

func (s *syncOutput) Start(context.Context) error { return nil }

func (s *syncOutput) Write(_ context.Context, recs []*record.Record, _ WriteOptions) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Result{}, s.w.Write(recs)
}

func (s *syncOutput) Shutdown(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.w.Close()
}

func (s *syncOutput) Stats() Stats {
	r, b := s.w.Stats()
	return Stats{Records: r, Bytes: b}
}

// noKeys are the settings of an output type without keys of its own.
type noKeys struct{}

func (noKeys) Keys(Values) map[string]func(*yaml.Node) { return nil }
func (noKeys) Check(Values, int)                       {}

type counts struct{ records, bytes atomic.Int64 }

func (c *counts) Stats() (int64, int64) { return c.records.Load(), c.bytes.Load() }
