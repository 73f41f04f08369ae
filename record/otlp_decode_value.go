package record

import (
	"encoding/binary"
	"math"
	"strconv"
)

// The values of OTLP's protobuf: KeyValue lists, AnyValue and its array
// and kvlist members, decoded into arena nodes.

// keyValueField decodes one KeyValue field at i onto the scratch, its
// value at depth.
func (d *otlpDecoder) keyValueField(wt, at, i, end, depth int, what string) (int, error) {
	if wt != wireBytes {
		return i, decodeErr(at, ErrWireType, what+" has wire type "+strconv.Itoa(wt)+", not 2")
	}
	var s, e int
	var err error
	if b := d.w.b; i < end && b[i] < 0x80 && int(b[i]) < end-i { // bytesField by hand
		s, e = i+1, i+1+int(b[i])
	} else if s, e, err = d.w.bytesFieldLong(i, end); err != nil {
		return i, err
	}
	k, v, err := d.keyValue(s, e, depth)
	if err != nil {
		return i, err
	}
	d.a.scratch = append(d.a.scratch, k, v)
	return e, nil
}

func (d *otlpDecoder) keyValue(s, e, depth int) (Value, Value, error) {
	w := d.w
	// The common layout first: the key, then the value, each once and
	// shorter than 128 bytes.
	if b := w.b; e-s >= 4 && b[s] == kvKey<<3|wireBytes && b[s+1] < 0x80 {
		ke := s + 2 + int(b[s+1])
		if ke+2 <= e && b[ke] == kvValue<<3|wireBytes && b[ke+1] < 0x80 && ke+2+int(b[ke+1]) == e {
			// A string value: key and string checked in one look
			// (checkKeyValue says why that holds).
			if vs := ke + 2; e-vs >= 2 && b[vs] == avString<<3|wireBytes && b[vs+1] < 0x80 && vs+2+int(b[vs+1]) == e && validUTF8(b[s:e]) {
				key := d.str(s+2, ke-s-2)
				key.setSig(keySig(b[s+2 : ke]))
				return key, d.str(vs+2, e-vs-2), nil
			}
			key, err := d.utf8Str(s+2, ke, keyValueMsg.what(kvKey))
			if err != nil {
				return Value{}, Value{}, err
			}
			key.setSig(keySig(b[s+2 : ke]))
			v, err := d.anyValue(ke+2, e, depth)
			return key, v, err
		}
	}
	key := d.str(s, 0)
	var val occurrences
	for i := s; i < e; {
		field, wt, j, err := w.tag(i, e)
		if err != nil {
			return Value{}, Value{}, err
		}
		if field > kvValue {
			d.dirty = true
			if i, err = w.skip(wt, i, j, e); err != nil {
				return Value{}, Value{}, err
			}
			continue
		}
		if wt != wireBytes {
			return Value{}, Value{}, keyValueMsg.wantType(i, field, wt)
		}
		fs, fe, err := w.bytesField(j, e)
		if err != nil {
			return Value{}, Value{}, err
		}
		if field == kvKey {
			if key, err = d.utf8Str(fs, fe, keyValueMsg.what(kvKey)); err != nil {
				return Value{}, Value{}, err
			}
		} else {
			val.add(fs, fe)
		}
		i = fe
	}
	key.setSig(keySig(w.b[key.off()-d.base : key.off()-d.base+key.n()]))
	if val.n == 0 {
		return key, NullValue(), nil
	}
	vd, vs, ve, err := d.view(&val)
	if err != nil {
		return Value{}, Value{}, err
	}
	v, err := vd.anyValue(vs, ve, depth)
	return key, v, val.origin(err)
}

