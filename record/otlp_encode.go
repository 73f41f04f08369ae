package record

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"time"
	"unicode/utf8"
)

// AppendProto appends recs to dst as one protobuf ExportLogsServiceRequest,
// regrouped by resource and scope. An OTLP record is written from its view
// (edits included); a plain record (from a file) becomes a LogRecord whose
// body is the record's map and whose time is the record's time, with an
// empty resource and scope. Fields at their defaults are left out.
func (e *OTLPEncoder) AppendProto(dst []byte, recs []*Record) []byte {
	e.group(recs)
	for ri := range e.res {
		g := &e.res[ri]
		var rl, at int
		dst, rl = openField(dst, 1) // resource_logs
		dst, at = openField(dst, 1)
		dst = e.appendResource(dst, g.a, g.v)
		dst = closeOrDrop(dst, at)
		for si := g.first; si >= 0; si = e.scopes[si].next {
			s := &e.scopes[si]
			var sl int
			dst, sl = openField(dst, 2) // scope_logs
			dst, at = openField(dst, 1)
			dst = e.appendScope(dst, s.a, s.v)
			dst = closeOrDrop(dst, at)
			for i := s.first; i >= 0; i = e.next[i] {
				var lr int
				dst, lr = openField(dst, 2) // log_records
				dst = e.appendLogRecord(dst, recs[i])
				dst = closeField(dst, lr)
			}
			dst = appendStringField(dst, 3, s.a, viewValue(s.a, s.v, &scopeView[vScopeSchemaURL]))
			dst = closeField(dst, sl)
		}
		dst = appendStringField(dst, 3, g.a, viewValue(g.a, g.v, &resourceView[vResSchemaURL]))
		dst = closeField(dst, rl)
	}
	return dst
}

// closeOrDrop closes a message field, or removes it when it is empty.
func closeOrDrop(dst []byte, start int) []byte {
	if len(dst) == start {
		return dst[:start-2] // the tag (one byte for fields below 16) and the length
	}
	return closeField(dst, start)
}

func (e *OTLPEncoder) appendResource(dst []byte, a *Arena, m Value) []byte {
	dst = appendKeyValues(dst, 1, a, viewValue(a, m, &resourceView[vResAttributes]))
	return appendUintField(dst, 2, viewValue(a, m, &resourceView[vResDropped]))
}

func (e *OTLPEncoder) appendScope(dst []byte, a *Arena, m Value) []byte {
	dst = appendStringField(dst, 1, a, viewValue(a, m, &scopeView[vScopeName]))
	dst = appendStringField(dst, 2, a, viewValue(a, m, &scopeView[vScopeVersion]))
	dst = appendKeyValues(dst, 3, a, viewValue(a, m, &scopeView[vScopeAttributes]))
	return appendUintField(dst, 4, viewValue(a, m, &scopeView[vScopeDropped]))
}

// appendWire writes r, which was decoded clean (otlpDecoder.dirty) and
// whose time was not set since, from its LogRecord's bytes when its edits
// allow: none (the root is the decoded one: decoded nodes never change,
// edits copy them), or only attributes added (the root's entries are the
// decoded ones but for attributes, whose entries are the decoded ones
// followed by new keys). The added attributes follow the bytes as more
// KeyValues of the repeated field 6, which a reader appends to the ones
// before: the same list, new keys last, as the view has it. Anything
// else is encoded from the view (ok false).
func appendWire(dst []byte, r *Record) (out []byte, ok bool) {
	a := r.a
	if r.root == r.decoded {
		return append(dst, a.raw(r.wire)...), true
	}
	cur, was := a.entries(r.root), a.entries(r.decoded)
	if len(cur) != len(was) {
		return dst, false
	}
	attr := -1
	for i := 0; i < len(cur); i += 2 {
		if cur[i] != was[i] {
			return dst, false
		}
		if cur[i+1] != was[i+1] {
			switch k := a.str(cur[i]); {
			case k == "resource" || k == "scope":
				continue
			case attr >= 0 || k != "attributes":
				return dst, false
			}
			attr = i + 1
		}
	}
	if attr < 0 {
		return append(dst, a.raw(r.wire)...), true
	}
	added, old := a.entries(cur[attr]), a.entries(was[attr])
	if cur[attr].kind() != Map || was[attr].kind() != Map || len(added) < len(old) {
		return dst, false
	}
	for i := range old {
		if added[i] != old[i] {
			return dst, false
		}
	}
	dst = append(dst, a.raw(r.wire)...)
	for i := len(old); i < len(added); i += 2 {
		dst = appendKeyValue(dst, 6, a, added[i], added[i+1])
	}
	return dst, true
}

