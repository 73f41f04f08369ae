package record

import (
	"encoding/hex"
	"strconv"
)

// viewKeys holds the names of the view's keys: a decode registers it as
// one input buffer, and the keys of every decoded record point into it.
var (
	viewKeys     []byte
	rootKeys     [numRootFields]Value
	resourceKeys [numResourceFields]Value
	scopeKeys    [numScopeFields]Value
)

func init() {
	add := func(fields []ViewField, keys []Value) {
		for _, f := range fields {
			k := strValue(String, 0, uint32(len(viewKeys)), uint32(len(f.Name)))
			k.setSig(keySig(f.Name))
			k.h |= flagPlain
			keys[f.ID] = k
			viewKeys = append(viewKeys, f.Name...)
		}
	}
	add(rootView, rootKeys[:])
	add(resourceView, resourceKeys[:])
	add(scopeView, scopeKeys[:])
}

// DecodeOTLP decodes a protobuf ExportLogsServiceRequest, appending one
// record per LogRecord to dst. Strings and bytes point into req (Referenced:
// keep req unchanged until the arena's Reset) or into the arena (Owned).
// Each group's resource and scope are decoded once and shared by the
// group's records (edits copy them). A request that does not decode adds no
// record: the error, a *DecodeError, says what and at which byte.
func (a *Arena) DecodeOTLP(req []byte, mode Mode, dst []*Record) ([]*Record, error) {
	return a.decodeOTLPProjection(req, mode, dst, &OTLPProjection{Fields: OTLPAllFields})
}

func (a *Arena) decodeOTLPProjection(req []byte, mode Mode, dst []*Record, p *OTLPProjection) ([]*Record, error) {
	m, nrec, n0 := a.mark(), a.nrec, len(dst)
	keep := p.Fields & OTLPAllFields
	if p.Wire {
		keep |= 1<<ViewResource | 1<<ViewScope // the encoder groups by them
	}
	d := otlpDecoder{w: wire{req}, a: a, maxDepth: a.Limits.maxDepth(), recs: dst, keep: keep, recLimit: a.Limits.recordLimit(n0)}
	d.built, d.wire = uint32(d.keep), p.Wire && d.keep != OTLPAllFields
	if d.keep&(1<<ViewAttributes) == 0 && p.Attributes != nil {
		d.attrKeys, d.someAttrs = p.Attributes, true
		d.built |= 1 << ViewAttributes
	}
	if mode == Owned {
		d.base = uint32(len(a.slab))
		a.slab = append(a.slab, req...)
	} else {
		d.ref = a.addBuf(req)
	}
	d.kref = a.addBuf(viewKeys)
	if err := d.request(); err != nil {
		a.rollback(m)
		a.nrec = nrec
		clear(d.recs[n0:])
		clear(dst[n0:cap(dst)])
		return dst, err
	}
	return d.recs, nil
}

type otlpDecoder struct {
	w wire
	a *Arena
	// ref and base say where the bytes of w live: in the arena's input
	// buffer ref-1, or (ref 0) in its slab at base.
	ref, base uint32
	kref      uint32 // the buffer of viewKeys
	// recLimit is the length of recs past which the request holds too
	// many records (Limits.MaxRecords); 0 for no bound.
	recLimit int
	maxDepth int
	recs     []*Record
	// dirty is set when the LogRecord being decoded holds something its
	// view does not say again: a field skipped (unknown, or replaced
	// in a oneof), an occurrence merged, a duplicate key dropped. A
	// record decoded clean keeps its bytes, which the encoder copies
	// while no edit changed it (OTLPEncoder.AppendProto).
	dirty bool
	// keep is the keys of the view each record's root is built with
	// (DecodeOTLPFields); the others are only checked.
	keep OTLPFields
	// someAttrs: the attributes are built with only the keys attrKeys
	// (OTLPProjection.Attributes).
	someAttrs bool
	attrKeys  []string
	built     uint32 // the keys of the root: keep, and the attributes with someAttrs
	// wire: a projection stands on the LogRecord's bytes (OTLPProjection.Wire),
	// so the checks also look for keys sent twice, which make it dirty.
	wire bool
	// attrDups: the keys of the LogRecord's attributes checked so far
	// (they need not come one after another).
	attrDups keyDups
}

func (d *otlpDecoder) str(i, n int) Value {
	return strValue(String, d.ref, d.base+uint32(i), uint32(n))
}

// utf8Str is the string field at [s, e), which must be valid UTF-8.
func (d *otlpDecoder) utf8Str(s, e int, what string) (Value, error) {
	if !validUTF8(d.w.b[s:e]) {
		return Value{}, decodeErr(s, ErrInvalidUTF8, what)
	}
	return d.str(s, e-s), nil
}

