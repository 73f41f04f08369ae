package record

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"
)

// Helpers only the tests use: the edits and converters they check the
// record against, kept out of the package proper.

// rename is the VM's rename (vm/machine.go) over the record's API, so
// that the tests edit records as policies do: the two keys of the root in
// one step when MoveTop can, else Take then Set, the key going to the end
// of its map. An error leaves the record half edited, as the VM's fault
// does (the VM discards the record).
func (r *Record) rename(from, to Path) error {
	if len(from) == 0 || len(to) == 0 || from[len(from)-1].isIndex || to[len(to)-1].isIndex {
		return ErrNotContainer
	}
	if from.Equal(to) {
		return nil
	}
	if len(from) == 1 && len(to) == 1 && r.MoveTop(&from[0], &to[0]) {
		return nil
	}
	v, ok := r.Take(from)
	if !ok {
		return nil
	}
	return r.Set(to, v)
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
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		switch n := goNumber(x).(type) {
		case int64:
			return IntValue(n), nil
		case float64:
			return FloatValue(n), nil
		}
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

// mapGo copies the maps and arrays of the Go value x (as ToGo or a JSON
// or msgpack library returns it) with leaf applied to every other value.
func mapGo(x any, leaf func(any) any) any {
	switch x := x.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = mapGo(e, leaf)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = mapGo(e, leaf)
		}
		return out
	}
	return leaf(x)
}

// goNumber is x, of a Go integer or float type, as an int64, or a
// float64 for a float or an integer above MaxInt64: the numbers a record
// holds. It is nil for anything else.
func goNumber(x any) any {
	switch v := reflect.ValueOf(x); v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := v.Uint(); u <= math.MaxInt64 {
			return int64(u)
		}
		return float64(v.Uint())
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return nil
}

// equal reports whether the record maps, tags and times of r and o are
// equal (see ValueEqual).
func (r *Record) equal(o *Record) bool {
	return r.time == o.time && string(r.Tag()) == string(o.Tag()) &&
		ValueEqual(r.a, r.root, o.a, o.root)
}

// decodeMsgpackValue decodes one msgpack value from the start of b (strings
// copied into the slab) and returns it and the bytes consumed.
func (a *Arena) decodeMsgpackValue(b []byte) (Value, int, error) {
	m := a.mark()
	d := a.newMsgpackDecoder(b, Owned)
	v, n, err := d.value(0, 0)
	if err == nil {
		err = a.own(m, d.ref, b[:n])
		if v.kind() == String || v.kind() == Bytes {
			v.ref = 0
			v.u += uint64(len(a.slab)-n) << 32
		}
	}
	if err != nil {
		a.rollback(m)
		return Value{}, 0, d.fixLimit(err)
	}
	return v, n, nil
}

// entry returns entry i (in order) of a map.
func (a *Arena) entry(v Value, i int) (key, val Value) {
	if v.kind() != Map || uint(i) >= uint(v.n()) {
		return Value{}, Value{}
	}
	j := int(v.off()) + 2*i
	return a.nodes[j], a.nodes[j+1]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