// entries returns the nodes of a map (key, value pairs); nil for anything
// else.
func (a *Arena) entries(m Value) []Value {
	if m.kind() != Map {
		return nil
	}
	return a.nodes[m.off() : m.off()+2*m.n()]
}

// appendLogRecord writes the fields of one LogRecord.
func (e *OTLPEncoder) appendLogRecord(dst []byte, r *Record) []byte {
	if r.wire.kind() == Bytes && !r.timeSet && !e.FromViews {
		if out, ok := appendWire(dst, r); ok {
			return out
		}
	}
	a, root := r.a, r.wholeRoot()
	if r.layout != layoutOTLP {
		if r.time != 0 {
			dst = appendFixed64Field(dst, 1, uint64(r.time))
		}
		var at int
		dst, at = openField(dst, 5)
		dst = appendAnyValue(dst, a, root)
		return closeField(dst, at)
	}
	var observed int64
	var unknown bool
	for it := a.Iter(root); it.Next(); {
		v := it.Value()
		switch a.str(it.Key()) {
		case "body":
			if v.kind() != Absent {
				var at int
				dst, at = openField(dst, 5)
				dst = appendAnyValue(dst, a, v)
				dst = closeField(dst, at)
			}
		case "attributes":
			dst = appendKeyValues(dst, 6, a, v)
		case "severity_text":
			dst = appendStringField(dst, 3, a, v)
		case "severity_number":
			if v.kind() == Int && v.Int() != 0 {
				dst = appendTag(dst, 2, wireVarint)
				dst = appendVarint(dst, uint64(int64(int32(v.Int()))))
			}
		case "observed_time":
			if v.kind() == Timestamp {
				observed = v.Time()
				if observed != 0 {
					dst = appendFixed64Field(dst, 11, uint64(observed))
				}
			}
		case "trace_id":
			dst = e.appendID(dst, 9, a, v, 16)
		case "span_id":
			dst = e.appendID(dst, 10, a, v, 8)
		case "flags":
			if v.kind() == Int && v.Int() != 0 {
				dst = appendTag(dst, 8, wireFixed32)
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v.Int()))
			}
		case "event_name":
			dst = appendStringField(dst, 12, a, v)
		case "dropped_attributes_count":
			dst = appendUintField(dst, 7, v)
		case "resource", "scope":
		default:
			unknown = true
		}
	}
	if unknown {
		// A key the view does not have (an embedder's edit that CheckOTLP
		// would refuse) is kept as an attribute rather than lost.
		for it := a.Iter(root); it.Next(); {
			if viewField(rootView, a.str(it.Key())) == nil {
				dst = appendKeyValue(dst, 6, a, it.Key(), it.Value())
			}
		}
	}
	if t := r.otlpTimeUnixNano(observed); t != 0 {
		dst = appendFixed64Field(dst, 1, uint64(t))
	}
	return dst
}

// appendID writes a hex trace or span id as its bytes; "" (and anything
// that is not hex of the id's length) is left out.
func (e *OTLPEncoder) appendID(dst []byte, field int, a *Arena, v Value, n int) []byte {
	if v.kind() != String || int(v.n()) != 2*n {
		return dst
	}
	var err error
	e.buf, err = hex.AppendDecode(e.buf[:0], a.raw(v))
	if err != nil {
		return dst
	}
	return appendBytesField(dst, field, e.buf)
}

