package record

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
)

// AppendJSON appends recs to dst as one ExportLogsServiceRequest in
// OTLP/JSON, on one line without a newline, regrouped by resource and
// scope as AppendProto regroups them, and with the same fields: an OTLP
// record is written from its view (edits included), a plain record
// becomes a LogRecord whose body is the record's map and whose time is
// the record's time. Fields at their defaults are left out; names are
// lowerCamelCase, ids lower-case hex, 64-bit integers strings, enums
// numbers, bytes standard base64, and doubles numbers or, for NaN and the
// infinities, the strings protojson writes.
func (e *OTLPEncoder) AppendJSON(dst []byte, recs []*Record) []byte {
	e.group(recs)
	dst = append(dst, '{')
	if len(e.res) == 0 {
		return append(dst, '}')
	}
	dst = append(jsonKey(dst, len(dst), requestMsg.jsonName(reqResourceLogs)), '[')
	for ri := range e.res {
		g := &e.res[ri]
		var obj, sobj int
		dst, obj = openGroupJSON(dst, ri == 0, &resourceLogsMsg, appendResourceJSON, g.a, g.v)
		for si := g.first; si >= 0; si = e.scopes[si].next {
			s := &e.scopes[si]
			dst, sobj = openGroupJSON(dst, si == g.first, &scopeLogsMsg, appendScopeJSON, s.a, s.v)
			for i := s.first; i >= 0; i = e.next[i] {
				if i != s.first {
					dst = append(dst, ',')
				}
				dst = appendLogRecordJSON(dst, recs[i])
			}
			dst = closeGroupJSON(dst, sobj, &scopeLogsMsg, s.a, viewValue(s.a, s.v, &scopeView[ViewScopeSchemaURL]))
		}
		dst = closeGroupJSON(dst, obj, &resourceLogsMsg, g.a, viewValue(g.a, g.v, &resourceView[ViewResSchemaURL]))
	}
	return append(dst, "]}"...)
}

// openGroupJSON begins a ResourceLogs or ScopeLogs object, after a comma
// unless it is the first of its list: its head (the resource or the
// scope, written by head) and the key and '[' of its children. It returns
// where the object's fields start, for closeGroupJSON.
func openGroupJSON(dst []byte, first bool, msg *protoMessage, head func([]byte, *Arena, Value) []byte, a *Arena, v Value) ([]byte, int) {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '{')
	obj := len(dst)
	dst = head(dst, a, v)
	return append(jsonKey(dst, obj, msg.jsonName(groupChildren)), '['), obj
}

// closeGroupJSON ends what openGroupJSON began: the children's ']', the
// schema URL url and the '}'.
func closeGroupJSON(dst []byte, obj int, msg *protoMessage, a *Arena, url Value) []byte {
	dst = appendStringJSON(append(dst, ']'), obj, msg.jsonName(groupSchemaURL), a, url)
	return append(dst, '}')
}

