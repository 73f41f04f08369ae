package parse

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/policyrun/policyrun/internal/kvtext"
	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// logfmtParser reads key=value pairs with the scanner of parse_logfmt:
// pairs separated by white space, values optionally double-quoted with \"
// and \\ escapes, a bare key mapping to "". Values stay strings, as in
// Fluent Bit's logfmt parser; a policy converts them.
type logfmtParser struct {
	stateless
	sc  kvtext.Logfmt
	buf []byte
}

var errLogfmtEmpty = errors.New("logfmt: no key=value pairs")

func (p *logfmtParser) Parse(a *record.Arena, out []*record.Record, _ string, line []byte, _ tail.Mark) ([]*record.Record, error) {
	r, err := p.parse(a, line)
	return append(out, r), err
}

func (p *logfmtParser) parse(a *record.Arena, line []byte) (*record.Record, error) {
	// The scan only reads line, and every key and value is copied into the
	// arena, so viewing the bytes as a string without a copy is safe.
	p.sc.Init(unsafe.String(unsafe.SliceData(line), len(line)))
	b := a.BeginMap(8)
	n := 0
	for p.sc.Next() {
		p.buf = p.sc.AppendValue(p.buf[:0])
		b.Add(a.NewStringFrom(p.sc.Key()), a.NewString(p.buf))
		n++
	}
	m := b.Finish()
	if err := p.sc.Err(); err != nil {
		return unparsed(a, line, fmt.Errorf("logfmt: %w", err))
	}
	if n == 0 {
		return unparsed(a, line, errLogfmtEmpty)
	}
	r := a.NewRecord()
	_ = r.Set(record.Path{}, m)
	r.Commit()
	return r, nil
}
