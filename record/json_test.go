package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func mustDecode(t testing.TB, a *Arena, line string, mode Mode) *Record {
	t.Helper()
	r, err := a.DecodeJSON([]byte(line), mode)
	if err != nil {
		t.Fatalf("DecodeJSON(%q): %v", line, err)
	}
	return r
}

// mustUnmarshal decodes JSON data into v with encoding/json.
func mustUnmarshal(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
}

// mustValue decodes one JSON value into a.
func mustValue(t testing.TB, a *Arena, js string) Value {
	t.Helper()
	v, err := a.DecodeJSONValue([]byte(js))
	if err != nil {
		t.Fatalf("%v: %s", err, js)
	}
	return v
}

func TestJSONKinds(t *testing.T) {
	line := `{"n":null,"t":true,"f":false,"i":-42,"big":9223372036854775807,"fl":1.5,"e":1e3,` +
		`"s":"h\u00e9llo\n","a":[1,"x",[]],"m":{"k":{}},"z":0,"nz":-0}`
	for _, mode := range []Mode{Referenced, Owned} {
		a := NewArena()
		r := mustDecode(t, a, line, mode)
		tests := []struct {
			path string
			kind Kind
			want any
		}{
			{".n", Null, nil},
			{".t", Bool, true},
			{".f", Bool, false},
			{".i", Int, int64(-42)},
			{".big", Int, int64(math.MaxInt64)},
			{".fl", Float, 1.5},
			{".e", Float, 1000.0},
			{".s", String, "héllo\n"},
			{".a[0]", Int, int64(1)},
			{".a[1]", String, "x"},
			{".a[-1]", Array, []any{}},
			{".m.k", Map, map[string]any{}},
			{".z", Int, int64(0)},
			{".nz", Int, int64(0)},
		}
		for _, tt := range tests {
			v, ok := r.Get(MustParsePath(tt.path))
			if !ok {
				t.Errorf("mode %d: %s absent", mode, tt.path)
				continue
			}
			if v.Kind() != tt.kind {
				t.Errorf("mode %d: %s kind %v, want %v", mode, tt.path, v.Kind(), tt.kind)
			}
			if got := a.toGo(v); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("mode %d: %s = %#v, want %#v", mode, tt.path, got, tt.want)
			}
		}
		for _, p := range []string{".missing", ".a[3]", ".a[-4]", ".i.x", ".m.k.x", ".s[0]"} {
			if v, ok := r.Get(MustParsePath(p)); ok || v.Kind() != Absent {
				t.Errorf("%s: found %v", p, v)
			}
		}
	}
}

func TestJSONAccessors(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"m":{"a":1,"b":"x"},"arr":[true,2.5]}`, Referenced)
	m, _ := r.Get(NewPath("m"))
	if a.Len(m) != 2 {
		t.Fatalf("Len = %d", a.Len(m))
	}
	if v, ok := a.Key(m, []byte("b")); !ok || a.Str(v) != "x" {
		t.Errorf("Key b = %v %v", v, ok)
	}
	if _, ok := a.Key(m, []byte("c")); ok {
		t.Error("Key c found")
	}
	k, v := a.entry(m, 0)
	if a.Str(k) != "a" || v.Int() != 1 {
		t.Errorf("Entry 0 = %q %v", a.Str(k), v)
	}
	var keys []string
	for it := a.Iter(m); it.Next(); {
		keys = append(keys, a.Str(it.Key()))
	}
	if strings.Join(keys, ",") != "a,b" {
		t.Errorf("keys %v", keys)
	}
	arr, _ := r.Get(NewPath("arr"))
	if e, ok := a.Index(arr, 1); !ok || e.Float() != 2.5 {
		t.Errorf("Index 1 = %v", e)
	}
	if b, _ := r.Get(MustParsePath(".m.b")); string(a.Bytes(b)) != "x" {
		t.Errorf("Bytes = %q", a.Bytes(b))
	}
	if a.Bytes(v) != nil || a.Str(v) != "" {
		t.Errorf("Bytes of an int = %q", a.Bytes(v))
	}
}

func TestJSONRoundTrip(t *testing.T) {
	lines := []string{
		`{}`,
		`{"a":1}`,
		`{"level":"info","msg":"GET /a \"q\" \\ \t done","status":200,"latency":0.25,"ok":true,"x":null}`,
		`{"nested":{"deep":{"deeper":[1,2,{"k":"v"}]}},"empty":{},"ea":[]}`,
		`{"f1":1.0,"f2":-0.0,"f3":1e21,"f4":1.5e-7,"f5":123456789.125,"i":-9223372036854775808}`,
		`{"u":"\u00e9\u4e2d\ud83d\ude00 ünïcödé \u0001\u001f"}`,
		`{"ctl":"\b\f\n\r\t\/"}`,
		"  {\"spaces\" : [ 1 , 2 ] }  \r\n",
	}
	for _, line := range lines {
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			r := mustDecode(t, a, line, mode)
			out := r.AppendJSON(nil)
			var want, got any
			if err := json.Unmarshal([]byte(line), &want); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%s: invalid output %s: %v", line, out, err)
			}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("round trip %s\n got %s", line, out)
			}
			// Kinds survive: decoding the output gives an equal record.
			b := NewArena()
			r2 := mustDecode(t, b, string(out), Owned)
			if !r.equal(r2) {
				t.Errorf("kinds changed: %s -> %s", line, out)
			}
		}
	}
}

func TestJSONFloatEncoding(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", -0.5: "-0.5", 1e21: "1e+21", 1e20: "100000000000000000000.0",
		1e-7: "1e-07", math.NaN(): "null", math.Inf(1): "null", 0.1: "0.1",
	} {
		if got := string(NewArena().AppendJSON(nil, FloatValue(f))); got != want {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
}

func TestAppendFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {-2, "-2.0"}, {1.5, "1.5"},
		{0.1, "0.1"}, {12.5, "12.5"}, {1810.542, "1810.542"}, {1e15, "1000000000000000.0"},
		{1e20, "100000000000000000000.0"}, {1e21, "1e+21"}, {1e-6, "0.000001"}, {1e-7, "1e-07"},
		{-1.25e-300, "-1.25e-300"}, {math.MaxFloat64, "1.7976931348623157e+308"},
		{math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"},
	} {
		if got := string(AppendFloat([]byte("x="), tc.f)); got != "x="+tc.want {
			t.Errorf("AppendFloat(%v) = %s, want x=%s", tc.f, got, tc.want)
		}
	}
}

func TestJSONBigInts(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"u":18446744073709551615,"n":-9223372036854775809}`, Referenced)
	u, _ := r.Get(NewPath("u"))
	if u.Kind() != Float || u.Float() != 18446744073709551615 {
		t.Errorf("big int: %v", u)
	}
	a.Limits.RejectBigInts = true
	_, err := a.DecodeJSON([]byte(`{"a":1,"u":18446744073709551615}`), Referenced)
	var de *DecodeError
	if !errors.As(err, &de) || !errors.Is(err, ErrNumberRange) || de.Offset != 11 {
		t.Errorf("RejectBigInts: %v", err)
	}
}

