package record

import (
	"bytes"
	"encoding/base64"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// The OTLP/JSON decoder's scanning: objects by field name, arrays, and
// the scalars of the proto3 JSON mapping (integers as strings or numbers,
// doubles with their special strings, bytes, hex ids, enums).

// fields reads the object at i and calls f for each of its fields that is
// named in names and not null, with the field's index in names and the
// position of its value; f returns where the value ends. Other fields are
// skipped, as OTLP receivers ignore unknown fields. A field given twice
// (by either name) is an error, as in protojson.
func (d *otlpJSONDecoder) fields(i int, names []jsonName, f func(id, i int) (int, error)) (int, error) {
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
			id, j = fieldID(names, b[i+1:q]), q+1
		} else {
			sl := len(d.a.slab)
			var k Value
			if k, j, err = d.j.str(i); err != nil {
				return j, err
			}
			id = fieldID(names, d.a.raw(k))
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
			if j < len(b) && b[j] == 'n' {
				_, j, err = d.j.literal(j, "null", Value{})
			} else if j >= len(b) {
				err = decodeErr(j, ErrTruncated, "expected a value")
			} else {
				j, err = f(id, j)
			}
			if err != nil {
				return j, d.in(err, "."+names[id].camel)
			}
		}
		if j = skipSpace(b, j); j >= len(b) {
			return j, decodeErr(j, ErrTruncated, "in an object")
		}
		if b[j] == ',' {
			i = skipSpace(b, j+1)
			continue
		}
		if b[j] != '}' {
			return j, decodeErr(j, ErrSyntax, "expected ',' or '}'")
		}
		return j + 1, nil
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
		if j = skipSpace(b, j); j >= len(b) {
			return j, decodeErr(j, ErrTruncated, "in an array")
		}
		if b[j] == ',' {
			i = skipSpace(b, j+1)
			continue
		}
		if b[j] != ']' {
			return j, decodeErr(j, ErrSyntax, "expected ',' or ']'")
		}
		return j + 1, nil
	}
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
			return i, decodeErr(i, ErrDepth, "more than "+strconv.Itoa(d.j.maxDepth)+" levels")
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
			if j = skipSpace(b, j); j >= len(b) {
				return j, decodeErr(j, ErrTruncated, "in "+what)
			}
			if b[j] == ',' {
				i = skipSpace(b, j+1)
				continue
			}
			if b[j] != end {
				return j, decodeErr(j, ErrSyntax, "expected ',' or '"+string(end)+"'")
			}
			return j + 1, nil
		}
	}
	return d.number(i)
}

// number reads over the JSON number at i.
func (d *otlpJSONDecoder) number(i int) (int, error) {
	b := d.j.b
	if i < len(b) && b[i] != '-' && (b[i] < '0' || b[i] > '9') {
		return i, decodeErr(i, ErrSyntax, "unexpected "+strconv.QuoteRune(rune(b[i])))
	}
	end, ok := numberEnd(b, i)
	if !ok {
		if end >= len(b) {
			return end, decodeErr(end, ErrTruncated, "in a number")
		}
		return end, decodeErr(end, ErrSyntax, "invalid number")
	}
	return end, nil
}

// numberEnd returns the end of the JSON number at i, or where the number
// breaks JSON's grammar and false.
func numberEnd(b []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	var ok bool
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	default:
		if b[i] < '1' || b[i] > '9' {
			return i, false
		}
		i, _ = digits(i)
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}

// What jsonInt finds.
const (
	intOK       = iota
	intFraction // not an integer
	intRange    // an integer too large for uint64
)

