package record

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// DecodeMsgpack decodes one msgpack value from the start of b into a new
// record: a Fluent Bit event, [timestamp, map] or [[timestamp, metadata],
// map], with the timestamp an integer or float of seconds or an EventTime
// (ext type 0) or msgpack timestamp (ext type -1); or a bare map. It returns
// the record and the bytes consumed, so that a chunk of events can be walked
// with b = b[n:]. With Referenced, strings point into b. On error the arena
// is as it was before the call.
func (a *Arena) DecodeMsgpack(b []byte, mode Mode) (*Record, int, error) {
	m := a.mark()
	d := a.newMsgpackDecoder(b, mode)
	r, n, err := d.event()
	if err == nil && mode == Owned {
		if err = a.own(m, d.ref, b[:n]); r.src.kind() == Bytes {
			r.src.ref = 0 // the body is in the copy too
			r.src.u += uint64(len(a.slab)-n) << 32
		}
	}
	if err != nil {
		a.rollback(m)
		return nil, 0, d.fixLimit(err)
	}
	return r, n, nil
}

// own turns the values decoded since m, which refer to input buffer ref
// holding in, into values that refer to a copy of in in the slab: one copy
// of the event rather than one per string. A chunk of events is copied
// event by event, never whole.
func (a *Arena) own(m mark, ref uint32, in []byte) error {
	if len(a.slab)+len(in) > math.MaxUint32 {
		return decodeErr(0, ErrTooLarge, "arena full")
	}
	base := uint64(len(a.slab))
	a.slab = append(a.slab, in...)
	for i := m.nodes; i < len(a.nodes); i++ {
		if v := &a.nodes[i]; (v.kind() == String || v.kind() == Bytes) && v.ref == ref {
			v.ref = 0
			v.u += base << 32
		}
	}
	a.rollbackBufs(m)
	return nil
}

type msgpackDecoder struct {
	a        *Arena
	b        []byte
	ref      uint32
	maxDepth int
	bigFloat bool
	cut      bool // b was cut to the input limit
	// norm is set when the value decoded differs from what its bytes
	// mean to other msgpack readers: a duplicate key was dropped, a uint
	// above int64 became a float, a timestamp had nanoseconds past 1e9 or
	// was a Fluent Bit EventTime (which only Fluent Bit reads as a time;
	// the encoder writes msgpack's own timestamp).
	norm bool
}

func (a *Arena) newMsgpackDecoder(b []byte, mode Mode) msgpackDecoder {
	d := msgpackDecoder{a: a, b: b, maxDepth: a.Limits.maxDepth(), bigFloat: !a.Limits.RejectBigInts}
	if max := min(a.Limits.maxInput(), math.MaxUint32); len(b) > max {
		d.b, d.cut = b[:max], true
	}
	// Strings always point into the input; Owned copies them afterwards.
	if n := len(a.bufs); mode == Referenced && n > 0 && len(a.bufs[n-1]) == len(d.b) &&
		len(d.b) > 0 && &a.bufs[n-1][0] == &d.b[0] {
		d.ref = uint32(n) // the same chunk again
	} else {
		d.ref = a.addBuf(d.b)
	}
	return d
}

// fixLimit turns running out of input that was cut to the limit into ErrTooLarge.
func (d *msgpackDecoder) fixLimit(err error) error {
	if d.cut && errors.Is(err, ErrTruncated) {
		return decodeErr(len(d.b), ErrTooLarge, "event larger than "+strconv.Itoa(len(d.b))+" bytes")
	}
	return err
}

func (d *msgpackDecoder) truncated(i int) error { return decodeErr(i, ErrTruncated, "") }