// jsonKey writes the name of a field of the object whose first field
// starts at obj, after a comma unless it is the first.
func jsonKey(dst []byte, obj int, name string) []byte {
	if len(dst) > obj {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

// appendResourceJSON writes the "resource" field, left out when the
// resource is empty.
func appendResourceJSON(dst []byte, a *Arena, m Value) []byte {
	start := len(dst)
	dst = append(jsonKey(dst, len(dst), resourceLogsMsg.jsonName(groupHead)), '{')
	obj := len(dst)
	dst = appendKeyValuesJSON(dst, obj, resourceMsg.jsonName(resAttributes), a, viewValue(a, m, &resourceView[ViewResAttributes]), Value{})
	dst = appendUintJSON(dst, obj, resourceMsg.jsonName(resDropped), viewValue(a, m, &resourceView[ViewResDropped]))
	if len(dst) == obj {
		return dst[:start]
	}
	return append(dst, '}')
}

// appendScopeJSON writes the "scope" field, left out when the scope is
// empty.
func appendScopeJSON(dst []byte, a *Arena, m Value) []byte {
	start := len(dst)
	dst = append(jsonKey(dst, len(dst), scopeLogsMsg.jsonName(groupHead)), '{')
	obj := len(dst)
	dst = appendStringJSON(dst, obj, scopeMsg.jsonName(scName), a, viewValue(a, m, &scopeView[ViewScopeName]))
	dst = appendStringJSON(dst, obj, scopeMsg.jsonName(scVersion), a, viewValue(a, m, &scopeView[ViewScopeVersion]))
	dst = appendKeyValuesJSON(dst, obj, scopeMsg.jsonName(scAttributes), a, viewValue(a, m, &scopeView[ViewScopeAttributes]), Value{})
	dst = appendUintJSON(dst, obj, scopeMsg.jsonName(scDropped), viewValue(a, m, &scopeView[ViewScopeDropped]))
	if len(dst) == obj {
		return dst[:start]
	}
	return append(dst, '}')
}

// appendLogRecordJSON writes one LogRecord, its fields in the order of
// their declaration.
func appendLogRecordJSON(dst []byte, r *Record) []byte {
	a, root := r.a, r.wholeRoot()
	dst = append(dst, '{')
	obj := len(dst)
	if r.layout != layoutOTLP {
		if r.time != 0 {
			dst = appendUint64JSON(dst, obj, jsonTimeUnixNano, uint64(r.time))
		}
		dst = jsonKey(dst, obj, jsonBody)
		dst = appendAnyValueJSON(dst, a, root)
		return append(dst, '}')
	}
	// The view's values by slot, as AppendProto reads them; a key the
	// view does not have becomes an attribute, as there.
	var vals [numRootFields]Value
	unknown := Value{}
	for it := a.Iter(root); it.Next(); {
		k := it.Key()
		if f := viewField(rootView, a.str(k)); f != nil {
			vals[f.ID] = it.Value()
		} else {
			unknown = root
		}
	}
	var observed int64
	if v := vals[ViewObservedTime]; v.kind() == Timestamp {
		observed = v.Time()
	}
	if t := r.otlpTimeUnixNano(observed); t != 0 {
		dst = appendUint64JSON(dst, obj, jsonTimeUnixNano, uint64(t))
	}
	if observed != 0 {
		dst = appendUint64JSON(dst, obj, jsonObservedTimeUnixNano, uint64(observed))
	}
	if v := vals[ViewSeverityNumber]; v.kind() == Int && int32(v.Int()) != 0 {
		dst = jsonKey(dst, obj, jsonSeverityNumber)
		dst = strconv.AppendInt(dst, int64(int32(v.Int())), 10)
	}
	dst = appendStringJSON(dst, obj, jsonSeverityText, a, vals[ViewSeverityText])
	if v := vals[ViewBody]; v.kind() != Absent {
		dst = jsonKey(dst, obj, jsonBody)
		dst = appendAnyValueJSON(dst, a, v)
	}
	dst = appendKeyValuesJSON(dst, obj, jsonAttributes, a, vals[ViewAttributes], unknown)
	dst = appendUintJSON(dst, obj, jsonDroppedAttributesCount, vals[ViewDropped])
	dst = appendUintJSON(dst, obj, jsonFlags, vals[ViewFlags])
	dst = appendIDJSON(dst, obj, jsonTraceID, a, vals[ViewTraceID], &rootView[ViewTraceID])
	dst = appendIDJSON(dst, obj, jsonSpanID, a, vals[ViewSpanID], &rootView[ViewSpanID])
	dst = appendStringJSON(dst, obj, jsonEventName, a, vals[ViewEventName])
	return append(dst, '}')
}

func appendUint64JSON(dst []byte, obj int, name string, u uint64) []byte {
	dst = jsonKey(dst, obj, name)
	dst = append(dst, '"')
	dst = strconv.AppendUint(dst, u, 10)
	return append(dst, '"')
}

// appendUintJSON writes an Int as a uint32 field, unless it is 0.
func appendUintJSON(dst []byte, obj int, name string, v Value) []byte {
	if v.kind() != Int || uint32(v.Int()) == 0 {
		return dst
	}
	dst = jsonKey(dst, obj, name)
	return strconv.AppendUint(dst, uint64(uint32(v.Int())), 10)
}

// appendStringJSON writes a String value unless it is empty.
func appendStringJSON(dst []byte, obj int, name string, a *Arena, v Value) []byte {
	if v.kind() != String || v.n() == 0 {
		return dst
	}
	dst = jsonKey(dst, obj, name)
	return a.appendString(dst, v)
}

// appendIDJSON writes the hex trace or span id of f in lower case; ""
// (and anything that is not hex of the id's length) is left out.
func appendIDJSON(dst []byte, obj int, name string, a *Arena, v Value, f *ViewField) []byte {
	if v.kind() != String || v.n() == 0 || !f.ValidID(a.str(v)) {
		return dst
	}
	dst = jsonKey(dst, obj, name)
	dst = append(dst, '"')
	dst = appendLowerHex(dst, a.raw(v))
	return append(dst, '"')
}

// appendKeyValuesJSON writes the entries of a map as a repeated KeyValue
// field, followed by the keys of extra that the view does not have (see
// appendLogRecordJSON), unless there are none.
func appendKeyValuesJSON(dst []byte, obj int, name string, a *Arena, m, extra Value) []byte {
	start := len(dst)
	dst = jsonKey(dst, obj, name)
	dst = append(dst, '[')
	list := len(dst)
	if m.kind() == Map {
		for it := a.Iter(m); it.Next(); {
			dst = appendKeyValueJSON(dst, list, a, it.Key(), it.Value())
		}
	}
	for it := a.Iter(extra); it.Next(); {
		if viewField(rootView, a.str(it.Key())) == nil {
			dst = appendKeyValueJSON(dst, list, a, it.Key(), it.Value())
		}
	}
	if len(dst) == list {
		return dst[:start]
	}
	return append(dst, ']')
}

func appendKeyValueJSON(dst []byte, list int, a *Arena, k, v Value) []byte {
	if len(dst) > list {
		dst = append(dst, ',')
	}
	dst = append(dst, '{')
	obj := len(dst)
	if k.n() > 0 {
		dst = jsonKey(dst, obj, jsonKeyName)
		dst = a.appendString(dst, k)
	}
	if v.kind() != Null && v.kind() != Absent {
		dst = jsonKey(dst, obj, jsonValue)
		dst = appendAnyValueJSON(dst, a, v)
	}
	return append(dst, '}')
}

// appendAnyValueJSON writes an AnyValue holding v, as appendAnyValue
// does in protobuf: null is the AnyValue with no value, a timestamp its
// RFC 3339 string.
func appendAnyValueJSON(dst []byte, a *Arena, v Value) []byte {
	switch v.kind() {
	case String:
		dst = append(dst, `{"`+jsonStringValue+`":`...)
		dst = a.appendString(dst, v)
	case Bool:
		dst = append(dst, `{"`+jsonBoolValue+`":`...)
		dst = strconv.AppendBool(dst, v.Bool())
	case Int:
		dst = append(dst, `{"`+jsonIntValue+`":"`...)
		dst = strconv.AppendInt(dst, v.Int(), 10)
		dst = append(dst, '"')
	case Float:
		dst = append(dst, `{"`+jsonDoubleValue+`":`...)
		dst = appendDoubleJSON(dst, v.Float())
	case Bytes:
		dst = append(dst, `{"`+jsonBytesValue+`":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, a.raw(v))
		dst = append(dst, '"')
	case Timestamp:
		dst = append(dst, `{"`+jsonStringValue+`":"`...)
		dst = time.Unix(0, v.Time()).UTC().AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, '"')
	case Array:
		dst = append(dst, `{"`+jsonArrayValue+`":{`...)
		if v.n() > 0 {
			dst = append(dst, `"`+jsonValues+`":[`...)
			for i := 0; i < int(v.n()); i++ {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = appendAnyValueJSON(dst, a, a.nodes[int(v.off())+i])
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	case Map:
		dst = append(dst, `{"`+jsonKvlistValue+`":{`...)
		dst = appendKeyValuesJSON(dst, len(dst), jsonValues, a, v, Value{})
		dst = append(dst, '}')
	default:
		dst = append(dst, '{')
	}
	return append(dst, '}')
}

// appendDoubleJSON writes a double as protojson does: the shortest
// decimal, with an exponent below 1e-6 and from 1e21 on, and NaN and the
// infinities as strings.
func appendDoubleJSON(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	fmt := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmt = 'e'
	}
	dst = strconv.AppendFloat(dst, f, fmt, -1, 64)
	if n := len(dst); fmt == 'e' && n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
		dst[n-2] = dst[n-1] // 1e-07 → 1e-7
		dst = dst[:n-1]
	}
	return dst
}