func (d *otlpDecoder) key(keys []Value, id ViewID) Value {
	k := keys[id]
	k.ref = d.kref
	return k
}

// fixedMap makes a map of the view's keys with vals (Absent values left out).
func (d *otlpDecoder) fixedMap(keys []Value, vals []Value) Value {
	a := d.a
	n := 0
	for _, v := range vals {
		if v.kind() != Absent {
			n++
		}
	}
	first := a.alloc(2 * n)
	j := first
	for id, v := range vals {
		if v.kind() == Absent {
			continue
		}
		a.nodes[j] = d.key(keys, ViewID(id))
		a.nodes[j+1] = v
		j += 2
	}
	return containerValue(Map, uint32(first), uint32(n))
}

// finish turns the scratch values from start on into a map (key, value
// pairs, duplicates removed as in JSON: first position, last value) or an
// array.
func (d *otlpDecoder) finish(kind Kind, start int) Value {
	a := d.a
	kv := a.scratch[start:]
	n := len(kv)
	if kind == Map {
		n = 2 * a.dedup(kv)
		if n < len(kv) {
			d.dirty = true
		}
	}
	first := a.alloc(n)
	copy(a.nodes[first:], kv[:n])
	a.scratch = a.scratch[:start]
	return containerValue(kind, uint32(first), uint32(n/width(kind)))
}

// fields calls f for every field of the message at [s, e).
func (d *otlpDecoder) fields(s, e int, f func(field, wt, at, i int) (int, error)) error {
	for i := s; i < e; {
		field, wt, j, err := d.w.tag(i, e)
		if err != nil {
			return err
		}
		if i, err = f(field, wt, i, j); err != nil {
			return err
		}
	}
	return nil
}

func (d *otlpDecoder) request() error {
	w := d.w
	return d.fields(0, len(w.b), func(field, wt, at, i int) (int, error) {
		if field != reqResourceLogs {
			return w.skip(wt, at, i, len(w.b))
		}
		if wt != wireBytes {
			return i, requestMsg.wantType(at, field, wt)
		}
		s, e, err := w.bytesField(i, len(w.b))
		if err != nil {
			return i, err
		}
		return e, d.resourceLogs(s, e)
	})
}

func (d *otlpDecoder) resourceLogs(s, e int) error {
	return d.group(s, e, &resourceLogsMsg, func(fs, fe int, resource Value) error {
		return d.scopeLogs(fs, fe, resource)
	})
}

// group decodes a ResourceLogs or ScopeLogs at [s, e): a first pass finds
// the head (merged when repeated) and the schema_url, which may
// come after the children; they are decoded into the group's one resource
// or scope map; then each child is decoded with it.
func (d *otlpDecoder) group(s, e int, g *protoMessage, child func(s, e int, head Value) error) error {
	w := d.w
	var occ occurrences
	schema := d.str(s, 0)
	err := d.fields(s, e, func(field, wt, at, i int) (int, error) {
		if field > groupSchemaURL {
			return w.skip(wt, at, i, e)
		}
		if wt != wireBytes {
			return i, g.wantType(at, field, wt)
		}
		fs, fe, err := w.bytesField(i, e)
		if err != nil {
			return i, err
		}
		switch field {
		case groupHead:
			occ.add(fs, fe)
		case groupSchemaURL:
			if schema, err = d.utf8Str(fs, fe, g.what(groupSchemaURL)); err != nil {
				return i, err
			}
		}
		return fe, nil
	})
	if err != nil {
		return err
	}
	hd, hs, he, err := d.view(&occ)
	if err != nil {
		return err
	}
	var v Value
	if g == &resourceLogsMsg { // not a func value: d would escape through it
		v, err = hd.resource(hs, he, schema)
	} else {
		v, err = hd.scope(hs, he, schema)
	}
	if err != nil {
		return occ.origin(err)
	}
	return d.fields(s, e, func(field, wt, at, i int) (int, error) {
		if field != groupChildren {
			return w.skip(wt, at, i, e)
		}
		fs, fe, _ := w.bytesField(i, e) // checked by the first pass
		return fe, child(fs, fe, v)
	})
}

// resource decodes a Resource at [s, e) (an empty one when s == e).
func (d *otlpDecoder) resource(s, e int, schema Value) (Value, error) {
	w := d.w
	start := len(d.a.scratch)
	dropped := IntValue(0)
	err := d.fields(s, e, func(field, wt, at, i int) (int, error) {
		switch field {
		case resAttributes:
			return d.keyValueField(wt, at, i, e, 4, resourceMsg.what(resAttributes))
		case resDropped:
			v, j, err := d.droppedCount(&resourceMsg, field, wt, at, i, e)
			dropped = v
			return j, err
		case resEntityRefs:
			if wt == wireBytes {
				fs, fe, err := w.bytesField(i, e)
				if err != nil {
					return i, err
				}
				return fe, d.entityRef(fs, fe)
			}
		}
		return w.skip(wt, at, i, e) // fields of later versions
	})
	if err != nil {
		return Value{}, err
	}
	var vals [numResourceFields]Value
	vals[ViewResAttributes] = d.finish(Map, start)
	vals[ViewResDropped] = dropped
	vals[ViewResSchemaURL] = schema
	return d.fixedMap(resourceKeys[:], vals[:]), nil
}