// anyValue decodes an AnyValue at [s, e); depth is the depth an array or
// kvlist in it would have. The oneof's last member wins; an AnyValue with
// no member is null.
func (d *otlpDecoder) anyValue(s, e, depth int) (Value, error) {
	w := d.w
	// The common layouts first: one scalar member.
	if b := w.b; e-s >= 2 {
		switch b[s] {
		case avString<<3 | wireBytes:
			if n := int(b[s+1]); n < 0x80 && s+2+n == e {
				return d.utf8Str(s+2, e, anyValueMsg.what(avString))
			}
		case avInt<<3 | wireVarint:
			if u, j, err := w.varint(s+1, e); err == nil && j == e {
				return IntValue(int64(u)), nil
			}
		case avDouble<<3 | wireFixed64:
			if e-s == 9 {
				return FloatValue(math.Float64frombits(binary.LittleEndian.Uint64(b[s+1:]))), nil
			}
		case avBool<<3 | wireVarint:
			if u, j, err := w.varint(s+1, e); err == nil && j == e {
				return BoolValue(u != 0), nil
			}
		}
	}
	v := NullValue()
	member := 0
	var msg occurrences // the occurrences of an array or kvlist member
	for i := s; i < e; {
		field, wt, j, err := w.tag(i, e)
		if err != nil {
			return Value{}, err
		}
		if field > avBytes {
			d.dirty = true
			if i, err = w.skip(wt, i, j, e); err != nil {
				return Value{}, err
			}
			continue
		}
		if member != 0 {
			d.dirty = true // a member again, or another: the last wins
		}
		if wt != anyValueWire[field] {
			return Value{}, anyValueMsg.wantType(i, field, wt)
		}
		if field != member && msg.n > 0 {
			// Another member replaces an array or kvlist, which
			// protobuf parses all the same: a bad one is refused.
			m := d.a.mark()
			if _, err := d.message(member, &msg, depth); err != nil {
				return Value{}, err
			}
			d.a.rollback(m)
			msg.reset()
		}
		member = field
		var u uint64
		switch field {
		case avBool, avInt:
			if u, i, err = w.varint(j, e); err != nil {
				return Value{}, err
			}
			if field == avBool {
				v = BoolValue(u != 0)
			} else {
				v = IntValue(int64(u))
			}
			continue
		case avDouble:
			if u, i, err = w.fixed64(j, e); err != nil {
				return Value{}, err
			}
			v = FloatValue(math.Float64frombits(u))
			continue
		}
		fs, fe, err := w.bytesField(j, e)
		if err != nil {
			return Value{}, err
		}
		switch field {
		case avString:
			if v, err = d.utf8Str(fs, fe, anyValueMsg.what(avString)); err != nil {
				return Value{}, err
			}
		case avBytes:
			v = strValue(Bytes, d.ref, d.base+uint32(fs), uint32(fe-fs))
		default:
			msg.add(fs, fe)
		}
		i = fe
	}
	if member != avArray && member != avKvlist {
		return v, nil
	}
	return d.message(member, &msg, depth)
}

// message decodes the array or kvlist member of an AnyValue from its
// occurrences.
func (d *otlpDecoder) message(member int, msg *occurrences, depth int) (Value, error) {
	if depth > d.maxDepth {
		return Value{}, depthErr(msg.s, d.maxDepth)
	}
	md, ms, me, err := d.view(msg)
	if err != nil {
		return Value{}, err
	}
	kind := Map
	if member == avArray {
		kind = Array
	}
	v, err := md.list(kind, ms, me, depth)
	return v, msg.origin(err)
}

// The wire types of the LogRecord's and the AnyValue's fields by number,
// copied out of the table: the hottest loops index them.
var (
	logRecordWire = logRecordMsg.byNum.wire
	anyValueWire  = anyValueMsg.byNum.wire
)

// list and logRecord, the hot paths, are plain loops over their fields
// (a closure for fields costs a call per field). A failure leaves scratch
// values behind, which the decode's rollback drops.

// list decodes the values of an ArrayValue (kind Array) or the KeyValues
// of a KeyValueList (kind Map): both messages are one repeated field,
// listValues.
func (d *otlpDecoder) list(kind Kind, s, e, depth int) (Value, error) {
	w := d.w
	start := len(d.a.scratch)
	for i := s; i < e; {
		field, wt, j, err := w.tag(i, e)
		if err != nil {
			return Value{}, err
		}
		if field != listValues {
			d.dirty = true
			if i, err = w.skip(wt, i, j, e); err != nil {
				return Value{}, err
			}
			continue
		}
		if kind == Map {
			if i, err = d.keyValueField(wt, i, j, e, depth+1, kvListMsg.what(listValues)); err != nil {
				return Value{}, err
			}
			continue
		}
		if wt != wireBytes {
			return Value{}, arrayValueMsg.wantType(i, field, wt)
		}
		fs, fe, err := w.bytesField(j, e)
		if err != nil {
			return Value{}, err
		}
		v, err := d.anyValue(fs, fe, depth+1)
		if err != nil {
			return Value{}, err
		}
		d.a.scratch = append(d.a.scratch, v)
		i = fe
	}
	return d.finish(kind, start), nil
}
