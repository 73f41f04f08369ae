// Package parse turns raw log lines into records: json, cri (containerd and
// CRI-O, joining partial lines), docker (json-file), logfmt and raw.
// A line that does not parse becomes a raw record with an error field.
package parse

import (
	"fmt"
	"strings"

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
// per-source state (CRI partial lines), so each input owns its own.
//
// Records may refer to the bytes of their line (the json and docker parsers
// decode without copying): the caller keeps a line unchanged until the
// arena's next Reset. The tail's lines live until its next Poll, and the
// pipeline finishes a batch before polling again.
type Parser interface {
	// Parse decodes line, read from source, into a new record of a. It
	// returns nil, nil when the line was held back (the first parts of a
	// CRI partial line); a later line of the same source completes it. On
	// a parse error it returns the line as a raw record carrying the error
	// in parse_error, together with the error, so that the caller counts
	// it and nothing is lost.
	Parse(a *record.Arena, source string, line []byte) (*record.Record, error)
	// Pending reports whether source has held-back partial lines; the
	// tail must not checkpoint past them.
	Pending(source string) bool
	// Held identifies the oldest join source holds: it changes when that
	// join is emitted and another is held, so a caller can time how long
	// one join has waited. ok is false when nothing is held.
	Held(source string) (id uint64, ok bool)
	// Flush emits one record of what source has held back (at end of
	// input, or after flush_timeout), or nil; call it until it returns nil.
	Flush(a *record.Arena, source string) *record.Record
}

// DefaultMaxJoined bounds a line the cri parser joins from P parts and the
// docker parser from partial entries.
const DefaultMaxJoined = 1 << 20

// New returns the parser called name.
func New(name string) (Parser, error) { return NewSized(name, DefaultMaxJoined) }

// NewSized is New with a bound on the lines a parser joins from parts (cri,
// docker);
// the pipeline passes the input's max_line_size.
func NewSized(name string, maxJoined int) (Parser, error) {
	switch name {
	case "json":
		return jsonParser{}, nil
	case "cri":
		return newCRI(maxJoined), nil
	case "docker":
		return newDocker(maxJoined), nil
	case "logfmt":
		return &logfmtParser{}, nil
	case "raw", "":
		return rawParser{}, nil
	}
	return nil, fmt.Errorf("unknown parser %q (known: %s)", name, strings.Join(Names, ", "))
}

// stateless parsers hold nothing back.
type stateless struct{}

func (stateless) Pending(string) bool                        { return false }
func (stateless) Held(string) (uint64, bool)                 { return 0, false }
func (stateless) Flush(*record.Arena, string) *record.Record { return nil }

type rawParser struct{ stateless }

func (rawParser) Parse(a *record.Arena, _ string, line []byte) (*record.Record, error) {
	return raw(a, line), nil
}

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

func (jsonParser) Parse(a *record.Arena, _ string, line []byte) (*record.Record, error) {
	r, err := a.DecodeJSON(line, record.Referenced)
	if err != nil {
		return unparsed(a, line, err)
	}
	return r, nil
}
