package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// normGo makes values decoded by msgpack/v5 comparable with Arena.ToGo.
func normGo(x any) any {
	return mapGo(x, func(v any) any {
		switch v := v.(type) {
		case int, int8, int16, int32, uint8, uint16, uint32, uint64, float32:
			return goNumber(v)
		case time.Time:
			return v.UTC()
		}
		return v
	})
}

// mustMarshal is x as msgpack/v5 encodes it.
func mustMarshal(t testing.TB, x any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sampleGo() map[string]any {
	return map[string]any{
		"nil": nil, "t": true, "f": false,
		"i0": int64(0), "i7f": int64(127), "ineg": int64(-32), "i8": int64(-100), "u8": int64(200),
		"i16": int64(-30000), "u16": int64(60000), "i32": int64(-2_000_000_000), "u32": int64(4_000_000_000),
		"i64": int64(math.MinInt64), "u63": int64(math.MaxInt64), "big": uint64(math.MaxUint64),
		"f32": float32(1.5), "f64": 3.25, "s": "héllo", "s32": strings.Repeat("x", 40),
		"s300": strings.Repeat("y", 300), "s70k": strings.Repeat("z", 70000), "bin": []byte{0, 1, 2},
		"ts": time.Unix(1_700_000_000, 123_456_789), "ts32": time.Unix(1_700_000_000, 0),
		"tsold": time.Unix(-5, 7), "arr": []any{int64(1), "a", []any{}, map[string]any{}},
		"m": map[string]any{"k": map[string]any{"deep": "v"}}, "arr20": make([]any, 20),
	}
}

func TestMsgpackAgainstLibrary(t *testing.T) {
	in := sampleGo()
	raw, err := msgpack.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{Referenced, Owned} {
		a := NewArena()
		r, n, err := a.DecodeMsgpack(raw, mode)
		if err != nil {
			t.Fatal(err)
		}
		if n != len(raw) || r.layout != layoutMap {
			t.Errorf("n %d of %d, layout %v", n, len(raw), r.layout)
		}
		want := normGo(in)
		if got := r.ToGo(); !reflect.DeepEqual(got, want) {
			t.Errorf("decode:\n got %v\nwant %v", got, want)
		}
		// Our encoding, read by the library, is the same again.
		out := r.AppendMsgpack(nil)
		var back map[string]any
		if err := msgpack.Unmarshal(out, &back); err != nil {
			t.Fatal(err)
		}
		if got := normGo(back); !reflect.DeepEqual(got, want) {
			t.Errorf("encode:\n got %v\nwant %v", got, want)
		}
		// And by us: msgpack -> record -> msgpack -> record.
		b := NewArena()
		r2, _, err := b.DecodeMsgpack(out, Owned)
		if err != nil || !r.equal(r2) {
			t.Errorf("round trip: %v", err)
		}
	}
}

func eventTime(sec, nsec uint32) []byte {
	b := []byte{0xd7, 0x00}
	b = binary.BigEndian.AppendUint32(b, sec)
	return binary.BigEndian.AppendUint32(b, nsec)
}

func TestMsgpackFluentBitEvents(t *testing.T) {
	body := mustMarshal(t, map[string]any{"log": "hello", "n": 1})
	meta := mustMarshal(t, map[string]any{"otlp": map[string]any{"severity": "INFO"}})
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	mp := func(x any) []byte { return mustMarshal(t, x) }
	const sec, nsec = 1_700_000_000, 123_456_789
	ext8 := append([]byte{0xc7, 8, 0x00}, eventTime(sec, nsec)[2:]...)
	tests := []struct {
		name   string
		in     []byte
		layout layout
		time   int64
		meta   bool
		out    []byte // when not written back as read
	}{
		{"v1 eventtime", cat([]byte{0x92}, eventTime(sec, nsec), body), layoutEventV1, sec*1e9 + nsec, false, nil},
		{"v1 eventtime ext8", cat([]byte{0x92}, ext8, body), layoutEventV1, sec*1e9 + nsec, false,
			cat([]byte{0x92}, eventTime(sec, nsec), body)},
		{"v1 int", cat([]byte{0x92}, mp(sec), body), layoutEventV1, sec * 1e9, false, nil},
		{"v1 float", cat([]byte{0x92}, mp(1_700_000_000.5), body), layoutEventV1, sec*1e9 + 5e8, false, nil},
		{"v1 timestamp ext", cat([]byte{0x92}, mp(time.Unix(sec, nsec)), body), layoutEventV1, sec*1e9 + nsec, false, nil},
		{"v2", cat([]byte{0x92, 0x92}, eventTime(sec, nsec), meta, body), layoutEventV2, sec*1e9 + nsec, true, nil},
		{"v2 empty meta", cat([]byte{0x92, 0x92}, eventTime(sec, nsec), []byte{0x80}, body), layoutEventV2, sec*1e9 + nsec, false, nil},
		{"bare map", body, layoutMap, 0, false, nil},
		// Every array and map header Fluent Bit writes; arrays and the
		// metadata written back in the smallest header, the body's bytes
		// as they were (it passes through).
		{"v1 array16", cat([]byte{0xdc, 0, 2}, eventTime(sec, nsec), body), layoutEventV1, sec*1e9 + nsec, false,
			cat([]byte{0x92}, eventTime(sec, nsec), body)},
		{"v1 array32 int", cat([]byte{0xdd, 0, 0, 0, 2}, mp(sec), body), layoutEventV1, sec * 1e9, false,
			cat([]byte{0x92}, mp(sec), body)},
		{"v1 array16 float", cat([]byte{0xdc, 0, 2}, mp(1_700_000_000.5), body), layoutEventV1, sec*1e9 + 5e8, false,
			cat([]byte{0x92}, mp(1_700_000_000.5), body)},
		{"v2 array16 array32", cat([]byte{0xdc, 0, 2, 0xdd, 0, 0, 0, 2}, ext8, meta, body), layoutEventV2, sec*1e9 + nsec, true,
			cat([]byte{0x92, 0x92}, eventTime(sec, nsec), meta, body)},
		{"v2 map16 meta map32 body", cat([]byte{0x92, 0x92}, eventTime(sec, nsec), map16(meta), map32(body)), layoutEventV2, sec*1e9 + nsec, true,
			cat([]byte{0x92, 0x92}, eventTime(sec, nsec), meta, map32(body))},
		{"v1 map16 body", cat([]byte{0xdc, 0, 2}, mp(sec), map16(body)), layoutEventV1, sec * 1e9, false,
			cat([]byte{0x92}, mp(sec), map16(body))},
		{"bare map32", map32(body), layoutMap, 0, false, nil},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			in := append(cloneBytes(tt.in), 0xc0) // a following event must not be consumed
			r, n, err := a.DecodeMsgpack(in, mode)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if n != len(tt.in) || r.layout != tt.layout || r.Time() != tt.time {
				t.Errorf("%s: n %d/%d layout %v time %d, want %v %d", tt.name, n, len(tt.in), r.layout, r.Time(), tt.layout, tt.time)
			}
			if got := r.ToGo(); got["log"] != "hello" || got["n"] != int64(1) {
				t.Errorf("%s: body %v", tt.name, got)
			}
			if tt.meta {
				if v, ok := a.Key(r.meta(), []byte("otlp")); !ok || v.Kind() != Map {
					t.Errorf("%s: meta %v", tt.name, a.toGo(r.meta()))
				}
			}
			// Written back byte for byte.
			want := tt.in
			if tt.out != nil {
				want = tt.out
			}
			if out := r.AppendMsgpack(nil); !bytes.Equal(out, want) {
				t.Errorf("%s: re-encoded\n got %x\nwant %x", tt.name, out, want)
			}
		}
	}
	// A chunk of events is walked by consumed length.
	chunk := cat([]byte{0x92}, eventTime(1, 0), body, []byte{0x92}, eventTime(2, 0), body)
	a := NewArena()
	for i := int64(1); len(chunk) > 0; i++ {
		r, n, err := a.DecodeMsgpack(chunk, Referenced)
		if err != nil || r.Time() != i*1e9 {
			t.Fatalf("event %d: %v %d", i, err, r.Time())
		}
		chunk = chunk[n:]
	}
	// A JSON record written as an event.
	r := mustDecode(t, a, `{"a":1}`, Referenced)
	r.SetTime(sec*1e9 + nsec)
	want := cat([]byte{0x92, 0x92}, eventTime(sec, nsec), []byte{0x80, 0x81, 0xa1, 'a', 0x01})
	if out := r.appendMsgpackAs(nil, layoutEventV2); !bytes.Equal(out, want) {
		t.Errorf("v2 from JSON: %x", out)
	}
	// Integer seconds gain an EventTime when the time has nanoseconds.
	r, _, err := a.DecodeMsgpack(cat([]byte{0x92}, mp(5), body), Owned)
	if err != nil {
		t.Fatal(err)
	}
	r.SetTime(5e9 + 1)
	if out := r.AppendMsgpack(nil); !bytes.Equal(out, cat([]byte{0x92}, eventTime(5, 1), body)) {
		t.Errorf("int time with nanos: %x", out)
	}
}

