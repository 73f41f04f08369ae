package record

import (
	"bytes"
	"encoding/base64"
	"strconv"
)

// The OTLP/JSON decoder's scanning: objects by field name, arrays, and
// the scalars of the proto3 JSON mapping (integers as strings or numbers,
// doubles with their special strings, bytes, hex ids, enums).

// fields reads the object at i and calls f for each of its fields that is
// named in names and not null, with the field's number and the position
// of its value; f returns where the value ends. Other fields are
// skipped, as OTLP receivers ignore unknown fields. A field given twice
// (by either name) is an error, as in protojson.
func (d *otlpJSONDecoder) fields(i int, names []jsonName, f func(num, i int) (int, error)) (int, error) {
	b := d.j.b
	i = skipSpace(b, i)
	if i >= len(b) || b[i] != '{' {
		return i, d.want(i, "an object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	var seen uint32
	next := 0 // the field after the last one read
	for {
		if i >= len(b) {
			return i, decodeErr(i, ErrTruncated, "in an object")
		}
		if b[i] != '"' {
			return i, decodeErr(i, ErrSyntax, "expected a string key")
		}
		at := i
		var id, j int
		var err error
		if q := plainName(b, i+1); q > 0 {
			id, j = fieldID(names, b[i+1:q], next), q+1
		} else {
			sl := len(d.a.slab)
			var k Value
			if k, j, err = d.j.str(i); err != nil {
				return j, err
			}
			id = fieldID(names, d.a.raw(k), next)
			d.a.slab = d.a.slab[:sl] // a name with escapes was unescaped there
		}
		name := b[at+1 : j-1]
		if j = skipSpace(b, j); j >= len(b) {
			return j, decodeErr(j, ErrTruncated, "in an object")
		}
		if b[j] != ':' {
			return j, decodeErr(j, ErrSyntax, "expected ':'")
		}
		j = skipSpace(b, j+1)
		switch {
		case id < 0:
			if j, err = d.skip(j, 1); err != nil {
				return j, d.in(err, "."+string(name))
			}
		case seen&(1<<id) != 0:
			return at, d.in(decodeErr(at, ErrSyntax, "duplicate field"), "."+names[id].camel)
		default:
			seen |= 1 << id
			next = id + 1
			if j < len(b) && b[j] == 'n' {
				_, j, err = d.j.literal(j, "null", Value{})
			} else if j >= len(b) {
				err = decodeErr(j, ErrTruncated, "expected a value")
			} else {
				j, err = f(names[id].num, j)
			}
			if err != nil {
				return j, d.in(err, "."+names[id].camel)
			}
		}
		var more bool
		if i, more, err = afterMember(b, j, '}', "an object"); err != nil || !more {
			return i, err
		}
	}
}

// elements reads the array at i and calls f for each element, at its
// first byte; f returns where the element ends.
func (d *otlpJSONDecoder) elements(i int, f func(i int) (int, error)) (int, error) {
	b := d.j.b
	if i >= len(b) || b[i] != '[' {
		return i, d.want(i, "an array")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for k := 0; ; k++ {
		j, err := f(i)
		if err != nil {
			return j, d.in(err, "["+strconv.Itoa(k)+"]")
		}
		var more bool
		if i, more, err = afterMember(b, j, ']', "an array"); err != nil || !more {
			return i, err
		}
	}
}

// afterMember reads what follows the member of an object or an array
// (what) that ends at j: a comma, after which the next member starts at
// next, or the closing byte end, after which the container ends at next.
func afterMember(b []byte, j int, end byte, what string) (next int, more bool, err error) {
	if j = skipSpace(b, j); j >= len(b) {
		return j, false, decodeErr(j, ErrTruncated, "in "+what)
	}
	if b[j] == ',' {
		return skipSpace(b, j+1), true, nil
	}
	if b[j] != end {
		return j, false, decodeErr(j, ErrSyntax, "expected ',' or '"+string(end)+"'")
	}
	return j + 1, false, nil
}

// want is the error for the value at i, which is not what its field takes.
func (d *otlpJSONDecoder) want(i int, what string) error {
	b := d.j.b
	if i >= len(b) {
		return decodeErr(i, ErrTruncated, "expected "+what)
	}
	var got string
	switch c := b[i]; {
	case c == '"':
		got = "a string"
	case c == '{':
		got = "an object"
	case c == '[':
		got = "an array"
	case c == 't' || c == 'f' || c == 'n':
		got = "null"
		if c != 'n' {
			got = strconv.FormatBool(c == 't')
		}
		if _, _, err := d.j.literal(i, got, Value{}); err != nil {
			return err
		}
	case c == '-' || '0' <= c && c <= '9':
		got = "a number"
	default:
		return decodeErr(i, ErrSyntax, "unexpected "+strconv.QuoteRune(rune(c)))
	}
	return decodeErr(i, ErrFieldType, got+", not "+what)
}

// skip reads over the JSON value at i (of an unknown field), which is at
// the given depth.
func (d *otlpJSONDecoder) skip(i, depth int) (int, error) {
	b := d.j.b
	if i = skipSpace(b, i); i >= len(b) {
		return i, decodeErr(i, ErrTruncated, "expected a value")
	}
	switch c := b[i]; c {
	case '"':
		sl := len(d.a.slab)
		_, j, err := d.j.str(i)
		d.a.slab = d.a.slab[:sl]
		return j, err
	case 't':
		_, j, err := d.j.literal(i, "true", Value{})
		return j, err
	case 'f':
		_, j, err := d.j.literal(i, "false", Value{})
		return j, err
	case 'n':
		_, j, err := d.j.literal(i, "null", Value{})
		return j, err
	case '{', '[':
		if depth > d.j.maxDepth {
			return i, depthErr(i, d.j.maxDepth)
		}
		end, what := byte('}'), "an object"
		if c == '[' {
			end, what = ']', "an array"
		}
		if i = skipSpace(b, i+1); i < len(b) && b[i] == end {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(b) {
					return i, decodeErr(i, ErrTruncated, "in an object")
				}
				if b[i] != '"' {
					return i, decodeErr(i, ErrSyntax, "expected a string key")
				}
				sl := len(d.a.slab)
				_, j, err := d.j.str(i)
				d.a.slab = d.a.slab[:sl]
				if err != nil {
					return j, err
				}
				if j = skipSpace(b, j); j >= len(b) {
					return j, decodeErr(j, ErrTruncated, "in an object")
				}
				if b[j] != ':' {
					return j, decodeErr(j, ErrSyntax, "expected ':'")
				}
				i = j + 1
			}
			j, err := d.skip(i, depth+1)
			if err != nil {
				return j, err
			}
			var more bool
			if i, more, err = afterMember(b, j, end, what); err != nil || !more {
				return i, err
			}
		}
	}
	return d.number(i)
}

// str reads a string field.
func (d *otlpJSONDecoder) str(i int) (Value, int, error) {
	if i < len(d.j.b) && d.j.b[i] == '"' {
		return d.j.str(i)
	}
	return Value{}, i, d.want(i, "a string")
}

func (d *otlpJSONDecoder) boolean(i int) (Value, int, error) {
	b := d.j.b
	if i < len(b) && b[i] == 't' {
		return d.j.literal(i, "true", BoolValue(true))
	}
	if i < len(b) && b[i] == 'f' {
		return d.j.literal(i, "false", BoolValue(false))
	}
	return Value{}, i, d.want(i, "a bool")
}

// The base64 encodings protojson reads bytes with: URL-safe when the
// string has '-' or '_', unpadded when its length is not a multiple of 4.
var (
	base64Std    = base64.StdEncoding
	base64StdRaw = base64.StdEncoding.WithPadding(base64.NoPadding)
	base64URL    = base64.URLEncoding
	base64URLRaw = base64.URLEncoding.WithPadding(base64.NoPadding)
)

// bytesValue reads a bytes field (base64) into the slab.
func (d *otlpJSONDecoder) bytesValue(i int) (Value, int, error) {
	a, b := d.a, d.j.b
	if i >= len(b) || b[i] != '"' {
		return Value{}, i, d.want(i, "a base64 string")
	}
	sl := len(a.slab)
	v, j, err := d.j.str(i)
	if err != nil {
		return Value{}, j, err
	}
	s := a.raw(v)
	if len(s) == 0 { // empty, not nil, as DecodeOTLP makes it
		a.slab = a.slab[:sl]
		return strValue(Bytes, d.j.ref, d.j.base+uint32(i), 0), j, nil
	}
	enc := base64Std
	url := bytes.ContainsAny(s, "-_")
	switch {
	case url && len(s)%4 != 0:
		enc = base64URLRaw
	case url:
		enc = base64URL
	case len(s)%4 != 0:
		enc = base64StdRaw
	}
	off := len(a.slab)
	out, err := enc.AppendDecode(a.slab, s)
	if err != nil {
		a.slab = a.slab[:sl]
		return Value{}, i, decodeErr(i, ErrSyntax, "not base64")
	}
	a.slab = out
	n := len(out) - off
	if off != sl { // after the string's unescaped copy: move down over it
		copy(a.slab[sl:], a.slab[off:])
		a.slab, off = a.slab[:sl+n], sl
	}
	return strValue(Bytes, 0, uint32(off), uint32(n)), j, nil
}

// id reads a trace or span id: hex of the id's length, in either case,
// made lower-case, or "" for none.
func (d *otlpJSONDecoder) id(i int, f *ViewField) (Value, int, error) {
	a, b := d.a, d.j.b
	if i >= len(b) || b[i] != '"' {
		return Value{}, i, d.want(i, "a hex string")
	}
	v, j, err := d.j.str(i)
	if err != nil {
		return Value{}, j, err
	}
	s := a.raw(v)
	if len(s) == 0 {
		return strValue(String, 0, 0, 0), j, nil
	}
	var class byte
	for _, c := range s {
		class |= hexClass[c]
	}
	if class&hexBad != 0 {
		return Value{}, i, decodeErr(i, ErrSyntax, shortText(b[i:j])+" is not hex")
	}
	upper := class&hexUpper != 0
	if len(s) != 2*f.HexLen {
		if len(s)%2 == 1 {
			return Value{}, i, decodeErr(i, ErrIDLength, strconv.Itoa(len(s))+" hex digits, not "+strconv.Itoa(2*f.HexLen))
		}
		return Value{}, i, decodeErr(i, ErrIDLength, strconv.Itoa(len(s)/2)+" bytes, not "+strconv.Itoa(f.HexLen))
	}
	if upper {
		off := len(a.slab)
		a.slab = appendLowerHex(a.slab, s)
		v = strValue(String, 0, uint32(off), uint32(len(s)))
	}
	v.h |= flagPlain
	return v, j, nil
}
