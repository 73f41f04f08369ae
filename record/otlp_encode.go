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
		dst, rl = openFieldN(dst, reqResourceLogs, 3)
		dst, at = openField(dst, groupHead)
		dst = e.appendResource(dst, g.a, g.v)
		dst = closeOrDrop(dst, at)
		for si := g.first; si >= 0; si = e.scopes[si].next {
			s := &e.scopes[si]
			var sl int
			dst, sl = openFieldN(dst, groupChildren, 3)
			dst, at = openField(dst, groupHead)
			dst = e.appendScope(dst, s.a, s.v)
			dst = closeOrDrop(dst, at)
			for i := s.first; i >= 0; i = e.next[i] {
				var lr int
				dst, lr = openFieldN(dst, groupChildren, 2)
				dst = e.appendLogRecord(dst, recs[i])
				dst = closeFieldN(dst, lr, 2)
			}
			dst = appendStringField(dst, groupSchemaURL, s.a, viewValue(s.a, s.v, &scopeView[ViewScopeSchemaURL]))
			dst = closeFieldN(dst, sl, 3)
		}
		dst = appendStringField(dst, groupSchemaURL, g.a, viewValue(g.a, g.v, &resourceView[ViewResSchemaURL]))
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
	dst = appendKeyValues(dst, resAttributes, a, viewValue(a, m, &resourceView[ViewResAttributes]))
	return appendUintField(dst, resDropped, viewValue(a, m, &resourceView[ViewResDropped]))
}

func (e *OTLPEncoder) appendScope(dst []byte, a *Arena, m Value) []byte {
	dst = appendStringField(dst, scName, a, viewValue(a, m, &scopeView[ViewScopeName]))
	dst = appendStringField(dst, scVersion, a, viewValue(a, m, &scopeView[ViewScopeVersion]))
	dst = appendKeyValues(dst, scAttributes, a, viewValue(a, m, &scopeView[ViewScopeAttributes]))
	return appendUintField(dst, scDropped, viewValue(a, m, &scopeView[ViewScopeDropped]))
}

// appendWire writes r, which was decoded clean (otlpDecoder.dirty), from
// its LogRecord's bytes as far as its edits allow: its edits cost what
// they change. A record not edited is its bytes; one whose edits only
// added attributes is its bytes and the added attributes, as more
// KeyValues of the repeated attributes, which a reader appends to the ones
// before (the same list, new keys last, as the view has it). Otherwise the
// fields of the view's slots that kept their values are copied as the
// bytes have them, and the changed ones (and the time, once set) are
// written from the view after them: the same message, its fields in
// another order. A root whose entries are not the view's keys in the
// view's order is encoded from the view (ok false).
func appendWire(dst []byte, r *Record, e *OTLPEncoder) (out []byte, ok bool) {
	a := r.a
	if r.root == r.decoded && r.flags&recTimeSet == 0 {
		return append(dst, a.raw(r.wire())...), true
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
		case f.ID == ViewResource || f.ID == ViewScope:
			continue
		case f.ID == ViewAttributes && attributesAdded(a, cur[i+1], was[i+1]):
			attr = i + 1
			continue
		}
		changed |= 1 << f.ID
		at[f.ID] = int32(i + 1)
	}
	timeSet := r.flags&recTimeSet != 0 || changed&(1<<ViewObservedTime) != 0 // time_unix_nano may read the observed time
	if (changed != 0 || timeSet) && r.flags&recProj != 0 {
		// A projection's unbuilt slots and attributes are not the
		// record's: wholeRoot decodes them, and the view is written.
		return dst, false
	}
	raw := a.raw(r.wire())
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
			if field == lrTime && !timeSet || field != lrTime && changed&(1<<wireSlot[field]) == 0 {
				dst = append(dst, raw[i:next]...)
			}
			i = next
		}
		for m := changed; m != 0; m &= m - 1 {
			id := ViewID(bits.TrailingZeros32(m))
			dst = e.appendField(dst, a, id, cur[at[id]])
		}
		if timeSet {
			var observed int64
			if v, _ := a.lookup(r.root, rootView[ViewObservedTime].Name, 0); v.kind() == Timestamp {
				observed = v.Time()
			}
			if t := r.otlpTimeUnixNano(observed); t != 0 {
				dst = appendFixed64Field(dst, lrTime, uint64(t))
			}
		}
	}
	if attr >= 0 {
		added, old := a.entries(cur[attr]), a.entries(was[attr])
		for i := len(old); i < len(added); i += 2 {
			dst = appendKeyValue(dst, lrAttributes, a, added[i], added[i+1])
		}
	}
	return dst, true
}

