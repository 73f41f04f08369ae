// Package output holds the pipeline's outputs: null (counts), stdout and file
// (JSON lines, the file rotated by size). An output accepts whole batches.
package output

import (
	"bufio"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/policyrun/policyrun/record"
)

// Output takes batches of records. Write returns only once the batch is
// handed to the operating system (or counted, for null): the pipeline then
// checkpoints past it. Outputs are used from one goroutine.
type Output interface {
	Name() string
	Write(recs []*record.Record) error
	Close() error
	// Stats returns the records and bytes written so far; safe to call
	// from any goroutine.
	Stats() (records, bytes int64)
}

type counts struct{ records, bytes atomic.Int64 }

func (c *counts) Stats() (int64, int64) { return c.records.Load(), c.bytes.Load() }

// Null encodes each record, as a real output would, and throws it away: it
// measures the pipeline without the cost of I/O.
type Null struct {
	counts
	buf []byte
}

// NewNull returns a null output.
func NewNull() *Null { return &Null{} }

func (*Null) Name() string { return "null" }

func (n *Null) Write(recs []*record.Record) error {
	var total int64
	for _, r := range recs {
		n.buf = r.AppendJSON(n.buf[:0])
		total += int64(len(n.buf)) + 1
	}
	n.records.Add(int64(len(recs)))
	n.bytes.Add(total)
	return nil
}

func (*Null) Close() error { return nil }

// Stream writes JSON lines to a writer; it is the stdout output.
type Stream struct {
	counts
	name string
	w    *bufio.Writer
	buf  []byte
}

// NewStream writes JSON lines to w.
func NewStream(name string, w io.Writer) *Stream {
	return &Stream{name: name, w: bufio.NewWriterSize(w, 64<<10)}
}

func (s *Stream) Name() string { return s.name }

func (s *Stream) Write(recs []*record.Record) error {
	n, err := writeLines(s.w, recs, &s.buf)
	s.records.Add(int64(len(recs)))
	s.bytes.Add(n)
	if err != nil {
		return err
	}
	return s.w.Flush()
}

func (s *Stream) Close() error { return s.w.Flush() }

func writeLines(w *bufio.Writer, recs []*record.Record, buf *[]byte) (int64, error) {
	var total int64
	for _, r := range recs {
		b := r.AppendJSON((*buf)[:0])
		b = append(b, '\n')
		*buf = b
		if _, err := w.Write(b); err != nil {
			return total, fmt.Errorf("write: %w", err)
		}
		total += int64(len(b))
	}
	return total, nil
}
