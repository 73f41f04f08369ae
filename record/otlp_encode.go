package record

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/bits"
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
		dst, rl = openFieldN(dst, 1, 3) // resource_logs
		dst, at = openField(dst, 1)
		dst = e.appendResource(dst, g.a, g.v)
		dst = closeOrDrop(dst, at)
		for si := g.first; si >= 0; si = e.scopes[si].next {
			s := &e.scopes[si]
			var sl int
			dst, sl = openFieldN(dst, 2, 3) // scope_logs
			dst, at = openField(dst, 1)
			dst = e.appendScope(dst, s.a, s.v)
			dst = closeOrDrop(dst, at)
			for i := s.first; i >= 0; i = e.next[i] {
				var lr int
				dst, lr = openFieldN(dst, 2, 2) // log_records
				dst = e.appendLogRecord(dst, recs[i])
				dst = closeFieldN(dst, lr, 2)
			}
			dst = appendStringField(dst, 3, s.a, viewValue(s.a, s.v, &scopeView[vScopeSchemaURL]))
			dst = closeFieldN(dst, sl, 3)
		}
		dst = appendStringField(dst, 3, g.a, viewValue(g.a, g.v, &resourceView[vResSchemaURL]))
		dst = closeFieldN(dst, rl, 3)
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

// appendWire writes r, which was decoded clean (otlpDecoder.dirty), from
// its LogRecord's bytes as far as its edits allow: its edits cost what
// they change. A record not edited is its bytes; one whose edits only
// added attributes is its bytes and the added attributes, as more
// KeyValues of the repeated field 6, which a reader appends to the ones
// before (the same list, new keys last, as the view has it). Otherwise the
// fields of the view's slots that kept their values are copied as the
// bytes have them, and the changed ones (and the time, once set) are
// written from the view after them: the same message, its fields in
// another order. A root whose entries are not the view's keys in the
// view's order is encoded from the view (ok false).
func appendWire(dst []byte, r *Record, e *OTLPEncoder) (out []byte, ok bool) {
	a := r.a
	if r.root == r.decoded && !r.timeSet {
		return append(dst, a.raw(r.wire)...), true
	}
	cur, was := a.entries(r.root), a.entries(r.decoded)
	if len(cur) != len(was) {
		return dst, false
	}
	var changed uint32          // by view slot: the values to write from the view
	var at [numRootFields]int32 // where in cur each changed slot's value is
	attr := -1                  // the attributes' entry, when keys were only added
	for i := 0; i < len(cur); i += 2 {
		if cur[i] != was[i] {
			return dst, false
		}
		if cur[i+1] == was[i+1] {
			continue
		}
		f := viewField(rootView, a.str(cur[i])) // a decoded root has the view's keys
		switch {
		case f == nil:
			return dst, false
		case f.ID == vResource || f.ID == vScope:
			continue
		case f.ID == vAttributes && attributesAdded(a, cur[i+1], was[i+1]):
			attr = i + 1
			continue
		}
		changed |= 1 << f.ID
		at[f.ID] = int32(i + 1)
	}
	timeSet := r.timeSet || changed&(1<<vObservedTime) != 0 // time_unix_nano may read the observed time
	if (changed != 0 || timeSet) && r.proj {
		// A projection's unbuilt slots and attributes are not the
		// record's: wholeRoot decodes them, and the view is written.
		return dst, false
	}
	raw := a.raw(r.wire)
	if changed == 0 && !timeSet {
		dst = append(dst, raw...)
	} else {
		w := wire{raw}
		for i := 0; i < len(raw); {
			field, wt, j, err := w.tag(i, len(raw))
			if err != nil {
				return dst, false // the bytes decoded clean: not seen
			}
			next, err := w.skip(wt, i, j, len(raw))
			if err != nil || field >= len(wireSlot) {
				return dst, false // not seen either: a clean decode knew every field
			}
			if field == 1 && !timeSet || field != 1 && changed&(1<<wireSlot[field]) == 0 {
				dst = append(dst, raw[i:next]...)
			}
			i = next
		}
		for m := changed; m != 0; m &= m - 1 {
			id := viewID(bits.TrailingZeros32(m))
			dst = e.appendField(dst, a, id, cur[at[id]])
		}
		if timeSet {
			var observed int64
			if v, _ := a.lookup(r.root, rootView[vObservedTime].Name, 0); v.kind() == Timestamp {
				observed = v.Time()
			}
			if t := r.otlpTimeUnixNano(observed); t != 0 {
				dst = appendFixed64Field(dst, 1, uint64(t))
			}
		}
	}
	if attr >= 0 {
		added, old := a.entries(cur[attr]), a.entries(was[attr])
		for i := len(old); i < len(added); i += 2 {
			dst = appendKeyValue(dst, 6, a, added[i], added[i+1])
		}
	}
	return dst, true
}

// wireSlot is the view slot of each LogRecord field a clean decode knows
// (time_unix_nano, field 1, is the record's time, not a slot).
var wireSlot = [...]viewID{2: vSeverityNumber, 3: vSeverityText, 5: vBody, 6: vAttributes,
	7: vDropped, 8: vFlags, 9: vTraceID, 10: vSpanID, 11: vObservedTime, 12: vEventName}

// attributesAdded reports whether the attributes map cur is was with
// keys added at its end and nothing else changed.
func attributesAdded(a *Arena, cur, was Value) bool {
	added, old := a.entries(cur), a.entries(was)
	if cur.kind() != Map || was.kind() != Map || len(added) < len(old) {
		return false
	}
	for i := range old {
		if added[i] != old[i] {
			return false
		}
	}
	return true
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
	if r.wire.kind() == Bytes && !e.FromViews {
		if out, ok := appendWire(dst, r, e); ok {
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
		f := viewField(rootView, a.str(it.Key()))
		switch {
		case f == nil:
			unknown = true
			continue
		case f.ID == vObservedTime && v.kind() == Timestamp:
			observed = v.Time()
		}
		dst = e.appendField(dst, a, f.ID, v)
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

// appendField writes the LogRecord field of view slot id, whose value is
// v; nothing for a value at its default, or for the resource and scope,
// which are not fields of a LogRecord.
func (e *OTLPEncoder) appendField(dst []byte, a *Arena, id viewID, v Value) []byte {
	switch id {
	case vBody:
		if v.kind() != Absent {
			var at int
			dst, at = openField(dst, 5)
			dst = appendAnyValue(dst, a, v)
			dst = closeField(dst, at)
		}
	case vAttributes:
		dst = appendKeyValues(dst, 6, a, v)
	case vSeverityText:
		dst = appendStringField(dst, 3, a, v)
	case vSeverityNumber:
		if v.kind() == Int && v.Int() != 0 {
			dst = appendTag(dst, 2, wireVarint)
			dst = appendVarint(dst, uint64(int64(int32(v.Int()))))
		}
	case vObservedTime:
		if v.kind() == Timestamp && v.Time() != 0 {
			dst = appendFixed64Field(dst, 11, uint64(v.Time()))
		}
	case vTraceID:
		dst = e.appendID(dst, 9, a, v, 16)
	case vSpanID:
		dst = e.appendID(dst, 10, a, v, 8)
	case vFlags:
		if v.kind() == Int && v.Int() != 0 {
			dst = appendTag(dst, 8, wireFixed32)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v.Int()))
		}
	case vEventName:
		dst = appendStringField(dst, 12, a, v)
	case vDropped:
		dst = appendUintField(dst, 7, v)
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
