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

// OTLP/JSON is read in one pass straight into the arena, as the protobuf
// is: the same records, the JSON's strings viewed where they have no
// escapes. JSON's object keys may come in any order, so a group's records
// are made before its resource or scope may be known: their slots hold a
// placeholder until the group's object ends (see resourceLogs).

// DecodeOTLPJSON decodes an ExportLogsServiceRequest in OTLP/JSON (the
// proto3 JSON mapping with OTLP's rules), appending one record per
// LogRecord to dst: the records DecodeOTLP makes from the protobuf of the
// same request, with the same view, key order, shared resources and
// scopes, and time. Strings point into req (Referenced: keep req unchanged
// until the arena's Reset) unless they have escapes, or into the arena
// (Owned).
//
// It reads what protojson reads: lowerCamelCase names and the proto
// names; 64-bit integers as strings or numbers, and any number that is an
// integer (1e3); enums as numbers or names; bytes as base64, standard or
// URL-safe, padded or not; doubles as numbers, strings holding numbers,
// "NaN", "Infinity" and "-Infinity"; null for an unset field. Trace and
// span ids are hex (either case), as OTLP says, where protojson reads
// base64. Unknown fields are skipped. A field given twice, or an AnyValue
// with two values, is an error, as in protojson.
//
// A request that does not decode adds no record: the error, a
// *DecodeError, says what, at which byte, and in Detail where in the
// request (resourceLogs[0].scopeLogs[1].logRecords[3].traceId: …).
func (a *Arena) DecodeOTLPJSON(req []byte, mode Mode, dst []*Record) ([]*Record, error) {
	if len(req) > math.MaxUint32 || mode == Owned && len(a.slab)+len(req) > math.MaxUint32 {
		return dst, decodeErr(0, ErrTooLarge, "")
	}
	m, nrec, n0 := a.mark(), a.nrec, len(dst)
	d := otlpJSONDecoder{a: a, recs: dst}
	d.j = jsonDecoder{a: a, b: req, maxDepth: a.Limits.maxDepth(), bigFloat: true}
	if mode == Owned {
		d.j.base = uint32(len(a.slab))
		a.slab = append(a.slab, req...)
		d.j.b = a.slab[d.j.base:len(a.slab):len(a.slab)]
	} else {
		d.j.ref = a.addBuf(req)
	}
	d.o = otlpDecoder{a: a, kref: a.addBuf(viewKeys), maxDepth: d.j.maxDepth}
	if err := d.request(); err != nil {
		a.rollback(m)
		a.nrec = nrec
		clear(d.recs[n0:])
		return d.recs[:n0], d.pathErr(err)
	}
	return d.recs, nil
}

type otlpJSONDecoder struct {
	a    *Arena
	j    jsonDecoder // reads strings and literals, and says where strings live
	o    otlpDecoder // builds the view's maps (fixedMap, finish)
	recs []*Record
	// path is where an error is, innermost part first: each field and
	// element the error returns through adds itself.
	path []string
}

// jsonName is a field of an OTLP message in JSON: its lowerCamelCase name,
// which OTLP/JSON writes and errors say, and its proto name, which
// protojson reads too.
type jsonName struct{ camel, proto string }

