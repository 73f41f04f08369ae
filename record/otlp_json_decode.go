package record

import (
	"encoding/binary"
	"math"
	"slices"
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
// which OTLP/JSON writes and errors say, its proto name, which protojson
// reads too, and its number, which the decoder switches on.
type jsonName struct {
	camel, proto string
	num          int
}

// jsonNames are the JSON names of m's fields, or of those of nums, in
// the order of m's fields.
func jsonNames(m *protoMessage, nums ...int) []jsonName {
	var out []jsonName
	for _, f := range m.fields {
		if len(nums) == 0 || slices.Contains(nums, f.num) {
			out = append(out, jsonName{f.json, f.name, f.num})
		}
	}
	return out
}

// The fields the decoder reads of each message (a Resource's entity_refs,
// which the view leaves out, are skipped as unknown).
var (
	requestJSON      = jsonNames(&requestMsg)
	resourceLogsJSON = jsonNames(&resourceLogsMsg)
	resourceJSON     = jsonNames(&resourceMsg, resAttributes, resDropped)
	scopeLogsJSON    = jsonNames(&scopeLogsMsg)
	scopeJSON        = jsonNames(&scopeMsg)
	logRecordJSON    = jsonNames(&logRecordMsg)
	keyValueJSON     = jsonNames(&keyValueMsg)
	anyValueJSON     = jsonNames(&anyValueMsg)
	valuesJSON       = jsonNames(&arrayValueMsg)
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
	j, err := d.fields(i, anyValueJSON, func(num, i int) (int, error) {
		if set {
			return i, decodeErr(i, ErrSyntax, "a second value in one AnyValue")
		}
		set = true
		var err error
		switch num {
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
				return i, depthErr(i, d.j.maxDepth)
			}
			v, i, err = d.container(i, num == avKvlist, depth)
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
		j, err := d.fields(i, keyValueJSON, func(num, i int) (int, error) {
			var err error
			if num == kvKey {
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
		val, j, err = d.j.str(j + len(jsonStringValue+`":`))
	case w == kvInt && b[j+8] == '"' && b[j+9] == ':':
		var u uint64
		u, j, err = d.integer(j+len(jsonIntValue+`":`), int64Type)
		val = IntValue(int64(u))
	case w == kvBool && b[j+8] == 'e' && b[j+9] == '"' && b[j+10] == ':':
		val, j, err = d.boolean(j + len(jsonBoolValue+`":`))
	case w == kvDouble && le64(b[j+5:]) == kvDoubleEnd:
		var f float64
		f, j, err = d.double(j + len(jsonDoubleValue+`":`))
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

// The words quickKeyValue compares (le64 of the text), and the offsets
// above, are the names of the table read eight bytes at a time.
var (
	kvHead      = le64([]byte(`{"` + jsonKeyName + `":"`))
	kvMid       = le64([]byte(`","` + jsonValue))
	kvMidEnd    = le64([]byte(`":{"....`)) & 0xffffffff
	kvString    = le64([]byte(jsonStringValue))
	kvStringEnd = le64([]byte(jsonStringValue + `":"`)[6:])
	kvInt       = le64([]byte(jsonIntValue))
	kvBool      = le64([]byte(jsonBoolValue))
	kvDouble    = le64([]byte(jsonDoubleValue))
	kvDoubleEnd = le64([]byte(jsonDoubleValue + `":`)[5:])
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
	var vals [numResourceFields]Value
	vals[ViewResAttributes], vals[ViewResDropped], vals[ViewResSchemaURL] = d.emptyMap(), IntValue(0), strValue(String, 0, 0, 0)
	head := func(i int) (int, error) {
		return d.fields(i, resourceJSON, func(num, i int) (int, error) {
			if num == resAttributes {
				return d.attributes(i, &vals[ViewResAttributes])
			}
			u, j, err := d.integer(i, uint32Type)
			vals[ViewResDropped] = IntValue(int64(u))
			return j, err
		})
	}
	// Resource and scope are the last two keys of a record's root.
	return d.group(i, resourceLogsJSON, head, d.scopeLogs, resourceKeys[:], vals[:], ViewResSchemaURL, 2)
}

func (d *otlpJSONDecoder) scopeLogs(i int) (int, error) {
	var vals [numScopeFields]Value
	empty := strValue(String, 0, 0, 0)
	vals[ViewScopeName], vals[ViewScopeVersion], vals[ViewScopeSchemaURL] = empty, empty, empty
	vals[ViewScopeAttributes], vals[ViewScopeDropped] = d.emptyMap(), IntValue(0)
	head := func(i int) (int, error) {
		return d.fields(i, scopeJSON, func(num, i int) (int, error) {
			var err error
			switch num {
			case scName:
				vals[ViewScopeName], i, err = d.str(i)
			case scVersion:
				vals[ViewScopeVersion], i, err = d.str(i)
			case scAttributes:
				i, err = d.attributes(i, &vals[ViewScopeAttributes])
			case scDropped:
				var u uint64
				u, i, err = d.integer(i, uint32Type)
				vals[ViewScopeDropped] = IntValue(int64(u))
			}
			return i, err
		})
	}
	return d.group(i, scopeLogsJSON, head, d.logRecord, scopeKeys[:], vals[:], ViewScopeSchemaURL, 1)
}

// group reads a ResourceLogs or a ScopeLogs at i (names, its fields):
// head reads its resource or scope into vals, and child each of its
// children; its schema_url goes to vals[schema]. The resource or scope
// (keys and vals) then goes into every record the group held, as the
// value of the root's entry fromEnd from its end.
func (d *otlpJSONDecoder) group(i int, names []jsonName, head, child func(int) (int, error), keys, vals []Value, schema ViewID, fromEnd int) (int, error) {
	first := len(d.recs)
	j, err := d.fields(i, names, func(num, i int) (int, error) {
		var err error
		switch num {
		case groupHead:
			i, err = head(i)
		case groupChildren:
			i, err = d.elements(i, child)
		case groupSchemaURL:
			vals[schema], i, err = d.str(i)
		}
		return i, err
	})
	if err != nil {
		return j, err
	}
	m := d.o.fixedMap(keys, vals)
	for _, r := range d.recs[first:] {
		d.a.nodes[int(r.root.off())+2*(int(r.root.n())-fromEnd)+1] = m
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
	vals[ViewSeverityText], vals[ViewEventName], vals[ViewTraceID], vals[ViewSpanID] = empty, empty, empty, empty
	j, err := d.fields(i, logRecordJSON, func(num, i int) (int, error) {
		var err error
		var u uint64
		switch num {
		case lrTime:
			unix, i, err = d.integer(i, uint64Type)
		case lrObservedTime:
			obs, i, err = d.integer(i, uint64Type)
		case lrSeverityNumber:
			sevNum, i, err = d.severityNumber(i)
		case lrSeverityText:
			vals[ViewSeverityText], i, err = d.str(i)
		case lrBody:
			vals[ViewBody], i, err = d.anyValue(i, 2)
		case lrAttributes:
			i, err = d.attributes(i, &vals[ViewAttributes])
		case lrDropped:
			u, i, err = d.integer(i, uint32Type)
			dropped = int64(u)
		case lrFlags:
			u, i, err = d.integer(i, uint32Type)
			flags = int64(u)
		case lrTraceID:
			vals[ViewTraceID], i, err = d.id(i, &rootView[ViewTraceID])
		case lrSpanID:
			vals[ViewSpanID], i, err = d.id(i, &rootView[ViewSpanID])
		case lrEventName:
			vals[ViewEventName], i, err = d.str(i)
		}
		return i, err
	})
	if err != nil {
		return j, err
	}
	if vals[ViewAttributes].kind() == Absent {
		vals[ViewAttributes] = d.emptyMap()
	}
	vals[ViewSeverityNumber] = IntValue(sevNum)
	vals[ViewObservedTime] = TimestampValue(int64(obs))
	vals[ViewFlags] = IntValue(flags)
	vals[ViewDropped] = IntValue(dropped)
	vals[ViewResource], vals[ViewScope] = NullValue(), NullValue() // set by the groups
	d.recs = append(d.recs, a.newOTLPRecord(d.o.fixedMap(rootKeys[:], vals[:]), int64(unix), int64(obs)))
	return j, nil
}