func cloneBytes(b []byte) []byte { return append([]byte(nil), b...) }

// map16 and map32 rewrite the header of m, a fixmap, as map16 or map32.
func map16(m []byte) []byte { return append([]byte{0xde, 0, m[0] & 0x0f}, m[1:]...) }
func map32(m []byte) []byte { return append([]byte{0xdf, 0, 0, 0, m[0] & 0x0f}, m[1:]...) }

func TestMsgpackLen(t *testing.T) {
	str := func(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		in   []byte
		n    int // 0: the extent is unknown
	}{
		{"int", []byte{0x01, 0xff}, 1},
		{"array of 3", []byte{0x93, 1, 2, 3, 0xc0}, 4},
		{"array16 of 3", []byte{0xdc, 0, 3, 1, 2, 3, 0xc0}, 6},
		{"array32 event", cat([]byte{0xdd, 0, 0, 0, 2}, eventTime(1, 2), []byte{0x80}), 16},
		{"map16", []byte{0xde, 0, 1, 0xa1, 'a', 0xc0, 0x01}, 6},
		{"map32", []byte{0xdf, 0, 0, 0, 1, 0xa1, 'a', 0xc0, 0x01}, 8},
		{"int key", []byte{0x81, 0x01, 0x01, 0x80}, 3},
		{"bad utf8", cat([]byte{0x81}, str("a"), []byte{0xa2, 'x', 0xff}, []byte{0x80}), 6},
		{"unknown ext", cat([]byte{0x81}, str("a"), []byte{0xd4, 0x05, 0x00, 0x80}), 6},
		{"ext8", []byte{0xc7, 2, 5, 0, 0, 0x80}, 5},
		{"str8 bin16", []byte{0x92, 0xd9, 1, 'x', 0xc5, 0, 1, 0, 0x80}, 8},
		{"floats", []byte{0x92, 0xca, 0, 0, 0, 0, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}, 15},
		{"deep", append(bytes.Repeat([]byte{0x91}, 10000), 0x01, 0x80), 10001},
		{"empty", nil, 0},
		{"c1", []byte{0x91, 0xc1, 0x80}, 0},
		{"truncated str", []byte{0xa5, 'a'}, 0},
		{"truncated header", []byte{0xdd, 0, 0}, 0},
		{"huge map", []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'a'}, 0},
		{"truncated ext32", []byte{0xc9, 0, 0, 0, 1, 5}, 0},
	}
	for _, tt := range tests {
		n, ok := MsgpackLen(tt.in)
		if ok != (tt.n > 0) || n != tt.n {
			t.Errorf("%s: %d %v, want %d", tt.name, n, ok, tt.n)
		}
	}
	// Whatever decodes, MsgpackLen measures as the decoder does.
	for _, x := range []any{sampleGo(), []any{1, "a", map[string]any{"b": []byte{1}}}, 1.5, "s", nil} {
		b := mustMarshal(t, x)
		if n, ok := MsgpackLen(b); !ok || n != len(b) {
			t.Errorf("%v: %d %v, want %d", x, n, ok, len(b))
		}
	}
}