// wireSlot is the view slot of each LogRecord field a clean decode knows
// (time_unix_nano is the record's time, not a slot).
var wireSlot = func() (t [lrEventName + 1]ViewID) {
	for _, f := range rootView {
		if f.num != 0 {
			t[f.num] = f.ID
		}
	}
	return t
}()

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
	if r.wire().kind() == Bytes && !e.FromViews {
		if out, ok := appendWire(dst, r, e); ok {
			return out
		}
	}
	a, root := r.a, r.wholeRoot()
	if r.layout != layoutOTLP {
		if r.time != 0 {
			dst = appendFixed64Field(dst, lrTime, uint64(r.time))
		}
		var at int
		dst, at = openField(dst, lrBody)
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
		case f.ID == ViewObservedTime && v.kind() == Timestamp:
			observed = v.Time()
		}
		dst = e.appendField(dst, a, f.ID, v)
	}
	if unknown {
		// A key the view does not have (an embedder's edit that CheckOTLP
		// would refuse) is kept as an attribute rather than lost.
		for it := a.Iter(root); it.Next(); {
			if viewField(rootView, a.str(it.Key())) == nil {
				dst = appendKeyValue(dst, lrAttributes, a, it.Key(), it.Value())
			}
		}
	}
	if t := r.otlpTimeUnixNano(observed); t != 0 {
		dst = appendFixed64Field(dst, lrTime, uint64(t))
	}
	return dst
}

// appendField writes the LogRecord field of view slot id, whose value is
// v; nothing for a value at its default, or for the resource and scope,
// which are not fields of a LogRecord.
func (e *OTLPEncoder) appendField(dst []byte, a *Arena, id ViewID, v Value) []byte {
	switch id {
	case ViewBody:
		if v.kind() != Absent {
			var at int
			dst, at = openField(dst, lrBody)
			dst = appendAnyValue(dst, a, v)
			dst = closeField(dst, at)
		}
	case ViewAttributes:
		dst = appendKeyValues(dst, lrAttributes, a, v)
	case ViewSeverityText:
		dst = appendStringField(dst, lrSeverityText, a, v)
	case ViewSeverityNumber:
		if v.kind() == Int && v.Int() != 0 {
			dst = appendTag(dst, lrSeverityNumber, wireVarint)
			dst = appendVarint(dst, uint64(int64(int32(v.Int()))))
		}
	case ViewObservedTime:
		if v.kind() == Timestamp && v.Time() != 0 {
			dst = appendFixed64Field(dst, lrObservedTime, uint64(v.Time()))
		}
	case ViewTraceID:
		dst = e.appendID(dst, lrTraceID, a, v, &rootView[ViewTraceID])
	case ViewSpanID:
		dst = e.appendID(dst, lrSpanID, a, v, &rootView[ViewSpanID])
	case ViewFlags:
		if v.kind() == Int && v.Int() != 0 {
			dst = appendTag(dst, lrFlags, wireFixed32)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v.Int()))
		}
	case ViewEventName:
		dst = appendStringField(dst, lrEventName, a, v)
	case ViewDropped:
		dst = appendUintField(dst, lrDropped, v)
	}
	return dst
}

// appendID writes the hex trace or span id of f as its bytes; "" (and
// anything that is not hex of the id's length) is left out.
func (e *OTLPEncoder) appendID(dst []byte, field int, a *Arena, v Value, f *ViewField) []byte {
	if v.kind() != String || int(v.n()) != 2*f.HexLen {
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
		dst = appendUTF8Field(dst, kvKey, a.raw(k))
	}
	if v.kind() != Null && v.kind() != Absent {
		dst, vat = openField(dst, kvValue)
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
		return appendUTF8Field(dst, avString, a.raw(v))
	case Bool:
		dst = appendTag(dst, avBool, wireVarint)
		return append(dst, byte(v.u))
	case Int:
		dst = appendTag(dst, avInt, wireVarint)
		return appendVarint(dst, v.u)
	case Float:
		return appendFixed64Field(dst, avDouble, math.Float64bits(v.Float()))
	case Bytes:
		return appendBytesField(dst, avBytes, a.raw(v))
	case Timestamp:
		var at int
		dst, at = openField(dst, avString)
		dst = time.Unix(0, v.Time()).UTC().AppendFormat(dst, time.RFC3339Nano)
		return closeField(dst, at)
	case Array:
		var at int
		dst, at = openField(dst, avArray)
		for i := 0; i < int(v.n()); i++ {
			var et int
			dst, et = openField(dst, listValues)
			dst = appendAnyValue(dst, a, a.nodes[int(v.off())+i])
			dst = closeField(dst, et)
		}
		return closeField(dst, at)
	case Map:
		var at int
		dst, at = openField(dst, avKvlist)
		dst = appendKeyValues(dst, listValues, a, v)
		return closeField(dst, at)
	}
	return dst
}
