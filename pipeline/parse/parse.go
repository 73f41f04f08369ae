// Package parse turns raw log lines into records (json, cri, docker, logfmt,
// raw), joining a long line's parts and a stack trace's lines into one; a
// line that does not parse becomes a raw record with an error field.
package parse

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// Field names the parsers write, as Fluent Bit's parsers and the kubernetes
// filter name them.
const (
	FieldLog        = "log"
	FieldStream     = "stream"
	FieldLogtag     = "logtag"
	FieldParseError = "parse_error"
)

var (
	pathLog        = record.NewPath(FieldLog)
	pathStream     = record.NewPath(FieldStream)
	pathLogtag     = record.NewPath(FieldLogtag)
	pathParseError = record.NewPath(FieldParseError)
	pathTime       = record.NewPath("time")
)

// Names lists the parsers, for config validation and messages.
var Names = []string{"json", "cri", "docker", "logfmt", "raw"}

// Parser turns lines of one input into records of an arena. A Parser keeps
// per-source state (CRI partial lines, multiline records), so each input
// owns its own.
//
// Records may refer to the bytes of their line (the json and docker parsers
// decode without copying): the caller keeps a line unchanged until the
// arena's next Reset. The tail's lines live until its next Poll, and the
// pipeline finishes a batch before polling again. What a parser holds back
// it copies.
type Parser interface {
	// Parse decodes line, read from source, where at marks its start, and
	// appends to out the records it completes: none when the line was
	// held back (a CRI P part, the start of a stack trace), which a later
	// line of the same source completes; or a record the line ends (a
	// stack trace the line is not part of), then the line's own. On
	// a parse error it appends the line as a raw record carrying the error
	// in parse_error, and returns the error, so that the caller counts it
	// and nothing is lost.
	Parse(a *record.Arena, out []*record.Record, source string, line []byte, at tail.Mark) ([]*record.Record, error)
	// Held reports what source holds back, if anything.
	Held(source string) (Hold, bool)
	// Flush appends to out the records of all that source holds back (at
	// end of input, or after a flush timeout).
	Flush(a *record.Arena, out []*record.Record, source string) []*record.Record
}

// Hold is what a source holds back, as Held reports it.
type Hold struct {
	// First marks the start of the oldest line held: a checkpoint that
	// passes it would lose the lines held in a crash.
	First tail.Mark
	// Wait changes whenever the stream (stdout, stderr) that has waited
	// longest since it took a line, or part of one, changes or takes one:
	// a caller times how long what source holds has waited from the last
	// change.
	Wait uint64
}

// DefaultMaxJoined bounds a line the cri parser joins from P parts and the
// docker parser from partial entries, and a multiline record.
const DefaultMaxJoined = 1 << 20

// New returns the parser called name.
func New(name string) (Parser, error) { return NewSized(name, DefaultMaxJoined) }

// NewSized is New with a bound on what a parser joins (cri and docker
// lines from parts, multiline records); the pipeline passes the input's
// max_line_size.
func NewSized(name string, maxJoined int) (Parser, error) {
	return newParser(name, maxJoined, nil)
}

// NewMultiline is NewSized with multiline rules; see CheckMultiline for the
// parsers that take them.
func NewMultiline(name string, maxJoined int, ml Multiline) (Parser, error) {
	if err := CheckMultiline(name); err != nil {
		return nil, err
	}
	if len(ml.Rules) == 0 {
		return nil, fmt.Errorf("multiline needs a rule (built-in: %s)", strings.Join(BuiltinNames(), ", "))
	}
	m := &multiline{rules: ml.Rules, maxLines: ml.MaxLines}
	if m.maxLines <= 0 {
		m.maxLines = DefaultMaxLines
	}
	return newParser(name, maxJoined, m)
}

func newParser(name string, maxJoined int, ml *multiline) (Parser, error) {
	switch name {
	case "json":
		return jsonParser{}, nil
	case "cri":
		return newCRI(maxJoined, ml), nil
	case "docker":
		return newDocker(maxJoined, ml), nil
	case "logfmt":
		return &logfmtParser{}, nil
	case "raw", "":
		if ml != nil {
			return &rawLines{newJoiner(maxJoined, ml, rawRecord)}, nil
		}
		return rawParser{}, nil
	}
	return nil, fmt.Errorf("unknown parser %q (known: %s)", name, strings.Join(Names, ", "))
}

// stateless parsers hold nothing back.
type stateless struct{}

func (stateless) Held(string) (Hold, bool) { return Hold{}, false }

func (stateless) Flush(_ *record.Arena, out []*record.Record, _ string) []*record.Record {
	return out
}

type rawParser struct{ stateless }

func (rawParser) Parse(a *record.Arena, out []*record.Record, _ string, line []byte, _ tail.Mark) ([]*record.Record, error) {
	return append(out, raw(a, line)), nil
}

// rawLines is the raw parser with multiline rules: a record's log is its
// lines joined with "\n".
type rawLines struct{ joiner }

func (p *rawLines) Parse(a *record.Arena, out []*record.Record, source string, line []byte, at tail.Mark) ([]*record.Record, error) {
	out, taken := p.take(a, out, streamKey{source: source}, false, 0, nil, line, at)
	if taken {
		return out, nil
	}
	return append(out, raw(a, line)), nil
}

func rawRecord(a *record.Arena, _ int64, _, log []byte, _ bool) *record.Record { return raw(a, log) }

// raw makes {"log": line}. The line is copied into the arena so that the
// caller may reuse its buffer.
func raw(a *record.Arena, line []byte) *record.Record {
	r := a.NewRecord()
	_ = r.Set(pathLog, a.NewString(line))
	r.Commit()
	return r
}

// unparsed is the record for a line that did not parse: the raw line and why.
func unparsed(a *record.Arena, line []byte, err error) (*record.Record, error) {
	r := raw(a, line)
	_ = r.Set(pathParseError, a.NewStringFrom(err.Error()))
	r.Commit()
	return r, err
}

type jsonParser struct{ stateless }

func (jsonParser) Parse(a *record.Arena, out []*record.Record, _ string, line []byte, _ tail.Mark) ([]*record.Record, error) {
	r, err := a.DecodeJSON(line, record.Referenced)
	if err != nil {
		r, err = unparsed(a, line, err)
	}
	return append(out, r), err
}