// jsonInt reads the text of a JSON number as protojson reads an integer
// field: any number whose value is an integer (10, 1e1, 10.0, 0.1e2, but
// no more than 20 digits before the exponent's shift), as its sign and
// magnitude.
func jsonInt(s []byte) (neg bool, mag uint64, status int) {
	i := 0
	if s[0] == '-' {
		neg, i = true, 1
	}
	start := i
	if s[i] == '0' {
		start++
	}
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	intp := s[start:i]
	var frac []byte
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for i = j; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		}
		frac = bytes.TrimRight(s[j:i], "0")
	}
	exp := 0
	if i < len(s) {
		i++ // 'e' or 'E'
		eneg := s[i] == '-'
		if s[i] == '-' || s[i] == '+' {
			i++
		}
		for ; i < len(s); i++ {
			if exp < 1<<20 {
				exp = exp*10 + int(s[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	if len(intp) == 0 && len(frac) == 0 {
		return false, 0, intOK
	}
	var digits, more []byte
	n := 0 // zeros to add after them
	if exp >= 0 {
		if len(frac) > exp {
			return neg, 0, intFraction
		}
		if len(intp)+exp > 20 {
			return neg, 0, intRange
		}
		digits, more, n = intp, frac, exp-len(frac)
	} else {
		at := len(intp) + exp
		if len(frac) > 0 || at < 0 {
			return neg, 0, intFraction
		}
		for _, c := range intp[at:] {
			if c != '0' {
				return neg, 0, intFraction
			}
		}
		digits = intp[:at]
	}
	for _, part := range [2][]byte{digits, more} {
		for _, c := range part {
			if mag, status = mulAdd(mag, uint64(c-'0')); status != intOK {
				return neg, 0, status
			}
		}
	}
	for ; n > 0; n-- {
		if mag, status = mulAdd(mag, 0); status != intOK {
			return neg, 0, status
		}
	}
	return neg, mag, intOK
}

func mulAdd(mag, digit uint64) (uint64, int) {
	hi, lo := bits.Mul64(mag, 10)
	lo, carry := bits.Add64(lo, digit, 0)
	if hi != 0 || carry != 0 {
		return 0, intRange
	}
	return lo, intOK
}

// An integer field's type: its size in bits and whether it is signed.
type intType struct {
	bits   int
	signed bool
	name   string
}

var (
	uint64Type = intType{64, false, "a uint64"}
	uint32Type = intType{32, false, "a uint32"}
	int64Type  = intType{64, true, "an int64"}
	enumType   = intType{32, true, "a SeverityNumber"}
)

// integer reads an integer field: a JSON number, or a string holding one
// (as proto3 JSON writes 64-bit integers). It returns the value's bits.
func (d *otlpJSONDecoder) integer(i int, t intType) (uint64, int, error) {
	b := d.j.b
	var text []byte
	end, sl := i, len(d.a.slab)
	switch {
	case i < len(b) && b[i] == '"':
		v, j, err := d.j.str(i)
		if err != nil {
			return 0, j, err
		}
		end, text = j, d.a.raw(v)
		if e, ok := numberEnd(text, 0); !ok || e != len(text) {
			return 0, i, decodeErr(i, ErrFieldType, shortText(b[i:end])+", not "+t.name)
		}
	case i < len(b) && (b[i] == '-' || '0' <= b[i] && b[i] <= '9'):
		var err error
		if end, err = d.number(i); err != nil {
			return 0, end, err
		}
		text = b[i:end]
	default:
		return 0, i, d.want(i, t.name)
	}
	neg, mag, status := jsonInt(text)
	d.a.slab = d.a.slab[:sl] // a string with escapes was unescaped there
	max := uint64(math.MaxUint64) >> (64 - t.bits)
	if t.signed {
		max >>= 1
		if neg {
			max++
		}
	} else if neg && mag != 0 {
		status = intRange
	}
	if status == intOK && mag > max {
		status = intRange
	}
	switch status {
	case intFraction:
		return 0, i, decodeErr(i, ErrFieldType, shortText(b[i:end])+", not "+t.name)
	case intRange:
		return 0, i, decodeErr(i, ErrNumberRange, shortText(b[i:end])+", not "+t.name)
	}
	if neg {
		mag = -mag
	}
	return mag, end, nil
}

// shortText is the JSON text of a value, for an error message.
func shortText(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
}

// severityNumber reads a SeverityNumber: a number or an enum value's name.
func (d *otlpJSONDecoder) severityNumber(i int) (int64, int, error) {
	b := d.j.b
	if i >= len(b) || b[i] != '"' {
		u, j, err := d.integer(i, enumType)
		return int64(int32(u)), j, err
	}
	sl := len(d.a.slab)
	v, j, err := d.j.str(i)
	if err != nil {
		return 0, j, err
	}
	n, ok := severityByName(d.a.str(v))
	d.a.slab = d.a.slab[:sl]
	if !ok {
		return 0, i, decodeErr(i, ErrFieldType, shortText(b[i:j])+", not "+enumType.name)
	}
	return n, j, nil
}

var severityLevels = [...]string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}

// severityByName returns the number of a SeverityNumber's name
// (SEVERITY_NUMBER_INFO2 is 10).
func severityByName(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "SEVERITY_NUMBER_")
	if !ok {
		return 0, false
	}
	if s == "UNSPECIFIED" {
		return 0, true
	}
	for k, level := range severityLevels {
		if rest, ok := strings.CutPrefix(s, level); ok {
			switch rest {
			case "":
				return int64(1 + 4*k), true
			case "2", "3", "4":
				return int64(4*k + int(rest[0]-'0')), true
			}
			return 0, false
		}
	}
	return 0, false
}

// double reads a double: a number, a string holding one, or "NaN",
// "Infinity" or "-Infinity".
func (d *otlpJSONDecoder) double(i int) (float64, int, error) {
	b := d.j.b
	var text []byte
	end, sl := i, len(d.a.slab)
	defer func() { d.a.slab = d.a.slab[:sl] }()
	switch {
	case i < len(b) && b[i] == '"':
		v, j, err := d.j.str(i)
		if err != nil {
			return 0, j, err
		}
		end, text = j, d.a.raw(v)
		switch string(text) {
		case "NaN":
			return math.NaN(), end, nil
		case "Infinity":
			return math.Inf(1), end, nil
		case "-Infinity":
			return math.Inf(-1), end, nil
		}
		if e, ok := numberEnd(text, 0); !ok || e != len(text) {
			return 0, i, decodeErr(i, ErrFieldType, shortText(b[i:end])+", not a double")
		}
	case i < len(b) && (b[i] == '-' || '0' <= b[i] && b[i] <= '9'):
		var err error
		if end, err = d.number(i); err != nil {
			return 0, end, err
		}
		text = b[i:end]
	default:
		return 0, i, d.want(i, "a double")
	}
	f, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64)
	if err != nil {
		return 0, i, decodeErr(i, ErrNumberRange, shortText(b[i:end])+", not a double")
	}
	return f, end, nil
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
	upper := false
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
		case 'A' <= c && c <= 'F':
			upper = true
		default:
			return Value{}, i, decodeErr(i, ErrSyntax, shortText(b[i:j])+" is not hex")
		}
	}
	if len(s) != 2*f.HexLen {
		if len(s)%2 == 1 {
			return Value{}, i, decodeErr(i, ErrIDLength, strconv.Itoa(len(s))+" hex digits, not "+strconv.Itoa(2*f.HexLen))
		}
		return Value{}, i, decodeErr(i, ErrIDLength, strconv.Itoa(len(s)/2)+" bytes, not "+strconv.Itoa(f.HexLen))
	}
	if upper {
		off := len(a.slab)
		for _, c := range s {
			if 'A' <= c && c <= 'F' {
				c += 'a' - 'A'
			}
			a.slab = append(a.slab, c)
		}
		v = strValue(String, 0, uint32(off), uint32(len(s)))
	}
	v.h |= flagPlain
	return v, j, nil
}
