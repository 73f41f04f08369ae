// Package csvtext is the policy built-in parse_csv: the one scanner of a
// CSV record behind the VM's and the Lua backend's. It returns fields as
// substrings of the input where it can, so that the VM copies each field
// once, into the arena.
package csvtext

import "strings"

// Fields scans the fields of one CSV record (RFC 4180, with any one-byte
// separator). Use Init, then Next until it returns false, then Err.
type Fields struct {
	s       string
	sep     byte
	more    bool // a field is left (the record ended on a separator or has not started)
	bad     bool
	raw     string
	escaped bool
}

// Init starts scanning s with the separator sep. One trailing "\n" or
// "\r\n" is not part of the record. It fails when sep is not one byte, or
// is a quote or a line break.
func (f *Fields) Init(s, sep string) bool {
	*f = Fields{}
	if len(sep) != 1 || sep[0] == '"' || sep[0] == '\n' || sep[0] == '\r' {
		f.bad = true
		return false
	}
	if strings.HasSuffix(s, "\n") {
		s = strings.TrimSuffix(s[:len(s)-1], "\r")
	}
	f.s, f.sep, f.more = s, sep[0], true
	return true
}

// Count is an upper bound of the number of fields, for sizing an array.
func (f *Fields) Count() int { return strings.Count(f.s, string(f.sep)) + 1 }

// Next moves to the next field and reports whether there is one; false
// with Err set means the record is malformed.
func (f *Fields) Next() bool {
	if f.bad || !f.more {
		return false
	}
	s := f.s
	if strings.HasPrefix(s, `"`) {
		i, escaped := 1, false
		for {
			j := strings.IndexByte(s[i:], '"')
			if j < 0 {
				f.bad = true // an unterminated quote
				return false
			}
			i += j
			if i+1 < len(s) && s[i+1] == '"' {
				escaped = true
				i += 2
				continue
			}
			break
		}
		f.raw, f.escaped = s[1:i], escaped
		rest := s[i+1:]
		switch {
		case rest == "":
			f.more = false
		case rest[0] == f.sep:
			rest = rest[1:]
		default:
			f.bad = true // text after a closing quote
			return false
		}
		f.s = rest
		return true
	}
	i := strings.IndexByte(s, f.sep)
	field := s
	if i >= 0 {
		field, f.s = s[:i], s[i+1:]
	} else {
		f.s, f.more = "", false
	}
	if strings.ContainsAny(field, "\r\n") {
		f.bad = true // a line break outside quotes: another record
		return false
	}
	f.raw, f.escaped = field, false
	return true
}

// Err reports whether the record is malformed.
func (f *Fields) Err() bool { return f.bad }

// Plain reports whether the field is Raw as it is (no doubled quotes).
func (f *Fields) Plain() bool { return !f.escaped }

// Raw is the field's text: inside its quotes when it is quoted, doubled
// quotes still doubled unless Plain.
func (f *Fields) Raw() string { return f.raw }

// AppendValue appends the field with its doubled quotes undoubled.
func (f *Fields) AppendValue(dst []byte) []byte {
	s := f.raw
	for {
		i := strings.Index(s, `""`)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i+1]...)
		s = s[i+2:]
	}
}
