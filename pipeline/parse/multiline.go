package parse

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// A Rule says which lines make one record: which line begins one, and
// which lines after it belong to it. The built-in rules (Builtin) read
// stack traces; NewRule makes one of a start and a continue regular
// expression. A parser with rules (Multiline) joins the log of the lines
// of a record with "\n" between them (docker's logs, which end in their
// own "\n", as they are) into the record of its first line.
type Rule struct {
	Name string
	m    matcher
}

// A matcher is a rule's decisions. The rules match a log without its line
// ending. state is the matcher's own, from start or the last next.
type matcher interface {
	// start reports whether line begins a record.
	start(line []byte) (state uint8, ok bool)
	// next says what line does to a record in state.
	next(state uint8, line []byte) (verdict, uint8)
}

type verdict uint8

const (
	end  verdict = iota // the record is whole without the line
	join                // the line belongs to the record
	// try: the line belongs to the record if the line after it does (a
	// blank line that a chained traceback or another goroutine follows);
	// if not, it is given back, as if the record had ended before it.
	try
)

// Multiline is how a parser joins lines into records: Rules, in order (a
// record is begun by the first rule whose start takes the line, and that
// rule decides which lines join it), and the most lines a record holds,
// DefaultMaxLines when 0. A record holds at most the parser's maxJoined
// bytes too (the input's max_line_size).
type Multiline struct {
	Rules    []*Rule
	MaxLines int
}

// DefaultMaxLines bounds the lines of a multiline record, as Filebeat's
// and Logstash's multiline max_lines do: a longer trace goes on in the
// next record.
const DefaultMaxLines = 500

// multiline is Multiline as a joiner runs it.
type multiline struct {
	rules    []*Rule
	maxLines int
}

// starts reports whether some rule begins a record with line.
func (m *multiline) starts(line []byte) bool {
	for _, r := range m.rules {
		if _, ok := r.m.start(line); ok {
			return true
		}
	}
	return false
}

// start returns the first rule that begins a record with line.
func (m *multiline) start(line []byte) (*Rule, uint8, bool) {
	for _, r := range m.rules {
		if s, ok := r.m.start(line); ok {
			return r, s, true
		}
	}
	return nil, 0, false
}

// MultilineParsers are the parsers whose lines multiline rules join: each
// line is one line of the program's output. A json or logfmt line is a
// whole event that holds its stack trace in one value.
var MultilineParsers = []string{"raw", "cri", "docker"}

// CheckMultiline reports whether the parser called name takes multiline
// rules.
func CheckMultiline(name string) error {
	if name == "" || slices.Contains(MultilineParsers, name) {
		return nil
	}
	return fmt.Errorf("multiline joins the lines of parser raw, cri or docker, not %s: a %s line is a whole event, whose stack trace is in one value", name, name)
}

// NewRule makes a rule of a start and a continue regular expression; at
// least one is needed. With start alone, a line that matches it begins a
// record and every other line joins it (the OpenTelemetry Collector's
// line_start_pattern). With continue alone, a line that matches it joins
// the record before it and every other line begins one. With both, a line
// that matches start begins a record, one that matches continue joins it,
// and any other ends it and stands alone. A line that matches start always
// begins a record, and a line that continues nothing stands alone.
func NewRule(name string, start, cont *regexp.Regexp) (*Rule, error) {
	if start == nil && cont == nil {
		return nil, errors.New("a multiline rule needs start or continue (a regular expression), or both")
	}
	return &Rule{Name: name, m: userRule{start, cont}}, nil
}

type userRule struct{ startRe, contRe *regexp.Regexp }

func (u userRule) start(line []byte) (uint8, bool) {
	if u.startRe != nil {
		return 0, u.startRe.Match(line)
	}
	return 0, !u.contRe.Match(line)
}

func (u userRule) next(_ uint8, line []byte) (verdict, uint8) {
	if u.startRe != nil && u.startRe.Match(line) {
		return end, 0
	}
	if u.contRe == nil || u.contRe.Match(line) {
		return join, 0
	}
	return end, 0
}

// Builtin returns the built-in rule called name, or nil.
func Builtin(name string) *Rule {
	for _, r := range builtins {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// BuiltinNames lists the built-in rules, for config validation and
// messages.
func BuiltinNames() []string {
	names := make([]string, len(builtins))
	for i, r := range builtins {
		names[i] = r.Name
	}
	return names
}