// droppedCount decodes the dropped_attributes_count field of msg (a
// Resource or an InstrumentationScope), a uint32, at [i, e).
func (d *otlpDecoder) droppedCount(msg *protoMessage, field, wt, at, i, e int) (Value, int, error) {
	if wt != wireVarint {
		return Value{}, i, msg.wantType(at, field, wt)
	}
	u, j, err := d.w.varint(i, e)
	return IntValue(int64(uint32(u))), j, err
}

// entityRef checks an EntityRef of a Resource's entity_refs at [s, e),
// which the view leaves out, as protobuf does: its strings must be UTF-8.
func (d *otlpDecoder) entityRef(s, e int) error {
	w := d.w
	return d.fields(s, e, func(field, wt, at, i int) (int, error) {
		if field > entityDescriptionKeys || wt != wireBytes {
			return w.skip(wt, at, i, e)
		}
		fs, fe, err := w.bytesField(i, e)
		if err != nil {
			return i, err
		}
		if !validUTF8(w.b[fs:fe]) {
			return i, decodeErr(fs, ErrInvalidUTF8, entityRefMsg.what(field))
		}
		return fe, nil
	})
}

func (d *otlpDecoder) scopeLogs(s, e int, resource Value) error {
	return d.group(s, e, &scopeLogsMsg, func(fs, fe int, scope Value) error {
		return d.logRecord(fs, fe, resource, scope)
	})
}

// scope decodes an InstrumentationScope at [s, e).
func (d *otlpDecoder) scope(s, e int, schema Value) (Value, error) {
	w := d.w
	start := len(d.a.scratch)
	var vals [numScopeFields]Value
	vals[ViewScopeName], vals[ViewScopeVersion] = d.str(s, 0), d.str(s, 0)
	vals[ViewScopeDropped] = IntValue(0)
	err := d.fields(s, e, func(field, wt, at, i int) (int, error) {
		switch field {
		case scName, scVersion:
			if wt != wireBytes {
				return i, scopeMsg.wantType(at, field, wt)
			}
			fs, fe, err := w.bytesField(i, e)
			if err != nil {
				return i, err
			}
			if field == scName {
				vals[ViewScopeName], err = d.utf8Str(fs, fe, scopeMsg.what(field))
			} else {
				vals[ViewScopeVersion], err = d.utf8Str(fs, fe, scopeMsg.what(field))
			}
			return fe, err
		case scAttributes:
			return d.keyValueField(wt, at, i, e, 4, scopeMsg.what(scAttributes))
		case scDropped:
			v, j, err := d.droppedCount(&scopeMsg, field, wt, at, i, e)
			vals[ViewScopeDropped] = v
			return j, err
		}
		return w.skip(wt, at, i, e)
	})
	if err != nil {
		return Value{}, err
	}
	vals[ViewScopeAttributes] = d.finish(Map, start)
	vals[ViewScopeSchemaURL] = schema
	return d.fixedMap(scopeKeys[:], vals[:]), nil
}