func (d *msgpackDecoder) event() (*Record, int, error) {
	b := d.b
	if len(b) == 0 {
		return nil, 0, d.truncated(0)
	}
	var (
		layout  = layoutMap
		ts      int64
		timeFmt = timeEventTime
		meta    Value
		i       int
		err     error
	)
	if n, j, ok := d.arrayHeader(0); ok {
		if n != 2 {
			return nil, 0, decodeErr(0, ErrNotMap, "an event is an array of 2, not of "+strconv.Itoa(n))
		}
		layout = layoutEventV1
		i = j
		if n, j, ok := d.arrayHeader(i); ok {
			if n != 2 {
				return nil, 0, decodeErr(i, ErrSyntax, "an event's [time, metadata] is an array of 2, not of "+strconv.Itoa(n))
			}
			layout = layoutEventV2
			i = j
		}
		if ts, timeFmt, i, err = d.timestamp(i); err != nil {
			return nil, 0, err
		}
		if layout == layoutEventV2 {
			if i >= len(b) {
				return nil, 0, d.truncated(i)
			}
			if !isMap(b[i]) {
				return nil, 0, decodeErr(i, ErrNotMap, "event metadata is not a map")
			}
			if meta, i, err = d.value(i, 0); err != nil {
				return nil, 0, err
			}
		}
	} else if !isMap(b[0]) {
		if isArray(b[0]) {
			return nil, 0, d.truncated(len(b)) // an array16 or array32 header cut short
		}
		return nil, 0, decodeErr(0, ErrNotMap, "expected a map or a Fluent Bit event")
	}
	if i >= len(b) {
		return nil, 0, d.truncated(i)
	}
	if !isMap(b[i]) {
		return nil, 0, decodeErr(i, ErrNotMap, "event body is not a map")
	}
	body, nodes0 := i, len(d.a.nodes)
	d.norm = false // what the time and metadata were does not matter here
	root, i, err := d.value(i, 0)
	if err != nil {
		return nil, 0, err
	}
	r := d.a.newRecord()
	r.base, r.root = root, root
	if !d.norm || meta.kind() == Map {
		t := r.newText()
		t.meta = meta
		if !d.norm {
			// The body's bytes stand for it: see msgpack_splice.go.
			r.decoded, r.src = root, strValue(Bytes, d.ref, uint32(body), uint32(i-body))
			t.decLo, t.decHi = uint32(nodes0), uint32(len(d.a.nodes))
		}
	}
	r.time, r.baseTime = ts, ts
	r.layout, r.timeFmt = layout, timeFmt
	return r, i, nil
}

func isMap(c byte) bool   { return c&0xf0 == 0x80 || c == 0xde || c == 0xdf }
func isArray(c byte) bool { return c&0xf0 == 0x90 || c == 0xdc || c == 0xdd }

// arrayHeader reads an array header (fixarray, array16 or array32, all of
// which Fluent Bit writes) at i: its length and where its first element
// starts. ok is false when there is no whole array header at i.
func (d *msgpackDecoder) arrayHeader(i int) (n, next int, ok bool) {
	if i >= len(d.b) {
		return 0, i, false
	}
	switch c := d.b[i]; {
	case c&0xf0 == 0x90:
		return int(c & 0x0f), i + 1, true
	case c == 0xdc || c == 0xdd:
		size := 2 << (c - 0xdc)
		u, err := d.uint(i+1, size)
		if err != nil {
			return 0, i, false
		}
		return int(u), i + 1 + size, true
	}
	return 0, i, false
}

// timestamp reads an event time at i.
func (d *msgpackDecoder) timestamp(i int) (int64, uint8, int, error) {
	v, j, err := d.value(i, d.maxDepth) // scalars only: depth is spent
	if err != nil {
		if errors.Is(err, ErrDepth) {
			return 0, 0, i, decodeErr(i, ErrSyntax, "event time is not a number or timestamp")
		}
		return 0, 0, i, err
	}
	switch v.kind() {
	case Int:
		return v.Int() * 1e9, timeInt, j, nil
	case Float:
		f := v.Float()
		if math.IsNaN(f) || math.Abs(f) > math.MaxInt64/1e9 {
			return 0, 0, i, decodeErr(i, ErrNumberRange, "event time")
		}
		sec := math.Floor(f)
		return int64(sec)*1e9 + int64(math.Round((f-sec)*1e9)), timeFloat, j, nil
	case Timestamp:
		f := timeExt
		if d.b[i] == 0xd7 && d.b[i+1] == 0 || d.b[i] == 0xc7 && d.b[i+2] == 0 {
			f = timeEventTime
		}
		return v.Time(), f, j, nil
	}
	return 0, 0, i, decodeErr(i, ErrSyntax, "event time is not a number or timestamp")
}