// The fields of each message, in the order of their ids below.
var (
	requestJSON      = []jsonName{{"resourceLogs", "resource_logs"}}
	resourceLogsJSON = []jsonName{{"resource", "resource"}, {"scopeLogs", "scope_logs"}, {"schemaUrl", "schema_url"}}
	resourceJSON     = []jsonName{{"attributes", "attributes"}, {"droppedAttributesCount", "dropped_attributes_count"}}
	scopeLogsJSON    = []jsonName{{"scope", "scope"}, {"logRecords", "log_records"}, {"schemaUrl", "schema_url"}}
	scopeJSON        = []jsonName{{"name", "name"}, {"version", "version"}, {"attributes", "attributes"},
		{"droppedAttributesCount", "dropped_attributes_count"}}
	logRecordJSON = []jsonName{{"timeUnixNano", "time_unix_nano"}, {"observedTimeUnixNano", "observed_time_unix_nano"},
		{"severityNumber", "severity_number"}, {"severityText", "severity_text"}, {"body", "body"},
		{"attributes", "attributes"}, {"droppedAttributesCount", "dropped_attributes_count"}, {"flags", "flags"},
		{"traceId", "trace_id"}, {"spanId", "span_id"}, {"eventName", "event_name"}}
	keyValueJSON = []jsonName{{"key", "key"}, {"value", "value"}}
	anyValueJSON = []jsonName{{"stringValue", "string_value"}, {"boolValue", "bool_value"}, {"intValue", "int_value"},
		{"doubleValue", "double_value"}, {"arrayValue", "array_value"}, {"kvlistValue", "kvlist_value"},
		{"bytesValue", "bytes_value"}}
	valuesJSON = []jsonName{{"values", "values"}}
)

// The ids of the fields of a LogRecord and of an AnyValue (indexes in
// logRecordJSON and anyValueJSON).
const (
	lrTime = iota
	lrObserved
	lrSeverityNumber
	lrSeverityText
	lrBody
	lrAttributes
	lrDropped
	lrFlags
	lrTraceID
	lrSpanID
	lrEventName
)

const (
	avString = iota
	avBool
	avInt
	avDouble
	avArray
	avKvlist
	avBytes
)

func fieldID(names []jsonName, key []byte) int {
	for i := range names {
		if string(key) == names[i].camel || string(key) == names[i].proto {
			return i
		}
	}
	return -1
}

// in adds a part to the path of err, which is returning through it.
func (d *otlpJSONDecoder) in(err error, part string) error {
	d.path = append(d.path, part)
	return err
}

// pathErr puts the path of err in front of its detail.
func (d *otlpJSONDecoder) pathErr(err error) error {
	de, ok := err.(*DecodeError)
	if !ok || len(d.path) == 0 {
		return err
	}
	var sb strings.Builder
	for i := len(d.path) - 1; i >= 0; i-- {
		sb.WriteString(d.path[i])
	}
	p := strings.TrimPrefix(sb.String(), ".")
	if de.Detail != "" {
		p += ": " + de.Detail
	}
	de.Detail = p
	return de
}

func (d *otlpJSONDecoder) request() error {
	b := d.j.b
	i := skipSpace(b, 0)
	if i < len(b) && b[i] != '{' && startsJSONValue(b[i]) {
		return decodeErr(i, ErrNotMap, "an OTLP/JSON request is an object")
	}
	j, err := d.fields(i, requestJSON, func(_, i int) (int, error) {
		return d.elements(i, d.resourceLogs)
	})
	if err != nil {
		return err
	}
	if j = skipSpace(b, j); j != len(b) {
		return decodeErr(j, ErrTrailing, "")
	}
	return nil
}

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
		at, sl := i, len(d.a.slab)
		k, j, err := d.j.str(i)
		if err != nil {
			return j, err
		}
		id := fieldID(names, d.a.raw(k))
		d.a.slab = d.a.slab[:sl] // a name with escapes was unescaped there
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

// anyValue reads an AnyValue at i; depth is the depth an array or kvlist
// in it would have, as in the protobuf decoder. An AnyValue with no value
// is null.
func (d *otlpJSONDecoder) anyValue(i, depth int) (Value, int, error) {
	v, set := NullValue(), false
	j, err := d.fields(i, anyValueJSON, func(id, i int) (int, error) {
		if set {
			return i, decodeErr(i, ErrSyntax, "a second value in one AnyValue")
		}
		set = true
		var err error
		switch id {
		case avString:
			v, i, err = d.str(i)
		case avBool:
			v, i, err = d.boolean(i)
		case avInt:
			var u uint64
			u, i, err = d.integer(i, int64Type)
			v = IntValue(int64(u))
		case avDouble:
			var f float64
			f, i, err = d.double(i)
			v = FloatValue(f)
		case avBytes:
			v, i, err = d.bytesValue(i)
		default:
			if depth > d.j.maxDepth {
				return i, decodeErr(i, ErrDepth, "more than "+strconv.Itoa(d.j.maxDepth)+" levels")
			}
			v, i, err = d.container(i, id == avKvlist, depth)
		}
		return i, err
	})
	return v, j, err
}

