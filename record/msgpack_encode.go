package record

import (
	"encoding/binary"
	"math"
)

// AppendMsgpack appends the record to dst in msgpack, in the layout it was
// decoded from (a bare map for records decoded from JSON or made in Go),
// with its event time written as it was read (integer seconds become an
// EventTime when the time has nanoseconds). The map of a record decoded
// from msgpack is written as its bytes while it is unedited, and spliced
// from them when it is (msgpack_splice.go).
func (r *Record) AppendMsgpack(dst []byte) []byte { return r.appendMsgpackAs(dst, r.layout) }

// appendMsgpackAs appends the record to dst in the given layout. A v2 event
// without metadata gets an empty metadata map.
func (r *Record) appendMsgpackAs(dst []byte, l layout) []byte {
	switch l {
	case layoutEventV1:
		dst = append(dst, 0x92)
		dst = r.appendEventTime(dst)
	case layoutEventV2:
		dst = append(dst, 0x92, 0x92)
		dst = r.appendEventTime(dst)
		if meta := r.meta(); meta.kind() == Map {
			dst = r.a.appendMsgpack(dst, meta)
		} else {
			dst = append(dst, 0x80)
		}
	}
	return r.appendMsgpackBody(dst)
}

func (r *Record) appendEventTime(dst []byte) []byte {
	t := r.time
	switch r.timeFmt {
	case timeInt:
		if t%1e9 == 0 {
			return appendInt(dst, t/1e9)
		}
	case timeFloat:
		return appendFloat64(dst, float64(t)/1e9)
	case timeExt:
		return appendTimestampExt(dst, t)
	}
	sec, nsec := floorDiv(t)
	if sec < 0 || sec > math.MaxUint32 {
		return appendTimestampExt(dst, t) // EventTime holds uint32 seconds
	}
	dst = append(dst, 0xd7, 0x00)
	dst = binary.BigEndian.AppendUint32(dst, uint32(sec))
	return binary.BigEndian.AppendUint32(dst, uint32(nsec))
}

func floorDiv(t int64) (sec, nsec int64) {
	sec, nsec = t/1e9, t%1e9
	if nsec < 0 {
		sec, nsec = sec-1, nsec+1e9
	}
	return sec, nsec
}

// appendTimestampExt writes the msgpack timestamp extension (type -1) in
// its smallest form.
func appendTimestampExt(dst []byte, t int64) []byte {
	sec, nsec := floorDiv(t)
	switch {
	case sec>>34 == 0 && nsec == 0 && sec <= math.MaxUint32:
		dst = append(dst, 0xd6, 0xff)
		return binary.BigEndian.AppendUint32(dst, uint32(sec))
	case sec>>34 == 0:
		dst = append(dst, 0xd7, 0xff)
		return binary.BigEndian.AppendUint64(dst, uint64(nsec)<<34|uint64(sec))
	}
	dst = append(dst, 0xc7, 12, 0xff)
	dst = binary.BigEndian.AppendUint32(dst, uint32(nsec))
	return binary.BigEndian.AppendUint64(dst, uint64(sec))
}

func appendInt(dst []byte, i int64) []byte {
	switch {
	case i >= 0 && i <= 0x7f:
		return append(dst, byte(i))
	case i < 0 && i >= -32:
		return append(dst, byte(i))
	case i >= 0 && i <= math.MaxUint8:
		return append(dst, 0xcc, byte(i))
	case i >= 0 && i <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(i))
	case i >= 0 && i <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(i))
	case i >= math.MinInt8 && i < 0:
		return append(dst, 0xd0, byte(i))
	case i >= math.MinInt16 && i < 0:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(i))
	case i >= math.MinInt32 && i < 0:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(i))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(i))
}

func appendFloat64(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, 0xcb), math.Float64bits(f))
}

func appendHeader(dst []byte, fix byte, fixMax int, c8, c16, c32 byte, n int) []byte {
	switch {
	case n <= fixMax:
		return append(dst, fix|byte(n))
	case c8 != 0 && n <= math.MaxUint8:
		return append(dst, c8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, c16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, c32), uint32(n))
}

func appendStr(dst, s []byte) []byte {
	dst = appendHeader(dst, 0xa0, 31, 0xd9, 0xda, 0xdb, len(s))
	return append(dst, s...)
}

// appendMsgpack appends v to dst in msgpack: ints in their smallest form,
// floats as float64, timestamps as the msgpack timestamp extension (-1).
func (a *Arena) appendMsgpack(dst []byte, v Value) []byte {
	switch v.kind() {
	case Absent, Null:
		return append(dst, 0xc0)
	case Bool:
		if v.u != 0 {
			return append(dst, 0xc3)
		}
		return append(dst, 0xc2)
	case Int:
		return appendInt(dst, v.Int())
	case Float:
		return appendFloat64(dst, v.Float())
	case String:
		return appendStr(dst, a.raw(v))
	case Bytes:
		raw := a.raw(v)
		dst = appendHeader(dst, 0, -1, 0xc4, 0xc5, 0xc6, len(raw))
		return append(dst, raw...)
	case Timestamp:
		return appendTimestampExt(dst, v.Time())
	case Array:
		first, n := int(v.off()), int(v.n())
		dst = appendHeader(dst, 0x90, 15, 0, 0xdc, 0xdd, n)
		for i := 0; i < n; i++ {
			dst = a.appendMsgpack(dst, a.nodes[first+i])
		}
		return dst
	case Map:
		first, n := int(v.off()), int(v.n())
		dst = appendHeader(dst, 0x80, 15, 0, 0xde, 0xdf, n)
		for i := 0; i < n; i++ {
			dst = appendStr(dst, a.raw(a.nodes[first+2*i]))
			dst = a.appendMsgpack(dst, a.nodes[first+2*i+1])
		}
		return dst
	}
	return append(dst, 0xc0)
}