func (d *msgpackDecoder) need(i, n int) error {
	if n < 0 || len(d.b)-i < n {
		return d.truncated(len(d.b))
	}
	return nil
}

func (d *msgpackDecoder) value(i, depth int) (Value, int, error) {
	b := d.b
	if i >= len(b) {
		return Value{}, i, d.truncated(i)
	}
	c := b[i]
	switch {
	case c <= 0x7f:
		return IntValue(int64(c)), i + 1, nil
	case c >= 0xe0:
		return IntValue(int64(int8(c))), i + 1, nil
	case c <= 0x8f:
		return d.mapN(i, i+1, int(c&0x0f), depth+1)
	case c <= 0x9f:
		return d.arrayN(i, i+1, int(c&0x0f), depth+1)
	case c <= 0xbf:
		n := int(c & 0x1f)
		if s := i + 1; s+n <= len(b) && ascii(b[s:s+n]) {
			return strValue(String, d.ref, uint32(s), uint32(n)), s + n, nil
		}
		return d.str(i, i+1, int(c&0x1f))
	}
	switch c {
	case 0xc0:
		return NullValue(), i + 1, nil
	case 0xc2:
		return BoolValue(false), i + 1, nil
	case 0xc3:
		return BoolValue(true), i + 1, nil
	case 0xca:
		if err := d.need(i+1, 4); err != nil {
			return Value{}, i, err
		}
		return FloatValue(float64(math.Float32frombits(binary.BigEndian.Uint32(b[i+1:])))), i + 5, nil
	case 0xcb:
		if err := d.need(i+1, 8); err != nil {
			return Value{}, i, err
		}
		return FloatValue(math.Float64frombits(binary.BigEndian.Uint64(b[i+1:]))), i + 9, nil
	case 0xcc, 0xcd, 0xce, 0xcf:
		size := 1 << (c - 0xcc)
		u, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		if u > math.MaxInt64 {
			if !d.bigFloat {
				return Value{}, i, decodeErr(i, ErrNumberRange, "integer outside int64")
			}
			d.norm = true
			return FloatValue(float64(u)), i + 1 + size, nil
		}
		return IntValue(int64(u)), i + 1 + size, nil
	case 0xd0, 0xd1, 0xd2, 0xd3:
		size := 1 << (c - 0xd0)
		u, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		shift := 64 - 8*size
		return IntValue(int64(u<<shift) >> shift), i + 1 + size, nil
	case 0xd9, 0xda, 0xdb:
		size := 1 << (c - 0xd9)
		n, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		return d.str(i, i+1+size, int(n))
	case 0xc4, 0xc5, 0xc6:
		size := 1 << (c - 0xc4)
		n, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		return d.bin(i+1+size, int(n))
	case 0xdc, 0xdd:
		size := 2 << (c - 0xdc)
		n, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		return d.arrayN(i, i+1+size, int(n), depth+1)
	case 0xde, 0xdf:
		size := 2 << (c - 0xde)
		n, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		return d.mapN(i, i+1+size, int(n), depth+1)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return d.ext(i, i+1, 1<<(c-0xd4))
	case 0xc7, 0xc8, 0xc9:
		size := 1 << (c - 0xc7)
		n, err := d.uint(i+1, size)
		if err != nil {
			return Value{}, i, err
		}
		return d.ext(i, i+1+size, int(n))
	}
	return Value{}, i, decodeErr(i, ErrSyntax, "invalid msgpack type byte 0xc1")
}

func (d *msgpackDecoder) uint(i, size int) (uint64, error) {
	if err := d.need(i, size); err != nil {
		return 0, err
	}
	b := d.b[i:]
	switch size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), nil
	}
	return binary.BigEndian.Uint64(b), nil
}