// container reads an ArrayValue or a KeyValueList at i (both have their
// elements in "values").
func (d *otlpJSONDecoder) container(i int, kvlist bool, depth int) (Value, int, error) {
	start := len(d.a.scratch)
	j, err := d.fields(i, valuesJSON, func(_, i int) (int, error) {
		if kvlist {
			return d.keyValues(i, depth+1)
		}
		return d.elements(i, func(i int) (int, error) {
			v, j, err := d.anyValue(i, depth+1)
			d.a.scratch = append(d.a.scratch, v)
			return j, err
		})
	})
	if err != nil {
		return Value{}, j, err
	}
	if kvlist {
		return d.o.finish(Map, start), j, nil
	}
	return d.o.finish(Array, start), j, nil
}

// keyValues reads an array of KeyValue onto the scratch, their values at
// depth.
func (d *otlpJSONDecoder) keyValues(i, depth int) (int, error) {
	return d.elements(i, func(i int) (int, error) {
		key, val := strValue(String, 0, 0, 0), NullValue()
		j, err := d.fields(i, keyValueJSON, func(id, i int) (int, error) {
			var err error
			if id == 0 {
				key, i, err = d.str(i)
			} else {
				val, i, err = d.anyValue(i, depth)
			}
			return i, err
		})
		if err != nil {
			return j, err
		}
		key.setSig(keySig(d.a.raw(key)))
		d.a.scratch = append(d.a.scratch, key, val)
		return j, nil
	})
}

// attributes reads a repeated KeyValue field into a map.
func (d *otlpJSONDecoder) attributes(i int, m *Value) (int, error) {
	start := len(d.a.scratch)
	j, err := d.keyValues(i, 3)
	if err == nil {
		*m = d.o.finish(Map, start)
	}
	return j, err
}

func (d *otlpJSONDecoder) emptyMap() Value {
	return containerValue(Map, uint32(len(d.a.nodes)), 0)
}

func (d *otlpJSONDecoder) resourceLogs(i int) (int, error) {
	first := len(d.recs)
	var vals [numResourceFields]Value
	vals[vResAttributes], vals[vResDropped], vals[vResSchemaURL] = d.emptyMap(), IntValue(0), strValue(String, 0, 0, 0)
	j, err := d.fields(i, resourceLogsJSON, func(id, i int) (int, error) {
		var err error
		switch id {
		case 0:
			i, err = d.fields(i, resourceJSON, func(id, i int) (int, error) {
				if id == 0 {
					return d.attributes(i, &vals[vResAttributes])
				}
				u, j, err := d.integer(i, uint32Type)
				vals[vResDropped] = IntValue(int64(u))
				return j, err
			})
		case 1:
			i, err = d.elements(i, d.scopeLogs)
		case 2:
			vals[vResSchemaURL], i, err = d.str(i)
		}
		return i, err
	})
	if err != nil {
		return j, err
	}
	// Resource and scope are the last two keys of a record's root.
	res := d.o.fixedMap(resourceKeys[:], vals[:])
	for _, r := range d.recs[first:] {
		d.a.nodes[int(r.root.off())+2*int(r.root.n())-3] = res
	}
	return j, nil
}