func TestMsgpackEdits(t *testing.T) {
	raw := mustMarshal(t, map[string]any{"a": 1, "k": map[string]any{"x": "y", "z": 2}})
	a := NewArena()
	r, _, err := a.DecodeMsgpack(raw, Referenced)
	if err != nil {
		t.Fatal(err)
	}
	r.Lift(NewPath("k"), []byte("k_"))
	r.Set(NewPath("b"), a.NewStringFrom("new"))
	var got map[string]any
	if err := msgpack.Unmarshal(r.AppendMsgpack(nil), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": int64(1), "k_x": "y", "k_z": int64(2), "b": "new"}
	if !reflect.DeepEqual(normGo(got), want) {
		t.Errorf("got %v", got)
	}
}

func TestMsgpackErrors(t *testing.T) {
	str := func(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	deep := append(bytes.Repeat([]byte{0x81, 0xa1, 'a'}, 129), 0x01)
	tests := []struct {
		name   string
		in     []byte
		err    error
		offset int
	}{
		{"empty", nil, ErrTruncated, 0},
		{"not a map", []byte{0x01}, ErrNotMap, 0},
		{"array of 3", []byte{0x93, 1, 2, 3}, ErrNotMap, 0},
		{"array16 of 3", []byte{0xdc, 0, 3, 1, 2, 3}, ErrNotMap, 0},
		{"array32 of 1", []byte{0xdd, 0, 0, 0, 1, 0x80}, ErrNotMap, 0},
		{"cut array16 header", []byte{0xdc, 0}, ErrTruncated, 2},
		{"v2 time array of 3", []byte{0x92, 0xdc, 0, 3, 1, 0x80, 0x80, 0x80}, ErrSyntax, 1},
		{"array16 event body not map", []byte{0xdc, 0, 2, 0x01, 0x01}, ErrNotMap, 4},
		{"truncated map", []byte{0x82, 0xa1, 'a', 0x01}, ErrTruncated, 4},
		{"key without value", []byte{0x81, 0xa1, 'a'}, ErrTruncated, 3},
		{"truncated str", cat([]byte{0x81, 0xa5, 'a'}), ErrTruncated, 3},
		{"huge map header", []byte{0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'a'}, ErrTruncated, 7},
		{"huge array", cat([]byte{0x81}, str("a"), []byte{0xdd, 0x7f, 0xff, 0xff, 0xff}), ErrTruncated, 8},
		{"int key", []byte{0x81, 0x01, 0x01}, ErrKeyType, 1},
		{"bad utf8 key", cat([]byte{0x81, 0xa2, 'a', 0xff, 0x01}), ErrInvalidUTF8, 3},
		{"bad utf8 value", cat([]byte{0x81}, str("a"), []byte{0xa3, 'x', 'y', 0xc0}), ErrInvalidUTF8, 6},
		{"c1", cat([]byte{0x81}, str("a"), []byte{0xc1}), ErrSyntax, 3},
		{"unknown ext", cat([]byte{0x81}, str("a"), []byte{0xd4, 0x05, 0x00}), ErrSyntax, 3},
		{"big uint rejected", cat([]byte{0x81}, str("a"), []byte{0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0}), nil, 0},
		{"deep", deep, ErrDepth, 128 * 3},
		{"event time string", cat([]byte{0x92}, str("t"), []byte{0x80}), ErrSyntax, 1},
		{"event time map", []byte{0x92, 0x80, 0x80}, ErrSyntax, 1},
		{"event body not map", cat([]byte{0x92, 0x01, 0x01}), ErrNotMap, 2},
		{"v2 meta not map", cat([]byte{0x92, 0x92, 0x01, 0x01, 0x80}), ErrNotMap, 3},
	}
	for _, tt := range tests {
		a := NewArena()
		if tt.err == nil { // the RejectBigInts case
			a.Limits.RejectBigInts = true
			tt.err, tt.offset = ErrNumberRange, 3
		}
		r, _, err := a.DecodeMsgpack(tt.in, Referenced)
		var de *DecodeError
		if r != nil || !errors.As(err, &de) || !errors.Is(err, tt.err) || de.Offset != tt.offset {
			t.Errorf("%s: got %v, want %v at %d", tt.name, err, tt.err, tt.offset)
		}
		if len(a.nodes) != 0 || len(a.bufs) != 0 || a.nrec != 0 {
			t.Errorf("%s: arena not rolled back", tt.name)
		}
	}
	a := NewArena()
	a.Limits.MaxInput = 8
	raw := mustMarshal(t, map[string]any{"a": "0123456789"})
	if _, _, err := a.DecodeMsgpack(raw, Owned); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxInput: %v", err)
	}
}

func TestAllocsMsgpack(t *testing.T) {
	in := b2Msgpack(t)
	decode := func(a *Arena) (*Record, error) {
		r, _, err := a.DecodeMsgpack(in, Referenced)
		return r, err
	}
	if n, _ := allocsPer16(decode, editB2, (*Record).AppendMsgpack); n != 0 {
		t.Errorf("decode + 3 edits + encode: %v allocs per 16 records, want 0", n)
	}
}

// b2Msgpack is the B2 record as a Fluent Bit v1 event.
func b2Msgpack(t testing.TB) []byte {
	a := NewArena()
	r, err := a.DecodeJSON([]byte(b2JSON), Owned)
	if err != nil {
		t.Fatal(err)
	}
	r.SetTime(1_700_000_000_123_456_789)
	return r.appendMsgpackAs(nil, layoutEventV1)
}

// b2Map is the B2 record as msgpack/v5 encodes the map json.Unmarshal
// makes of it: the record map alone, for the library's decoder.
func b2Map(t testing.TB) []byte {
	var m map[string]any
	mustUnmarshal(t, []byte(b2JSON), &m)
	return mustMarshal(t, m)
}

func TestMsgpackOwned(t *testing.T) {
	body := mustMarshal(t, map[string]any{"log": "hello", "bin": []byte("raw"), "m": map[string]any{"k": "v"}})
	ev := append(append([]byte{0x92}, eventTime(1, 2)...), body...)
	chunk := append(append([]byte(nil), ev...), ev...)
	a := NewArena()
	var recs []*Record
	for rest := chunk; len(rest) > 0; {
		r, n, err := a.DecodeMsgpack(rest, Owned)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		rest = rest[n:]
	}
	if len(a.slab) != len(chunk) || len(a.bufs) != 0 {
		t.Errorf("slab %d bytes for a chunk of %d, %d buffers kept", len(a.slab), len(chunk), len(a.bufs))
	}
	clear(chunk)
	for _, r := range recs {
		got := r.ToGo()
		if got["log"] != "hello" || string(got["bin"].([]byte)) != "raw" || got["m"].(map[string]any)["k"] != "v" {
			t.Errorf("owned record changed with its input: %v", got)
		}
	}
	in, _ := msgpack.Marshal("top")
	v, n, err := a.decodeMsgpackValue(append(in, 0xc0))
	if err != nil || n != len(in) || a.Str(v) != "top" {
		t.Errorf("DecodeMsgpackValue: %q %d %v", a.Str(v), n, err)
	}
}
