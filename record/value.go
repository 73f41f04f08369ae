package record

import (
	"math"
	"strconv"
)

// Kind is the type of a Value.
type Kind uint8

// The kinds of values. The zero Value has kind Absent: it stands for a
// missing field, which is different from a field holding null.
const (
	Absent Kind = iota
	Null
	Bool
	Int
	Float
	String
	Bytes
	Timestamp
	Array
	Map
)

var kindNames = [...]string{"absent", "null", "bool", "int", "float", "string", "bytes", "timestamp", "array", "map"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// The flags, kept in bits 8-15 of Value.h.
const (
	// flagWritable marks a container copied by the edit overlay of one
	// record: it may be changed in place, and ref holds its capacity in
	// entries.
	flagWritable = 1 << 8
	// flagPlain marks a string that the JSON decoder found to need no
	// escapes in JSON (printable ASCII but '"' and '\\'), so that the
	// encoder copies it without a scan.
	flagPlain = 2 << 8
	// flagQuoted marks a plain string whose bytes in its buffer lie
	// between two '"': its JSON is those bytes and the quotes, one copy.
	// The JSON decoder's strings in their line and the VM's constants
	// (NewConstString) are so.
	flagQuoted = 4 << 8
	// flagFramed marks a plain key whose bytes lie between `,"` and `":`
	// (newKey writes the keys edits add so): a map entry's JSON up to its
	// value, separator included, is one copy.
	flagFramed = 8 << 8
)

// Value is a handle to one value: a kind plus payload, 16 bytes, no pointers.
// Scalars (null, bool, int, float, timestamp) carry their payload and need no
// arena. Strings, bytes, arrays and maps refer to nodes or bytes of the Arena
// that made them and are read through it (Arena.Bytes, Record.Get, ...).
//
// It has three fields, not one per part: the compiler keeps a struct of up
// to four fields in registers, and one of more in memory, where building it
// from byte stores and reading it back whole stalls on every call.
type Value struct {
	// h packs the kind (bits 0-7), the flags (8-15) and, for map keys,
	// the key's signature (16-23; see keySig), 0 when it is not known.
	h uint32
	// ref is, for strings and bytes, where the bytes live: 0 the arena's
	// slab, i+1 the arena's input buffer i. For writable containers it is
	// the capacity of the node range, in entries.
	ref uint32
	// u is the payload: int64 or float64 bits, 0/1, unix nanoseconds; for
	// strings offset<<32|length; for containers first node<<32|count.
	u uint64
}

func (v Value) kind() Kind    { return Kind(v.h) }
func (v Value) sig() uint8    { return uint8(v.h >> 16) }
func (v Value) flags() uint32 { return v.h & 0xff00 }

func (v *Value) setKind(k Kind)   { v.h = v.h&^0xff | uint32(k) }
func (v *Value) setSig(sig uint8) { v.h = v.h&^0xff0000 | uint32(sig)<<16 }

// NullValue returns a null.
func NullValue() Value { return Value{h: uint32(Null)} }

// BoolValue returns a bool.
func BoolValue(b bool) Value {
	v := Value{h: uint32(Bool)}
	if b {
		v.u = 1
	}
	return v
}

// IntValue returns an int.
func IntValue(i int64) Value { return Value{h: uint32(Int), u: uint64(i)} }

// FloatValue returns a float.
func FloatValue(f float64) Value { return Value{h: uint32(Float), u: math.Float64bits(f)} }

// TimestampValue returns a timestamp of unix nanoseconds.
func TimestampValue(unixNanos int64) Value { return Value{h: uint32(Timestamp), u: uint64(unixNanos)} }

// Kind returns the kind of v.
func (v Value) Kind() Kind { return v.kind() }

// Int returns the int payload; it is meaningful only for kind Int.
func (v Value) Int() int64 { return int64(v.u) }

// Float returns the float payload; it is meaningful only for kind Float.
func (v Value) Float() float64 { return math.Float64frombits(v.u) }

// Bool returns the bool payload; it is meaningful only for kind Bool.
func (v Value) Bool() bool { return v.u != 0 }

// Time returns the unix nanoseconds of a Timestamp.
func (v Value) Time() int64 { return int64(v.u) }

// Bits returns the payload of a scalar as it is stored: an int's two's
// complement, a float's IEEE 754 bits, a timestamp's nanoseconds, 0 or 1.
func (v Value) Bits() uint64 { return v.u }

// isContainer reports whether v is an array or a map.
func (v Value) isContainer() bool { return v.kind() == Array || v.kind() == Map }

// off and n unpack the payload of strings and containers.
func (v Value) off() uint32 { return uint32(v.u >> 32) }
func (v Value) n() uint32   { return uint32(v.u) }

func (v Value) writable() bool { return v.h&flagWritable != 0 }

func strValue(kind Kind, ref, off, n uint32) Value {
	return Value{h: uint32(kind), ref: ref, u: uint64(off)<<32 | uint64(n)}
}

func containerValue(kind Kind, first, n uint32) Value {
	return Value{h: uint32(kind), u: uint64(first)<<32 | uint64(n)}
}
