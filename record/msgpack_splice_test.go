package record

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

// msgpack spellings that a full encode would not write: a str8 key, a
// map16, an int64 for a small int, a float32.
var (
	mkey8  = func(s string) []byte { return append([]byte{0xd9, byte(len(s))}, s...) }
	mkey16 = func(s string) []byte { return append([]byte{0xda, 0, byte(len(s))}, s...) }
	mkey32 = func(s string) []byte { return append([]byte{0xdb, 0, 0, 0, byte(len(s))}, s...) }
	mfix   = func(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }
	mint64 = func(i int64) []byte { return binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(i)) }
	mf32   = []byte{0xca, 0x3f, 0xc0, 0, 0} // 1.5
	cat    = func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
)

func TestSplicedMsgpack(t *testing.T) {
	p := MustParsePath
	// {"a": 1, "bb": {"x": 1.5, "y": "v"}, "c": [1, {"z": 2}]}, spelled wide.
	inner := cat([]byte{0xde, 0, 2}, mkey8("x"), mf32, mkey16("y"), mfix("v"))
	arr := cat([]byte{0xdc, 0, 2}, mint64(1), []byte{0x81}, mkey32("z"), mint64(2))
	in := cat([]byte{0xde, 0, 3}, mkey8("a"), mint64(1), mfix("bb"), inner, mfix("c"), arr)
	tests := []struct {
		name string
		do   func(a *Arena, r *Record)
		want []byte
	}{
		{"unedited", func(a *Arena, r *Record) {}, in},
		{"remove first", func(a *Arena, r *Record) { r.Remove(p(".a")) },
			cat([]byte{0x82}, mfix("bb"), inner, mfix("c"), arr)},
		{"remove last", func(a *Arena, r *Record) { r.Remove(p(".c")) },
			cat([]byte{0x82}, mkey8("a"), mint64(1), mfix("bb"), inner)},
		{"set in place and append", func(a *Arena, r *Record) {
			r.Set(p(".bb"), IntValue(7))
			r.Set(p(".env"), a.NewStringFrom("prod"))
		}, cat([]byte{0x84}, mkey8("a"), mint64(1), mfix("bb"), []byte{7}, mfix("c"), arr, mfix("env"), mfix("prod"))},
		{"nested", func(a *Arena, r *Record) { r.Remove(p(".bb.x")) },
			cat([]byte{0x83}, mkey8("a"), mint64(1), mfix("bb"), []byte{0x81}, mkey16("y"), mfix("v"), mfix("c"), arr)},
		{"nested in an array", func(a *Arena, r *Record) { r.Set(p(".c[1].w"), BoolValue(true)) },
			cat([]byte{0x83}, mkey8("a"), mint64(1), mfix("bb"), inner, mfix("c"),
				[]byte{0x92, 1, 0x82}, mkey32("z"), mint64(2), mfix("w"), []byte{0xc3})},
		// Entries that moved, and entries whose value changed, are
		// encoded (a float32 as a float64), the maps they hold copied.
		{"lift", func(a *Arena, r *Record) { r.Lift(p(".bb"), nil) },
			cat([]byte{0x84}, mkey8("a"), mint64(1), mfix("c"), arr, mfix("x"),
				[]byte{0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, mfix("y"), mfix("v"))},
		{"moved map", func(a *Arena, r *Record) {
			v, _ := r.Get(p(".bb"))
			r.Set(p(".a"), v)
		}, cat([]byte{0x83}, mfix("a"), []byte{0x82}, mkey8("x"), mf32, mkey16("y"), mfix("v"), mfix("bb"), inner, mfix("c"), arr)},
		{"rename", func(a *Arena, r *Record) { r.rename(p(".a"), p(".q")) },
			cat([]byte{0x83}, mfix("bb"), inner, mfix("c"), arr, mfix("q"), []byte{0x01})}, // re-encoded where it moved
		{"edit, commit, edit", func(a *Arena, r *Record) {
			r.Set(p(".bb.x"), IntValue(0))
			r.Commit()
			r.Remove(p(".a"))
		}, cat([]byte{0x82}, mfix("bb"), []byte{0x82}, mfix("x"), []byte{0}, mkey16("y"), mfix("v"), mfix("c"), arr)},
		{"edit then discard", func(a *Arena, r *Record) { r.Remove(p(".a")); r.Discard() }, in},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			ev := cat([]byte{0x92}, eventTime(7, 8), in)
			r, _, err := a.DecodeMsgpack(append(cloneBytes(ev), 0xc0), mode)
			if err != nil {
				t.Fatal(err)
			}
			tt.do(a, r)
			got := r.AppendMsgpack(nil)
			if want := cat([]byte{0x92}, eventTime(7, 8), tt.want); !bytes.Equal(got, want) {
				t.Errorf("%s, mode %d:\n got %x\nwant %x", tt.name, mode, got, want)
			}
			checkMsgpackSplice(t, tt.name, r)
		}
	}
}

