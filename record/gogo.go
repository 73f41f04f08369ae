package record

import (
	"slices"
	"time"
)

// ToGo returns the record's map (edits included) as Go values: nil (null),
// bool, int64, float64, string, []byte, time.Time (UTC), []any and
// map[string]any. It allocates: it is for tests, not the hot path.
func (r *Record) ToGo() map[string]any {
	m, _ := r.a.toGo(r.root).(map[string]any)
	return m
}

// toGo converts v to Go values: nil (null and absent), bool, int64, float64,
// string, []byte, time.Time (UTC), []any and map[string]any.
func (a *Arena) toGo(v Value) any {
	switch v.kind() {
	case Bool:
		return v.Bool()
	case Int:
		return v.Int()
	case Float:
		return v.Float()
	case String:
		return string(a.raw(v))
	case Bytes:
		return slices.Clone(a.raw(v))
	case Timestamp:
		return time.Unix(0, v.Time()).UTC()
	case Array:
		out := make([]any, 0, v.n())
		for it := a.Iter(v); it.Next(); {
			out = append(out, a.toGo(it.Value()))
		}
		return out
	case Map:
		out := make(map[string]any, v.n())
		for it := a.Iter(v); it.Next(); {
			out[string(a.raw(it.Key()))] = a.toGo(it.Value())
		}
		return out
	}
	return nil
}

// ValueEqual reports whether x (of arena xa) and y (of arena ya) are deeply
// equal: same kinds (an int never equals a float), same scalars (floats by
// ==, except that NaN equals NaN), same bytes, arrays in order, maps with
// the same keys and values in any order.
func ValueEqual(xa *Arena, x Value, ya *Arena, y Value) bool {
	return valueEqual(xa, x, ya, y, false)
}

// valueEqual is ValueEqual, or with floatBits encodeEqual: floats equal
// when their bits are.
func valueEqual(xa *Arena, x Value, ya *Arena, y Value, floatBits bool) bool {
	if x.kind() != y.kind() {
		return false
	}
	switch x.kind() {
	case Absent, Null:
		return true
	case Bool, Int, Timestamp:
		return x.u == y.u
	case Float:
		if floatBits {
			return x.u == y.u
		}
		f, g := x.Float(), y.Float()
		return f == g || f != f && g != g // NaN equals NaN here
	case String, Bytes:
		return string(xa.raw(x)) == string(ya.raw(y))
	case Array:
		if x.n() != y.n() {
			return false
		}
		for i := 0; i < int(x.n()); i++ {
			if !valueEqual(xa, xa.nodes[int(x.off())+i], ya, ya.nodes[int(y.off())+i], floatBits) {
				return false
			}
		}
		return true
	case Map:
		if x.n() != y.n() {
			return false
		}
		for it := xa.Iter(x); it.Next(); {
			k := xa.raw(it.Key())
			w, ok := ya.lookup(y, string(k), keySig(k))
			if !ok || !valueEqual(xa, it.Value(), ya, w, floatBits) {
				return false
			}
		}
		return true
	}
	return false
}
