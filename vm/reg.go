package vm

import (
	"math"

	"github.com/policyrun/policyrun/record"
)

// Reg is one register: a small tagged value. Scalars live in N (int64, the
// bits of a float64, 0/1, unix nanoseconds); strings are a view S into the
// record's input, its arena or the Program's constants, with V set to the
// arena value when there is one (so that storing it copies nothing); maps
// and arrays are the arena value V.
type Reg struct {
	K record.Kind
	N uint64
	S string
	V record.Value
}

// Constructors for constants (Code.Consts) and tests.

// Int returns an int register value.
func Int(i int64) Reg { return Reg{K: record.Int, N: uint64(i)} }

// Float returns a float register value.
func Float(f float64) Reg { return Reg{K: record.Float, N: math.Float64bits(f)} }

// Bool returns a bool register value.
func Bool(b bool) Reg {
	if b {
		return Reg{K: record.Bool, N: 1}
	}
	return Reg{K: record.Bool}
}

// String returns a string register value.
func String(s string) Reg { return Reg{K: record.String, S: s} }

// Null returns null.
func Null() Reg { return Reg{K: record.Null} }

// Timestamp returns a timestamp of unix nanoseconds.
func Timestamp(ns int64) Reg { return Reg{K: record.Timestamp, N: uint64(ns)} }

func (r *Reg) int() int64     { return int64(r.N) }
func (r *Reg) float() float64 { return math.Float64frombits(r.N) }

func setBool(r *Reg, b bool) {
	r.K = record.Bool
	if b {
		r.N = 1
	} else {
		r.N = 0
	}
}

// load loads a record value into r, in place: building the register
// elsewhere and copying it in costs a third of a GET.
func (r *Reg) load(a *record.Arena, v record.Value) {
	switch k := v.Kind(); k {
	case record.String, record.Bytes:
		*r = Reg{K: k, S: a.Str(v), V: v}
	case record.Int, record.Float, record.Timestamp:
		*r = Reg{K: k, N: v.Bits()}
	case record.Bool:
		*r = Bool(v.Bool())
	case record.Map, record.Array:
		*r = Reg{K: k, V: v}
	case record.Null:
		*r = Reg{K: k}
	default:
		*r = Reg{}
	}
}

// toValue turns a register into a value of arena a, copying a string that
// does not live in the arena yet.
func toValue(a *record.Arena, r *Reg) record.Value {
	switch r.K {
	case record.Int:
		return record.IntValue(int64(r.N))
	case record.Float:
		return record.FloatValue(r.float())
	case record.Bool:
		return record.BoolValue(r.N != 0)
	case record.Timestamp:
		return record.TimestampValue(int64(r.N))
	case record.String, record.Bytes:
		if r.V.Kind() == r.K {
			return r.V
		}
		if r.K == record.Bytes {
			return a.NewBytes([]byte(r.S))
		}
		return a.NewStringFrom(r.S)
	case record.Map, record.Array:
		return r.V
	case record.Null:
		return record.NullValue()
	}
	return record.Value{}
}

// Mask is a set of kinds, one bit per record.Kind: what a GUARD accepts.
type Mask uint16

// MaskOf returns the mask of the given kinds.
func MaskOf(kinds ...record.Kind) Mask {
	var m Mask
	for _, k := range kinds {
		m |= 1 << k
	}
	return m
}

// MaskAll accepts every kind.
const MaskAll Mask = 1<<(record.Map+1) - 1

// Has reports whether m accepts kind k.
func (m Mask) Has(k record.Kind) bool { return m&(1<<k) != 0 }

func (m Mask) String() string {
	if m == MaskAll {
		return "any"
	}
	s := ""
	for k := record.Absent; k <= record.Map; k++ {
		if m.Has(k) {
			if s != "" {
				s += "|"
			}
			s += k.String()
		}
	}
	if s == "" {
		return "none"
	}
	return s
}