// checkMsgpackSplice holds r's msgpack output to the full encode: the same
// layout and time, and the same value with the same key order.
func checkMsgpackSplice(t *testing.T, where string, r *Record) {
	t.Helper()
	a := r.Arena()
	got := r.AppendMsgpack(nil)
	b := NewArena()
	g, n, err := b.DecodeMsgpack(got, Owned)
	if err != nil || n != len(got) {
		t.Fatalf("%s: output %x: %v", where, got, err)
	}
	if g.layout != r.layout || g.Time() != r.Time() || !orderedEqual(b, g.Root(), a, r.Root()) {
		t.Fatalf("%s:\nspliced %x\n   full %x", where, got, a.appendMsgpack(nil, r.Root()))
	}
}

// orderedEqual is ValueEqual with the keys of maps in the same order.
func orderedEqual(xa *Arena, x Value, ya *Arena, y Value) bool {
	if x.kind() != y.kind() || !ValueEqual(xa, x, ya, y) {
		return false
	}
	if x.kind() == Map || x.kind() == Array {
		for i, j := xa.Iter(x), ya.Iter(y); i.Next() && j.Next(); {
			if x.kind() == Map && !bytes.Equal(xa.raw(i.Key()), ya.raw(j.Key())) ||
				!orderedEqual(xa, i.Value(), ya, j.Value()) {
				return false
			}
		}
	}
	return true
}

// randomMsgpack writes a random msgpack map, in every header width, with
// what the decoder normalises (duplicate keys, uints above int64) now and
// then.
func randomMsgpack(rng *rand.Rand, b []byte, depth int, top bool) []byte {
	keys := []string{"a", "b", "level", "msg", "é", strings.Repeat("k", 40), "x"}
	hdr := func(fix byte, fixMax int, c8, c16, c32 byte, n int) []byte {
		switch w := rng.IntN(4); {
		case w == 0 && n <= fixMax:
			return append(b, fix|byte(n))
		case w == 1 && c8 != 0 && n <= 0xff:
			return append(b, c8, byte(n))
		case w <= 2:
			return binary.BigEndian.AppendUint16(append(b, c16), uint16(n))
		}
		return binary.BigEndian.AppendUint32(append(b, c32), uint32(n))
	}
	str := func(s string) []byte {
		b = hdr(0xa0, 31, 0xd9, 0xda, 0xdb, len(s))
		return append(b, s...)
	}
	k := rng.IntN(10)
	switch {
	case top || depth > 0 && k >= 8:
		if top || k == 9 {
			n := rng.IntN(6)
			b = hdr(0x80, 15, 0, 0xde, 0xdf, n)
			for i := 0; i < n; i++ {
				b = str(keys[rng.IntN(len(keys))])
				b = randomMsgpack(rng, b, depth-1, false)
			}
			return b
		}
		n := rng.IntN(4)
		b = hdr(0x90, 15, 0, 0xdc, 0xdd, n)
		for i := 0; i < n; i++ {
			b = randomMsgpack(rng, b, depth-1, false)
		}
		return b
	}
	switch k {
	case 0:
		return append(b, []byte{0xc0, 0xc2, 0xc3}[rng.IntN(3)])
	case 1:
		return append(b, [][]byte{{0x05}, {0xff}, {0xcc, 200}, {0xd0, 0x80}, {0xd1, 1, 0}, mint64(-3),
			{0xcf, 0xff, 0, 0, 0, 0, 0, 0, 1}}[rng.IntN(7)]...)
	case 2:
		return append(b, [][]byte{mf32, {0xcb, 0x3f, 0xe0, 0, 0, 0, 0, 0, 0}}[rng.IntN(2)]...)
	case 3:
		return append(b, 0xc4, 2, 0, 1) // bin
	case 4:
		return append(b, [][]byte{{0xd6, 0xff, 0, 0, 0, 9}, {0xd7, 0x00, 0, 0, 0, 1, 0, 0, 0, 2}}[rng.IntN(2)]...)
	}
	return str([]string{"", "v", "hello world", "é😀", strings.Repeat("s", 300)}[rng.IntN(5)])
}

