package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// The seed corpora of both fuzz targets run as ordinary tests.

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		b2JSON, editInput, fieldsJSON(40), `{}`, `{"a":1,"a":2}`, `{"a":"\ud83d\ude00\ud800"}`,
		`{"n":18446744073709551616,"f":1e-400,"g":-0.0,"h":1E+2}`, `{"a":[[[[]]]],"b":{"c":{}}}`,
		`{"a":"x` + "\xff" + `"}`, `{"a":01}`, `[1]`, `{"a":1}` + "\n", `{"k":"\\\"\/\b\f\n\r\t\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		a := NewArena()
		a.Limits.MaxDepth = 32
		in := append([]byte(nil), line...)
		r, err := a.DecodeJSON(in, Referenced)
		ro, erro := a.DecodeJSON(line, Owned)
		if (err == nil) != (erro == nil) {
			t.Fatalf("modes disagree: %v / %v", err, erro)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(line) {
				t.Fatalf("bad error %#v", err)
			}
			// What encoding/json takes as a valid UTF-8 object of modest
			// depth, we take too (unless a number is out of range).
			if json.Valid(line) && utf8.Valid(line) && !errors.Is(err, ErrNotMap) &&
				!errors.Is(err, ErrDepth) && !errors.Is(err, ErrNumberRange) {
				t.Fatalf("rejected valid JSON: %v", err)
			}
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON")
		}
		if !r.equal(ro) {
			t.Fatal("referenced and owned differ")
		}
		out := r.AppendJSON(nil)
		var want, got any
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("invalid output %q: %v", out, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("round trip changed the value:\n in  %q\n out %q", line, out)
		}
		r2, err := a.DecodeJSON(out, Owned)
		if err != nil || !r.equal(r2) {
			t.Fatalf("re-decode: %v", err)
		}
		// A pass-through line is one line and means what the encoder's
		// output means.
		plain := a.AppendJSON(nil, r.Root())
		r3, err := a.DecodeJSON(plain, Owned)
		if err != nil || !r2.equal(r3) || bytes.ContainsAny(out, "\r\n") {
			t.Fatalf("pass-through %q, encoder %q: %v", out, plain, err)
		}
		fuzzEdits(t, r)
	})
}

// fuzzEdits edits the first keys of a record and checks that Discard
// restores it.
func fuzzEdits(t *testing.T, r *Record) {
	a := r.Arena()
	before := r.AppendJSON(nil)
	root := r.Root()
	// Every key is found by lookup, by bytes and by path.
	for it := a.Iter(root); it.Next(); {
		k := a.Bytes(it.Key())
		v, ok := a.Key(root, k)
		w, ok2 := r.Get(Path{KeyStep(string(k))})
		if !ok || !ok2 || v != it.Value() || w != v {
			t.Fatalf("key %q not found", k)
		}
	}
	for i := 0; i < r.a.Len(root) && i < 3; i++ {
		k, v := r.a.entry(r.Root(), i)
		p := Path{KeyStepBytes(a.Bytes(k))}
		switch i {
		case 0:
			r.Set(append(p, KeyStep("new")), IntValue(1))
		case 1:
			if v.Kind() == Map {
				r.Lift(p, []byte("l_"))
			} else {
				r.rename(p, NewPath("renamed"))
			}
		case 2:
			r.Remove(p)
		}
	}
	r.Set(NewPath("x", "y"), a.NewStringFrom("z"))
	// The spliced output is the full encode's value, key order included.
	spliced, full := r.AppendJSON(nil), a.AppendJSON(nil, r.Root())
	if g, w := canonJSON(t, spliced), canonJSON(t, full); g != w || bytes.ContainsAny(spliced, "\r\n") {
		t.Fatalf("spliced %q, full %q", spliced, full)
	}
	checkMsgpackSplice(t, "edits", r)
	r.Discard()
	if after := r.AppendJSON(nil); string(after) != string(before) {
		t.Fatalf("Discard: %s, want %s", after, before)
	}
}

func FuzzDecodeMsgpack(f *testing.F) {
	seeds := [][]byte{b2Msgpack(f)}
	small := sampleGo()
	delete(small, "s70k") // big seeds make minimizing slow
	for _, x := range []any{small, map[string]any{}, map[string]any{"a": []any{map[string]any{"b": nil}}}} {
		seeds = append(seeds, mustMarshal(f, x))
	}
	seeds = append(seeds,
		append([]byte{0x92, 0x92}, append(eventTime(1, 2), 0x81, 0xa1, 'm', 0x01, 0x80)...),
		[]byte{0x92, 0x01, 0x81, 0xa1, 'a', 0xc0},
		[]byte{0xdf, 0xff, 0xff, 0xff, 0xff},
		[]byte{0x81, 0xa1, 'a', 0xd7, 0xff, 0, 0, 0, 1, 0, 0, 0, 1},
		// The array and map headers Fluent Bit writes: array16 and array32
		// events, map16 and map32 bodies and metadata.
		append([]byte{0xdc, 0, 2}, append(eventTime(1, 2), 0xde, 0, 1, 0xa1, 'a', 0x01)...),
		append([]byte{0xdd, 0, 0, 0, 2, 0xdc, 0, 2, 0x01, 0xdf, 0, 0, 0, 0}, 0xdf, 0, 0, 0, 1, 0xa1, 'a', 0xc0),
		[]byte{0xdc, 0, 3, 0x01, 0x80, 0x80},
		[]byte{0xdd, 0, 0, 0},
	)
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a := NewArena()
		a.Limits.MaxDepth = 32
		r, n, err := a.DecodeMsgpack(in, Referenced)
		ro, no, erro := a.DecodeMsgpack(in, Owned)
		if (err == nil) != (erro == nil) || n != no {
			t.Fatalf("modes disagree: %v / %v", err, erro)
		}
		// The extent of a value is known whenever it decodes, and is what
		// the decoder consumed.
		skip, ok := MsgpackLen(in)
		if ok && (skip <= 0 || skip > len(in)) || err == nil && (!ok || skip != n) {
			t.Fatalf("MsgpackLen %d %v, decoded %d %v", skip, ok, n, err)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(in) {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if n <= 0 || n > len(in) || !r.equal(ro) {
			t.Fatalf("n %d of %d, equal %v", n, len(in), r.equal(ro))
		}
		out := r.AppendMsgpack(nil)
		r2, n2, err := a.DecodeMsgpack(out, Owned)
		if err != nil || n2 != len(out) || !r.equal(r2) || r2.layout != r.layout {
			t.Fatalf("round trip: %v", err)
		}
		var lib map[string]any
		if err := msgpack.Unmarshal(r.appendMsgpackAs(nil, layoutMap), &lib); err != nil {
			t.Fatalf("msgpack/v5 rejects our output: %v", err)
		}
		libv, err := a.fromGo(normGo(lib))
		if err != nil || !ValueEqual(a, libv, a, r.Root()) {
			t.Fatalf("msgpack/v5 reads\n %v\nwant %v", lib, r.ToGo())
		}
		fuzzEdits(t, r)
	})
}