// logRecord decodes a LogRecord at [s, e) into a record.
func (d *otlpDecoder) logRecord(s, e int, resource, scope Value) error {
	w := d.w
	a := d.a
	if d.recLimit > 0 && len(d.recs) >= d.recLimit {
		return a.Limits.tooMany(s)
	}
	start := len(a.scratch)
	var (
		vals          [numRootFields]Value
		unix, obs     uint64
		body          occurrences
		trace, span   [2]int
		sevNum, flags int64
		dropped       int64
	)
	vals[ViewSeverityText], vals[ViewEventName] = d.str(s, 0), d.str(s, 0)
	d.dirty = false
	if d.wire {
		d.attrDups.reset()
	}
	for i := s; i < e; {
		// wire.tag and bytesField by hand where they are hottest: their
		// one-byte cases do not inline.
		var field, wt, j int
		var err error
		if c := w.b[i]; c < 0x80 && c >= 8 {
			field, wt, j = int(c>>3), int(c&7), i+1
		} else if field, wt, j, err = w.tagLong(i, e); err != nil {
			return err
		}
		if field >= len(logRecordWire) || logRecordWire[field] < 0 {
			d.dirty = true
			if i, err = w.skip(wt, i, j, e); err != nil {
				return err
			}
			continue
		}
		if wt != logRecordWire[field] {
			return logRecordMsg.wantType(i, field, wt)
		}
		switch wt {
		case wireFixed64:
			var u uint64
			if u, i, err = w.fixed64(j, e); err != nil {
				return err
			}
			if field == lrTime {
				unix = u
			} else {
				obs = u
			}
			continue
		case wireVarint:
			var u uint64
			if u, i, err = w.varint(j, e); err != nil {
				return err
			}
			if field == lrSeverityNumber {
				sevNum = int64(int32(u))
			} else {
				dropped = int64(uint32(u))
			}
			continue
		case wireFixed32:
			var u uint32
			if u, i, err = w.fixed32(j, e); err != nil {
				return err
			}
			flags = int64(u)
			continue
		}
		if field == lrAttributes {
			if d.keep&(1<<ViewAttributes) == 0 {
				if i, err = d.checkAttributes(j, e); err != nil {
					return err
				}
				continue
			}
			for { // and the attributes that follow, without the dispatch
				if i, err = d.keyValueField(wt, i, j, e, 3, logRecordMsg.what(lrAttributes)); err != nil {
					return err
				}
				if i >= e || w.b[i] != lrAttributes<<3|wireBytes {
					break
				}
				j = i + 1
			}
			continue
		}
		var fs, fe int
		if j < e && w.b[j] < 0x80 && int(w.b[j]) < e-j {
			fs, fe = j+1, j+1+int(w.b[j])
		} else if fs, fe, err = w.bytesFieldLong(j, e); err != nil {
			return err
		}
		switch field {
		case lrSeverityText:
			vals[ViewSeverityText], err = d.utf8Str(fs, fe, logRecordMsg.what(lrSeverityText))
		case lrEventName:
			vals[ViewEventName], err = d.utf8Str(fs, fe, logRecordMsg.what(lrEventName))
		case lrBody:
			body.add(fs, fe)
		case lrTraceID:
			trace = [2]int{fs, fe}
		case lrSpanID:
			span = [2]int{fs, fe}
		}
		if err != nil {
			return err
		}
		i = fe
	}
	vals[ViewAttributes] = d.finish(Map, start)
	var err error
	if body.n > 0 && d.keep&(1<<ViewBody) == 0 {
		if err := d.checkedValue(&body, 2); err != nil {
			return err
		}
	} else if body.n > 0 {
		bd, bs, be, err := d.view(&body)
		if err != nil {
			return err
		}
		if vals[ViewBody], err = bd.anyValue(bs, be, 2); err != nil {
			return body.origin(err)
		}
	}
	if vals[ViewTraceID], err = d.id(trace, &rootView[ViewTraceID]); err != nil {
		return err
	}
	if vals[ViewSpanID], err = d.id(span, &rootView[ViewSpanID]); err != nil {
		return err
	}
	vals[ViewSeverityNumber] = IntValue(sevNum)
	vals[ViewObservedTime] = TimestampValue(int64(obs))
	vals[ViewFlags] = IntValue(flags)
	vals[ViewDropped] = IntValue(dropped)
	vals[ViewResource], vals[ViewScope] = resource, scope
	var root Value
	if d.keep == OTLPAllFields {
		root = d.fixedMap(rootKeys[:], vals[:])
	} else if d.wire && (d.dirty || d.attrDups.dup(w.b)) {
		return d.logRecordWhole(s, e, resource, scope)
	} else {
		root = d.projectedRoot(&vals)
	}
	r := a.newOTLPRecord(root, int64(unix), int64(obs))
	if !d.dirty {
		r.decoded, r.src = r.root, strValue(Bytes, d.ref, d.base+uint32(s), uint32(e-s))
		if d.keep != OTLPAllFields {
			r.flags |= recProj
		}
	}
	d.recs = append(d.recs, r)
	return nil
}

// id turns a trace or span id at [r[0], r[1]) into lower-case hex.
func (d *otlpDecoder) id(r [2]int, f *ViewField) (Value, error) {
	n := r[1] - r[0]
	if n == 0 {
		return strValue(String, 0, 0, 0), nil
	}
	if n != f.HexLen {
		return Value{}, decodeErr(r[0], ErrIDLength, logRecordMsg.what(f.num)+" is "+strconv.Itoa(n)+" bytes, not "+strconv.Itoa(f.HexLen))
	}
	if d.keep&(1<<f.ID) == 0 {
		return Value{}, nil // checked, not built
	}
	a := d.a
	off := len(a.slab)
	a.slab = hex.AppendEncode(a.slab, d.w.b[r[0]:r[1]])
	v := strValue(String, 0, uint32(off), uint32(2*n))
	v.h |= flagPlain
	return v, nil
}