// TestSplicedMsgpackProperty: random events, random edit sequences (those
// of TestSplicedJSONProperty): after each step, the spliced output decodes
// to the record's value, key order included.
func TestSplicedMsgpackProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 5))
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	keys := []string{"a", "b", "level", "msg", "é", "new", "x"}
	spliced := 0
	for round := 0; round < rounds; round++ {
		var ev []byte
		switch rng.IntN(3) {
		case 1:
			ev = append([]byte{0x92}, eventTime(uint32(round), 1)...)
		case 2:
			ev = append([]byte{0x92, 0x92}, eventTime(uint32(round), 1)...)
			ev = append(ev, 0x81, 0xa1, 'm', 0x01)
		}
		ev = randomMsgpack(rng, ev, 4, true)
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			r, _, err := a.DecodeMsgpack(ev, mode)
			if err != nil {
				t.Fatalf("%x: %v", ev, err)
			}
			if r.text().kind() == Bytes && !bytes.HasSuffix(ev, r.AppendMsgpack(nil)[len(ev)-int(r.text().n()):]) {
				t.Fatalf("%x: not passed through: %x", ev, r.AppendMsgpack(nil))
			}
			var log []string
			for step := 0; step < 8; step++ {
				log = append(log, randomEdit(rng, a, r, keys))
				checkMsgpackSplice(t, strings.Join(log, "; "), r)
				if r.text().kind() == Bytes && r.Edited() {
					spliced++
				}
			}
		}
	}
	if spliced < rounds {
		t.Errorf("only %d spliced outputs", spliced)
	}
}

// FuzzSplicedMsgpack: any event the decoder takes, edited by the steps the
// fuzzer picks, writes the value a full encode would (its seed corpus runs
// as a test).
func FuzzSplicedMsgpack(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 24; i++ {
		f.Add(randomMsgpack(rng, nil, 3, true), uint64(i))
	}
	f.Add(b2Msgpack(f), uint64(99))
	f.Fuzz(func(t *testing.T, in []byte, seed uint64) {
		a := NewArena()
		a.Limits.MaxDepth = 32
		r, n, err := a.DecodeMsgpack(in, Referenced)
		if err != nil {
			return
		}
		if r.text().kind() == Bytes && !bytes.Equal(r.AppendMsgpack(nil)[len(r.AppendMsgpack(nil))-int(r.text().n()):], in[n-int(r.text().n()):n]) {
			t.Fatalf("unedited body not passed through")
		}
		rng := rand.New(rand.NewPCG(seed, 3))
		for step := 0; step < 6; step++ {
			what := randomEdit(rng, a, r, []string{"a", "b", "msg", "x"})
			checkMsgpackSplice(t, what, r)
		}
	})
}

// TestAllocsSplicedMsgpack: decoding, editing and the spliced msgpack
// output allocate nothing in steady state.
func TestAllocsSplicedMsgpack(t *testing.T) {
	in := b2Msgpack(t)
	decode := func(a *Arena) (*Record, error) { r, _, err := a.DecodeMsgpack(in, Referenced); return r, err }
	trace, env, proto := NewPath("trace_id"), NewPath("env"), NewPath("http", "proto")
	edit := func(a *Arena, i int, r *Record) {
		r.Remove(trace)
		r.Set(env, a.NewStringFrom("prod"))
		r.Set(proto, IntValue(int64(i)))
	}
	n, out := allocsPer16(decode, edit, (*Record).AppendMsgpack)
	if n != 0 {
		t.Errorf("decode + edits + spliced output: %v allocs per 16 records, want 0", n)
	}
	if len(out) == 0 {
		t.Error("no output")
	}
}