func TestJSONDuplicateKeys(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"a":1,"b":2,"a":3,"c":4,"b":5}`, Referenced)
	if got := string(r.AppendJSON(nil)); got != `{"a":3,"b":5,"c":4}` {
		t.Errorf("got %s", got)
	}
	// Big maps take the hash path.
	var sb strings.Builder
	sb.WriteString("{")
	for i := 0; i < 100; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`"k` + string(rune('a'+i%40)) + `":` + string(rune('0'+i%10)))
	}
	sb.WriteString("}")
	r = mustDecode(t, a, sb.String(), Owned)
	var want map[string]any
	mustUnmarshal(t, []byte(sb.String()), &want)
	if r.a.Len(r.Root()) != 40 || len(want) != 40 {
		t.Fatalf("len %d", r.a.Len(r.Root()))
	}
	for k, v := range want {
		got, _ := r.Get(NewPath(k))
		if float64(got.Int()) != v.(float64) {
			t.Errorf("%s = %v, want %v", k, got.Int(), v)
		}
	}
	// First position is kept.
	k, _ := r.a.entry(r.Root(), 1)
	if r.a.Str(k) != "kb" {
		t.Errorf("order: %s", r.a.Str(k))
	}
}

func TestJSONErrors(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 129) + "1" + strings.Repeat("}", 129)
	okDeep := strings.Repeat(`{"a":`, 128) + "1" + strings.Repeat("}", 128)
	tests := []struct {
		in     string
		err    error
		offset int
	}{
		{``, ErrTruncated, 0},
		{`   `, ErrTruncated, 3},
		{`[1]`, ErrNotMap, 0},
		{`"x"`, ErrNotMap, 0},
		{`12`, ErrNotMap, 0},
		{`hello world`, ErrSyntax, 0},
		{`  <14>Jan 1 host app: x`, ErrSyntax, 2},
		{`{`, ErrTruncated, 1},
		{`{"a"`, ErrTruncated, 4},
		{`{"a":}`, ErrSyntax, 5},
		{`{"a":1,}`, ErrSyntax, 7},
		{`{"a":1 "b":2}`, ErrSyntax, 7},
		{`{a:1}`, ErrSyntax, 1},
		{`{"a":tru}`, ErrSyntax, 5},
		{`{"a":tr`, ErrTruncated, 7},
		{`{"a":01}`, ErrSyntax, 6},
		{`{"a":1.}`, ErrSyntax, 7},
		{`{"a":-}`, ErrSyntax, 6},
		{`{"a":1e}`, ErrSyntax, 7},
		{`{"a":1e999}`, ErrNumberRange, 5},
		{`{"a":"x` + "\x01" + `"}`, ErrSyntax, 7},
		{`{"a":"x` + "\xff" + `"}`, ErrInvalidUTF8, 7},
		{`{"a":"` + "\xed\xa0\x80" + `"}`, ErrInvalidUTF8, 6},
		{`{"a":"\x"}`, ErrSyntax, 6},
		{`{"a":"\u12"}`, ErrSyntax, 6},
		{`{"a":"abc`, ErrTruncated, 9},
		{`{"a":1}x`, ErrTrailing, 7},
		{`{"a":1}{}`, ErrTrailing, 7},
		{`{"a":[1,2}`, ErrSyntax, 9},
		{deep, ErrDepth, 128 * 5},
	}
	for _, tt := range tests {
		a := NewArena()
		r, err := a.DecodeJSON([]byte(tt.in), Referenced)
		var de *DecodeError
		if r != nil || !errors.As(err, &de) || !errors.Is(err, tt.err) || de.Offset != tt.offset {
			t.Errorf("%q: got %v, want %v at %d", tt.in, err, tt.err, tt.offset)
		}
		if len(a.nodes) != 0 || len(a.slab) != 0 || len(a.bufs) != 0 || a.nrec != 0 {
			t.Errorf("%q: arena not rolled back", tt.in)
		}
	}
	if _, err := NewArena().DecodeJSON([]byte(okDeep), Referenced); err != nil {
		t.Errorf("depth 128: %v", err)
	}
	a := NewArena()
	a.Limits.MaxInput = 10
	if _, err := a.DecodeJSON([]byte(`{"a":"0123456789"}`), Referenced); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxInput: %v", err)
	}
}

func TestJSONSurrogates(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"ok":"\ud83d\ude00","lone":"a\ud800b","low":"\udc00"}`, Owned)
	for p, want := range map[string]string{".ok": "😀", ".lone": "a\ufffdb", ".low": "\ufffd"} {
		v, _ := r.Get(MustParsePath(p))
		if r.a.Str(v) != want {
			t.Errorf("%s = %q, want %q", p, r.a.Str(v), want)
		}
	}
}

func TestJSONValue(t *testing.T) {
	a := NewArena()
	for _, in := range []string{`1`, ` "s" `, `[1,{"a":null}]`, `{"x":1.5}`, `true`} {
		v, err := a.DecodeJSONValue([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		var want any
		mustUnmarshal(t, []byte(in), &want)
		var got any
		mustUnmarshal(t, a.AppendJSON(nil, v), &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %s", in, a.AppendJSON(nil, v))
		}
	}
	if _, err := a.DecodeJSONValue([]byte(`[1,`)); err == nil {
		t.Error("no error")
	}
}

func TestReferencedAndOwned(t *testing.T) {
	line := []byte(`{"s":"abc","e":"a\nb"}`)
	a := NewArena()
	r := mustDecode(t, a, string(line), Owned)
	ref, err := a.DecodeJSON(line, Referenced)
	if err != nil {
		t.Fatal(err)
	}
	copy(line, bytes.Repeat([]byte("X"), len(line)))
	if got := string(r.AppendJSON(nil)); got != `{"s":"abc","e":"a\nb"}` {
		t.Errorf("owned changed with input: %s", got)
	}
	// (the keys point into the input too, so look by position)
	if _, v := ref.a.entry(ref.Root(), 0); ref.a.Str(v) != "XXX" {
		t.Errorf("referenced string does not point into the input: %q", ref.a.Str(v))
	}
}

func TestParsePath(t *testing.T) {
	for _, s := range []string{".", ".a", ".a.b", `."x y".z`, ".a[0]", ".a[-1].b", `.a["k"]`} {
		p, err := ParsePath(s)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		q, err := ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Errorf("%s -> %s -> %v", s, p, q)
		}
	}
	for _, s := range []string{"", "a", "..", ".a[", ".a[x]", `."x`} {
		if _, err := ParsePath(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestJSONFloatFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := NewArena()
	for i := 0; i < 20000; i++ {
		intDigits, fracDigits := 1+rng.IntN(10), 1+rng.IntN(8)
		var sb strings.Builder
		if rng.IntN(2) == 0 {
			sb.WriteByte('-')
		}
		sb.WriteByte(byte('1' + rng.IntN(9)))
		for j := 1; j < intDigits; j++ {
			sb.WriteByte(byte('0' + rng.IntN(10)))
		}
		sb.WriteByte('.')
		for j := 0; j < fracDigits; j++ {
			sb.WriteByte(byte('0' + rng.IntN(10)))
		}
		text := sb.String()
		v, err := a.DecodeJSONValue([]byte(text))
		want, perr := strconv.ParseFloat(text, 64)
		if perr != nil {
			t.Fatal(perr)
		}
		if err != nil || v.Kind() != Float || v.Float() != want {
			t.Fatalf("%s: got %v (%v), want %v", text, v.Float(), err, want)
		}
	}
}
