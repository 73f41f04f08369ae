package parse

import (
	"errors"

	"github.com/policyrun/policyrun/record"
)

// logfmtParser reads key=value pairs separated by spaces; values may be
// double-quoted with \" and \\ escapes, and a bare key maps to "". Values
// stay strings, as in Fluent Bit's logfmt parser; a policy converts them.
type logfmtParser struct{ stateless }

var (
	errLogfmtQuote = errors.New("logfmt: unterminated quoted value")
	errLogfmtKey   = errors.New("logfmt: empty key")
	errLogfmtEmpty = errors.New("logfmt: no key=value pairs")
)

func (logfmtParser) Parse(a *record.Arena, _ string, line []byte) (*record.Record, error) {
	b := a.BeginMap(8)
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			break
		}
		start := i
		for i < len(line) && line[i] != '=' && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		key := line[start:i]
		if len(key) == 0 {
			b.Finish()
			return unparsed(a, line, errLogfmtKey)
		}
		var val record.Value
		switch {
		case i < len(line) && line[i] == '=' && i+1 < len(line) && line[i+1] == '"':
			i += 2
			a.StartString()
			closed := false
			for i < len(line) {
				c := line[i]
				if c == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\') {
					_ = a.WriteByte(line[i+1])
					i += 2
					continue
				}
				if c == '"' {
					closed = true
					i++
					break
				}
				_ = a.WriteByte(c)
				i++
			}
			val = a.EndString()
			if !closed {
				b.Finish()
				return unparsed(a, line, errLogfmtQuote)
			}
		case i < len(line) && line[i] == '=':
			i++
			vs := i
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				i++
			}
			val = a.NewString(line[vs:i])
		default:
			val = a.NewString(nil)
		}
		b.AddKey(key, val)
		n++
	}
	m := b.Finish()
	if n == 0 {
		return unparsed(a, line, errLogfmtEmpty)
	}
	r := a.NewRecord()
	_ = r.Set(record.Path{}, m)
	r.Commit()
	return r, nil
}
