package record

import (
	"fmt"
	"math"
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

// newRecordFromGo returns a new record holding m (keys in sorted order, as
// Go maps have none).
func (a *Arena) newRecordFromGo(m map[string]any) (*Record, error) {
	v, err := a.fromGo(m)
	if err != nil {
		return nil, err
	}
	r := a.newRecord()
	r.base, r.root = v, v
	return r, nil
}

// fromGo converts a Go value to a Value of the arena. It accepts nil, bool,
// every int and uint type (uints above MaxInt64 become floats), float32 and
// float64, string, []byte, time.Time, []any, []string, map[string]any and
// map[string]string. Map keys are added in sorted order.
func (a *Arena) fromGo(x any) (Value, error) {
	switch x := x.(type) {
	case nil:
		return NullValue(), nil
	case Value:
		return x, nil
	case bool:
		return BoolValue(x), nil
	case int:
		return IntValue(int64(x)), nil
	case int8:
		return IntValue(int64(x)), nil
	case int16:
		return IntValue(int64(x)), nil
	case int32:
		return IntValue(int64(x)), nil
	case int64:
		return IntValue(x), nil
	case uint:
		return uintValue(uint64(x)), nil
	case uint8:
		return IntValue(int64(x)), nil
	case uint16:
		return IntValue(int64(x)), nil
	case uint32:
		return IntValue(int64(x)), nil
	case uint64:
		return uintValue(x), nil
	case float32:
		return FloatValue(float64(x)), nil
	case float64:
		return FloatValue(x), nil
	case string:
		return a.NewStringFrom(x), nil
	case []byte:
		return a.NewBytes(x), nil
	case time.Time:
		return TimestampValue(x.UnixNano()), nil
	case []string:
		b := a.BeginArray(len(x))
		for _, s := range x {
			b.Append(a.NewStringFrom(s))
		}
		return b.Finish(), nil
	case []any:
		b := a.BeginArray(len(x))
		for _, e := range x {
			v, err := a.fromGo(e)
			if err != nil {
				return Value{}, err
			}
			b.Append(v)
		}
		return b.Finish(), nil
	case map[string]string:
		keys := sortedKeys(x)
		b := a.BeginMap(len(x))
		for _, k := range keys {
			b.Add(a.NewStringFrom(k), a.NewStringFrom(x[k]))
		}
		return b.Finish(), nil
	case map[string]any:
		keys := sortedKeys(x)
		b := a.BeginMap(len(x))
		for _, k := range keys {
			v, err := a.fromGo(x[k])
			if err != nil {
				return Value{}, err
			}
			b.Add(a.NewStringFrom(k), v)
		}
		return b.Finish(), nil
	}
	return Value{}, fmt.Errorf("record: cannot convert %T", x)
}

func uintValue(u uint64) Value {
	if u > math.MaxInt64 {
		return FloatValue(float64(u))
	}
	return IntValue(int64(u))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// equal reports whether the record maps, tags and times of r and o are
// equal (see ValueEqual).
func (r *Record) equal(o *Record) bool {
	return r.time == o.time && string(r.Tag()) == string(o.Tag()) &&
		ValueEqual(r.a, r.root, o.a, o.root)
}

// ValueEqual reports whether x (of arena xa) and y (of arena ya) are deeply
// equal: same kinds (an int never equals a float), same scalars (floats by
// ==, except that NaN equals NaN), same bytes, arrays in order, maps with
// the same keys and values in any order.
func ValueEqual(xa *Arena, x Value, ya *Arena, y Value) bool {
	if x.kind() != y.kind() {
		return false
	}
	switch x.kind() {
	case Absent, Null:
		return true
	case Bool, Int, Timestamp:
		return x.u == y.u
	case Float:
		f, g := x.Float(), y.Float()
		return f == g || f != f && g != g // NaN equals NaN here
	case String, Bytes:
		return string(xa.raw(x)) == string(ya.raw(y))
	case Array:
		if x.n() != y.n() {
			return false
		}
		for i := 0; i < int(x.n()); i++ {
			if !ValueEqual(xa, xa.nodes[int(x.off())+i], ya, ya.nodes[int(y.off())+i]) {
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
			if !ok || !ValueEqual(xa, it.Value(), ya, w) {
				return false
			}
		}
		return true
	}
	return false
}