func (d *otlpJSONDecoder) scopeLogs(i int) (int, error) {
	first := len(d.recs)
	var vals [numScopeFields]Value
	empty := strValue(String, 0, 0, 0)
	vals[vScopeName], vals[vScopeVersion], vals[vScopeSchemaURL] = empty, empty, empty
	vals[vScopeAttributes], vals[vScopeDropped] = d.emptyMap(), IntValue(0)
	j, err := d.fields(i, scopeLogsJSON, func(id, i int) (int, error) {
		var err error
		switch id {
		case 0:
			i, err = d.fields(i, scopeJSON, func(id, i int) (int, error) {
				var err error
				switch id {
				case 0:
					vals[vScopeName], i, err = d.str(i)
				case 1:
					vals[vScopeVersion], i, err = d.str(i)
				case 2:
					i, err = d.attributes(i, &vals[vScopeAttributes])
				case 3:
					var u uint64
					u, i, err = d.integer(i, uint32Type)
					vals[vScopeDropped] = IntValue(int64(u))
				}
				return i, err
			})
		case 1:
			i, err = d.elements(i, d.logRecord)
		case 2:
			vals[vScopeSchemaURL], i, err = d.str(i)
		}
		return i, err
	})
	if err != nil {
		return j, err
	}
	scope := d.o.fixedMap(scopeKeys[:], vals[:])
	for _, r := range d.recs[first:] {
		d.a.nodes[int(r.root.off())+2*int(r.root.n())-1] = scope
	}
	return j, nil
}

// logRecord reads a LogRecord into a record, whose resource and scope are
// set when their groups end.
func (d *otlpJSONDecoder) logRecord(i int) (int, error) {
	a := d.a
	var (
		vals                   [numRootFields]Value
		unix, obs              uint64
		sevNum, flags, dropped int64
	)
	empty := strValue(String, 0, 0, 0)
	vals[vSeverityText], vals[vEventName], vals[vTraceID], vals[vSpanID] = empty, empty, empty, empty
	j, err := d.fields(i, logRecordJSON, func(id, i int) (int, error) {
		var err error
		var u uint64
		switch id {
		case lrTime:
			unix, i, err = d.integer(i, uint64Type)
		case lrObserved:
			obs, i, err = d.integer(i, uint64Type)
		case lrSeverityNumber:
			sevNum, i, err = d.severityNumber(i)
		case lrSeverityText:
			vals[vSeverityText], i, err = d.str(i)
		case lrBody:
			vals[vBody], i, err = d.anyValue(i, 2)
		case lrAttributes:
			i, err = d.attributes(i, &vals[vAttributes])
		case lrDropped:
			u, i, err = d.integer(i, uint32Type)
			dropped = int64(u)
		case lrFlags:
			u, i, err = d.integer(i, uint32Type)
			flags = int64(u)
		case lrTraceID:
			vals[vTraceID], i, err = d.id(i, &rootView[vTraceID])
		case lrSpanID:
			vals[vSpanID], i, err = d.id(i, &rootView[vSpanID])
		case lrEventName:
			vals[vEventName], i, err = d.str(i)
		}
		return i, err
	})
	if err != nil {
		return j, err
	}
	if vals[vAttributes].kind() == Absent {
		vals[vAttributes] = d.emptyMap()
	}
	vals[vSeverityNumber] = IntValue(sevNum)
	vals[vObservedTime] = TimestampValue(int64(obs))
	vals[vFlags] = IntValue(flags)
	vals[vDropped] = IntValue(dropped)
	vals[vResource], vals[vScope] = NullValue(), NullValue() // set by the groups
	root := d.o.fixedMap(rootKeys[:], vals[:])
	r := a.newRecord()
	r.base, r.root = root, root
	r.layout = layoutOTLP
	t := int64(unix)
	if unix == 0 {
		t = int64(obs)
		r.timeFmt = otlpTimeUnset
	}
	r.time, r.baseTime = t, t
	d.recs = append(d.recs, r)
	return j, nil
}
