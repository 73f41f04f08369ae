package record

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"
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
	d := otlpJSONDecoder{a: a, recs: dst, recLimit: a.Limits.recordLimit(n0)}
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
	// recLimit: as otlpDecoder's.
	recLimit int
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

// fieldID returns the index in names of the field named key, or -1.
// Encoders write a message's fields in one order, which names follows:
// the field after the one before (next) is tried first.
func fieldID(names []jsonName, key []byte, next int) int {
	if next < len(names) && string(key) == names[next].camel {
		return next
	}
	for i := range names {
		if string(key) == names[i].camel || string(key) == names[i].proto {
			return i
		}
	}
	return -1
}

// plainName returns where the string whose bytes start at i ends (its
// closing quote) when it is printable ASCII without escapes, as field
// names are but in odd requests, else -1: such a name is matched where it
// is, without the string decoder.
func plainName(b []byte, i int) int {
	if e := strSpecial(b, i); e < len(b) && b[e] == '"' {
		return e
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
		if key, val, j, ok := d.quickKeyValue(i); ok {
			d.a.scratch = append(d.a.scratch, key, val)
			d.keySig()
			return j, nil
		}
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
		d.a.scratch = append(d.a.scratch, key, val)
		d.keySig()
		return j, nil
	})
}

// keySig sets the signature of the key just put on the scratch. It is
// set there, not on the key before: a key that lives across keySig's call
// is kept on the stack, and setting a byte of it there and then copying
// it whole costs a failed store-to-load forward for each key.
func (d *otlpJSONDecoder) keySig() {
	k := &d.a.scratch[len(d.a.scratch)-2]
	k.setSig(keySig(d.a.raw(*k)))
}

// quickKeyValue reads the KeyValue at i when it is in the layout that
// OTLP/JSON encoders write, {"key":"…","value":{"stringValue":…}} with no
// space and a string, int, bool or double value, with the same calls for
// the key and the value as the general path but none for the objects'
// fields. Anything else (space, other names or order, null, a container,
// an error) is ok false, with nothing taken: the general path reads it
// from i, and says what is wrong.
func (d *otlpJSONDecoder) quickKeyValue(i int) (key, val Value, j int, ok bool) {
	b, sl := d.j.b, len(d.a.slab)
	if len(b)-i < 8 || le64(b[i:]) != kvHead {
		return
	}
	key, j, err := d.j.str(i + 7)
	// j-1 is the key's closing quote: `","value":{"`, in two words, then
	// a type name (the longest 14 bytes, read as two words).
	if err != nil || len(b)-j < 11+16 || le64(b[j-1:]) != kvMid || le64(b[j+7:])&0xffffffff != kvMidEnd {
		d.a.slab = d.a.slab[:sl]
		return Value{}, Value{}, i, false
	}
	j += 11
	switch w := le64(b[j:]); {
	case w == kvString && le64(b[j+6:]) == kvStringEnd:
		val, j, err = d.j.str(j + len(`stringValue":`))
	case w == kvInt && b[j+8] == '"' && b[j+9] == ':':
		var u uint64
		u, j, err = d.integer(j+len(`intValue":`), int64Type)
		val = IntValue(int64(u))
	case w == kvBool && b[j+8] == 'e' && b[j+9] == '"' && b[j+10] == ':':
		val, j, err = d.boolean(j + len(`boolValue":`))
	case w == kvDouble && le64(b[j+5:]) == kvDoubleEnd:
		var f float64
		f, j, err = d.double(j + len(`doubleValue":`))
		val = FloatValue(f)
	default:
		err = ErrSyntax
	}
	if err != nil || len(b)-j < 2 || b[j] != '}' || b[j+1] != '}' {
		d.a.slab = d.a.slab[:sl]
		return Value{}, Value{}, i, false
	}
	return key, val, j + 2, true
}

// The words quickKeyValue compares (le64 of the text).
var (
	kvHead      = le64([]byte(`{"key":"`))
	kvMid       = le64([]byte(`","value`))
	kvMidEnd    = le64([]byte(`":{"....`)) & 0xffffffff
	kvString    = le64([]byte(`stringVa`))
	kvStringEnd = le64([]byte(`Value":"`))
	kvInt       = le64([]byte(`intValue`))
	kvBool      = le64([]byte(`boolValu`))
	kvDouble    = le64([]byte(`doubleVa`))
	kvDoubleEnd = le64([]byte(`eValue":`))
)

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

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
	if d.recLimit > 0 && len(d.recs) >= d.recLimit {
		return i, a.Limits.tooMany(i)
	}
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
	d.recs = append(d.recs, a.newOTLPRecord(d.o.fixedMap(rootKeys[:], vals[:]), int64(unix), int64(obs)))
	return j, nil
}
