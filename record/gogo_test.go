package record

import (
	"math"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestGoConversions(t *testing.T) {
	ts := time.Unix(1_700_000_000, 5).UTC()
	in := map[string]any{
		"nil": nil, "b": true, "i": 3, "i8": int8(-3), "u64": uint64(7), "big": uint64(math.MaxUint64),
		"f": 1.5, "f32": float32(0.5), "s": "x", "bytes": []byte{1, 2}, "t": ts,
		"arr": []any{1, "a", []string{"p", "q"}}, "m": map[string]any{"k": map[string]string{"z": "y"}},
	}
	want := map[string]any{
		"nil": nil, "b": true, "i": int64(3), "i8": int64(-3), "u64": int64(7), "big": float64(math.MaxUint64),
		"f": 1.5, "f32": 0.5, "s": "x", "bytes": []byte{1, 2}, "t": ts,
		"arr": []any{int64(1), "a", []any{"p", "q"}}, "m": map[string]any{"k": map[string]any{"z": "y"}},
	}
	a := NewArena()
	r, err := a.newRecordFromGo(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.ToGo(); !reflect.DeepEqual(got, want) {
		t.Errorf("ToGo:\n got %#v\nwant %#v", got, want)
	}
	// Keys of Go maps come in sorted order.
	if k, _ := r.a.entry(r.Root(), 0); r.a.Str(k) != "arr" {
		t.Errorf("first key %q", r.a.Str(k))
	}
	if _, err := a.fromGo(struct{}{}); err == nil {
		t.Error("FromGo(struct{}) did not fail")
	}
	// The same record from another arena and from JSON is Equal.
	b := NewArena()
	r2, err := b.newRecordFromGo(in)
	if err != nil {
		t.Fatal(err)
	}
	if !r.equal(r2) {
		t.Error("records from the same Go value differ")
	}
}

func TestValueEqual(t *testing.T) {
	a, b := NewArena(), NewArena()
	dec := func(ar *Arena, s string) Value {
		v, err := ar.DecodeJSONValue([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		x, y string
		eq   bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"a":1}`, `{"a":1.0}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`{"a":null}`, `{}`, false},
		{`{"a":{"b":"x"}}`, `{"a":{"b":"y"}}`, false},
		{`"s"`, `"s"`, true},
		{`1.5`, `1.5`, true},
	}
	for _, tt := range tests {
		if got := ValueEqual(a, dec(a, tt.x), b, dec(b, tt.y)); got != tt.eq {
			t.Errorf("%s == %s: %v", tt.x, tt.y, got)
		}
	}
	if ValueEqual(a, Value{}, a, NullValue()) {
		t.Error("absent equals null")
	}
}

// Paths are shared by goroutines that each have an arena (run with -race).
func TestConcurrentArenas(t *testing.T) {
	p, q := MustParsePath(".http.status"), NewPath("added")
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := NewArena()
			for i := 0; i < 200; i++ {
				if i%16 == 0 {
					a.Reset()
				}
				r, err := a.DecodeJSON([]byte(`{"http":{"status":404},"x":1}`), Referenced)
				if err != nil {
					t.Error(err)
					return
				}
				if v, ok := r.Get(p); !ok || v.Int() != 404 {
					t.Error("get")
				}
				r.Set(q, IntValue(int64(i)))
				r.AppendJSON(nil)
			}
		}()
	}
	wg.Wait()
}
