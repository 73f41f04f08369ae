package output

import (
	"bufio"
	"fmt"
	"io"

	"github.com/policyrun/policyrun/record"
)

func init() {
	Register(Factory{
		Name:        "stdout",
		NewSettings: func() Settings { return noKeys{} },
		New: func(_ Settings, env Env) (Output, error) {
			return &syncOutput{w: NewStream("stdout", env.Stdout)}, nil
		},
	})
}

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