func (d *msgpackDecoder) str(at, i, n int) (Value, int, error) {
	if err := d.need(i, n); err != nil {
		return Value{}, at, err
	}
	s := d.b[i : i+n]
	if !validUTF8(s) {
		j := 0
		for j < len(s) {
			r, size := utf8.DecodeRune(s[j:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			j += size
		}
		return Value{}, i + j, decodeErr(i+j, ErrInvalidUTF8, "")
	}
	return strValue(String, d.ref, uint32(i), uint32(n)), i + n, nil
}

func (d *msgpackDecoder) bin(i, n int) (Value, int, error) {
	if err := d.need(i, n); err != nil {
		return Value{}, i, err
	}
	return strValue(Bytes, d.ref, uint32(i), uint32(n)), i + n, nil
}

// ext decodes the ext value at (header at at, type byte at i, n data bytes).
func (d *msgpackDecoder) ext(at, i, n int) (Value, int, error) {
	if err := d.need(i, 1+n); err != nil {
		return Value{}, at, err
	}
	typ, data := int8(d.b[i]), d.b[i+1:i+1+n]
	end := i + 1 + n
	switch {
	case typ == 0 && n == 8: // Fluent Bit EventTime
		d.norm = true
		sec, nsec := binary.BigEndian.Uint32(data), binary.BigEndian.Uint32(data[4:])
		return TimestampValue(int64(sec)*1e9 + int64(nsec)), end, nil
	case typ == -1 && n == 4:
		return TimestampValue(int64(binary.BigEndian.Uint32(data)) * 1e9), end, nil
	case typ == -1 && n == 8:
		u := binary.BigEndian.Uint64(data)
		d.norm = d.norm || u>>34 >= 1e9
		return TimestampValue(int64(u&(1<<34-1))*1e9 + int64(u>>34)), end, nil
	case typ == -1 && n == 12:
		nsec, sec := binary.BigEndian.Uint32(data), int64(binary.BigEndian.Uint64(data[4:]))
		if sec > math.MaxInt64/1_000_000_000-1 || sec < math.MinInt64/1_000_000_000+1 || nsec >= 1e9 {
			return Value{}, at, decodeErr(at, ErrNumberRange, "timestamp outside int64 nanoseconds")
		}
		return TimestampValue(sec*1e9 + int64(nsec)), end, nil
	}
	return Value{}, at, decodeErr(at, ErrSyntax, "unsupported ext type "+strconv.Itoa(int(typ))+
		" of "+strconv.Itoa(n)+" bytes")
}

func (d *msgpackDecoder) arrayN(at, i, n, depth int) (Value, int, error) {
	if depth > d.maxDepth {
		return Value{}, at, depthErr(at, d.maxDepth)
	}
	if n > len(d.b)-i { // every element takes at least a byte
		return Value{}, at, d.truncated(len(d.b))
	}
	a := d.a
	first := a.alloc(n)
	for k := 0; k < n; k++ {
		v, j, err := d.value(i, depth)
		if err != nil {
			return Value{}, j, err
		}
		a.nodes[first+k] = v
		i = j
	}
	return containerValue(Array, uint32(first), uint32(n)), i, nil
}

func (d *msgpackDecoder) mapN(at, i, n, depth int) (Value, int, error) {
	if depth > d.maxDepth {
		return Value{}, at, depthErr(at, d.maxDepth)
	}
	if n > (len(d.b)-i)/2 { // every entry takes at least two bytes
		return Value{}, at, d.truncated(len(d.b))
	}
	a, b := d.a, d.b
	first := a.alloc(2 * n)
	var seen sigSet // key signatures, see dedup
	mayDup := false
	for k := 0; k < n; k++ {
		if i >= len(b) {
			return Value{}, i, d.truncated(i)
		}
		ks, kl := i+1, 0
		var key Value
		var err error
		switch c := b[i]; {
		case c >= 0xa0 && c <= 0xbf:
			kl = int(c & 0x1f)
			if ks+kl <= len(b) && ascii(b[ks:ks+kl]) {
				key = strValue(String, d.ref, uint32(ks), uint32(kl))
				goto haveKey
			}
		case c == 0xd9 || c == 0xda || c == 0xdb:
			size := 1 << (c - 0xd9)
			u, err := d.uint(i+1, size)
			if err != nil {
				return Value{}, i, err
			}
			ks, kl = i+1+size, int(u)
		default:
			return Value{}, i, decodeErr(i, ErrKeyType, "")
		}
		if key, i, err = d.str(i, ks, kl); err != nil {
			return Value{}, i, err
		}
		goto checked
	haveKey:
		i = ks + kl
	checked:
		if !mayDup {
			key.setSig(keySig(b[ks : ks+kl]))
			if seen.add(key.sig()) {
				mayDup = k >= 32 || a.hasKey(a.nodes[first:first+2*k], key)
			}
		}
		var v Value
		j := i
		if i >= len(b) {
			return Value{}, i, d.truncated(i)
		}
		if c := b[i]; c >= 0xa0 && c <= 0xbf && i+1+int(c&0x1f) <= len(b) &&
			ascii(b[i+1:i+1+int(c&0x1f)]) { // the common case, inline
			n := int(c & 0x1f)
			v, j = strValue(String, d.ref, uint32(i+1), uint32(n)), i+1+n
		} else if v, j, err = d.value(i, depth); err != nil {
			return Value{}, j, err
		}
		a.nodes[first+2*k] = key
		a.nodes[first+2*k+1] = v
		i = j
	}
	if mayDup {
		k := n
		n = a.dedup(a.nodes[first : first+2*n])
		d.norm = d.norm || n != k
	}
	return containerValue(Map, uint32(first), uint32(n)), i, nil
}

// MsgpackLen returns the length in bytes of the msgpack value at the start
// of b, read from its headers alone: what a reader skips to get past a value
// that DecodeMsgpack rejects (not an event, bad UTF-8, a key that is not a
// string, an unknown ext type, too deep, too large) and go on with the next
// one. ok is false when the value's extent is unknown: b ends inside it
// (a header that claims more than b holds) or it holds the type byte 0xc1,
// which has no length. It does not recurse, so any depth is walked.
func MsgpackLen(b []byte) (n int, ok bool) {
	i := 0
	for left := uint64(1); left > 0; left-- {
		if i >= len(b) {
			return 0, false
		}
		c := b[i]
		var size, body uint64 // header bytes after the type byte, payload bytes
		var children uint64
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		case c <= 0x8f:
			children = 2 * uint64(c&0x0f)
		case c <= 0x9f:
			children = uint64(c & 0x0f)
		case c <= 0xbf:
			body = uint64(c & 0x1f)
		case c == 0xc1:
			return 0, false
		case c == 0xca:
			body = 4
		case c == 0xcb:
			body = 8
		case c >= 0xcc && c <= 0xcf:
			body = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3:
			body = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8:
			body = 1 + 1<<(c-0xd4) // type byte and data
		default:
			var base uint64
			switch {
			case c >= 0xc4 && c <= 0xc6: // bin
				size = 1 << (c - 0xc4)
			case c >= 0xc7 && c <= 0xc9: // ext: length, then a type byte
				size, base = 1<<(c-0xc7), 1
			case c >= 0xd9 && c <= 0xdb: // str
				size = 1 << (c - 0xd9)
			case c == 0xdc || c == 0xdd, c == 0xde || c == 0xdf:
				size = 2 << ((c - 0xdc) & 1)
			}
			if uint64(len(b)-i-1) < size {
				return 0, false
			}
			var u uint64
			for _, x := range b[i+1 : i+1+int(size)] {
				u = u<<8 | uint64(x)
			}
			switch {
			case c == 0xdc || c == 0xdd:
				children = u
			case c == 0xde || c == 0xdf:
				children = 2 * u
			default:
				body = base + u
			}
		}
		if uint64(len(b)-i-1)-size < body {
			return 0, false
		}
		i += 1 + int(size) + int(body)
		// Every value takes at least a byte: more children than bytes
		// left means b ends inside this value.
		if children > uint64(len(b)-i) {
			return 0, false
		}
		left += children
	}
	return i, true
}