func appendFixed64Field(dst []byte, field int, u uint64) []byte {
	dst = appendTag(dst, field, wireFixed64)
	return binary.LittleEndian.AppendUint64(dst, u)
}

// appendUintField writes an Int as a uint32 varint field, unless it is 0.
func appendUintField(dst []byte, field int, v Value) []byte {
	if v.kind() != Int || uint32(v.Int()) == 0 {
		return dst
	}
	dst = appendTag(dst, field, wireVarint)
	return appendVarint(dst, uint64(uint32(v.Int())))
}

// appendStringField writes a String value unless it is empty.
func appendStringField(dst []byte, field int, a *Arena, v Value) []byte {
	if v.kind() != String || v.n() == 0 {
		return dst
	}
	return appendUTF8Field(dst, field, a.raw(v))
}

// appendUTF8Field writes a string field; invalid UTF-8 (which a policy can
// make) becomes U+FFFD, as protobuf strings must be UTF-8.
func appendUTF8Field(dst []byte, field int, s []byte) []byte {
	if validUTF8(s) {
		return appendBytesField(dst, field, s)
	}
	var at int
	dst, at = openField(dst, field)
	for len(s) > 0 {
		r, size := utf8.DecodeRune(s)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[:size]...)
		}
		s = s[size:]
	}
	return closeField(dst, at)
}

// appendKeyValues writes the entries of a map as repeated KeyValue fields.
func appendKeyValues(dst []byte, field int, a *Arena, m Value) []byte {
	if m.kind() != Map {
		return dst
	}
	for it := a.Iter(m); it.Next(); {
		dst = appendKeyValue(dst, field, a, it.Key(), it.Value())
	}
	return dst
}

func appendKeyValue(dst []byte, field int, a *Arena, k, v Value) []byte {
	var at, vat int
	dst, at = openField(dst, field)
	if k.n() > 0 {
		dst = appendUTF8Field(dst, 1, a.raw(k))
	}
	if v.kind() != Null && v.kind() != Absent {
		dst, vat = openField(dst, 2)
		dst = appendAnyValue(dst, a, v)
		dst = closeField(dst, vat)
	}
	return closeField(dst, at)
}

// appendAnyValue writes the fields of an AnyValue holding v: null is the
// AnyValue with no value, and a timestamp (which OTLP has no type for) is
// its RFC 3339 string, as in JSON.
func appendAnyValue(dst []byte, a *Arena, v Value) []byte {
	switch v.kind() {
	case String:
		return appendUTF8Field(dst, 1, a.raw(v))
	case Bool:
		dst = appendTag(dst, 2, wireVarint)
		return append(dst, byte(v.u))
	case Int:
		dst = appendTag(dst, 3, wireVarint)
		return appendVarint(dst, v.u)
	case Float:
		return appendFixed64Field(dst, 4, math.Float64bits(v.Float()))
	case Bytes:
		return appendBytesField(dst, 7, a.raw(v))
	case Timestamp:
		var at int
		dst, at = openField(dst, 1)
		dst = time.Unix(0, v.Time()).UTC().AppendFormat(dst, time.RFC3339Nano)
		return closeField(dst, at)
	case Array:
		var at int
		dst, at = openField(dst, 5)
		for i := 0; i < int(v.n()); i++ {
			var et int
			dst, et = openField(dst, 1)
			dst = appendAnyValue(dst, a, a.nodes[int(v.off())+i])
			dst = closeField(dst, et)
		}
		return closeField(dst, at)
	case Map:
		var at int
		dst, at = openField(dst, 6)
		dst = appendKeyValues(dst, 1, a, v)
		return closeField(dst, at)
	}
	return dst
}
