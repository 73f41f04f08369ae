package record

import (
	"bytes"
	"errors"
	"testing"
)

const editInput = `{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str"}`

// editOp is an edit the edit tests make of a record; renameOp and liftOp
// are two they all make.
type editOp = func(r *Record) error

func renameOp(from, to string) editOp {
	return func(r *Record) error { return r.rename(MustParsePath(from), MustParsePath(to)) }
}

func liftOp(p, prefix string) editOp {
	return func(r *Record) error { return r.Lift(MustParsePath(p), []byte(prefix)) }
}

func TestEdits(t *testing.T) {
	type op = editOp
	set := func(p string, v Value) op { return func(r *Record) error { return r.Set(MustParsePath(p), v) } }
	setJSON := func(p, js string) op {
		return func(r *Record) error {
			v, err := r.Arena().DecodeJSONValue([]byte(js))
			if err != nil {
				return err
			}
			return r.Set(MustParsePath(p), v)
		}
	}
	ifAbsent := func(p string, v Value) op {
		return func(r *Record) error { _, err := r.SetIfAbsent(MustParsePath(p), v); return err }
	}
	remove := func(p string) op { return func(r *Record) error { r.Remove(MustParsePath(p)); return nil } }
	rename, lift := renameOp, liftOp
	take := func(p, want string) op {
		return func(r *Record) error {
			v, ok := r.Take(MustParsePath(p))
			got := "absent"
			if ok {
				got = string(r.Arena().AppendJSON(nil, v))
			}
			if got != want {
				return errors.New("Take(" + p + ") = " + got + ", want " + want)
			}
			return nil
		}
	}
	copyTo := func(from, to string) op {
		return func(r *Record) error {
			v, _ := r.Get(MustParsePath(from))
			return r.Set(MustParsePath(to), v)
		}
	}
	tests := []struct {
		name string
		ops  []op
		want string
		err  error
	}{
		{"none", nil, editInput, nil},
		{"overwrite keeps position", []op{set(".a", IntValue(2))},
			`{"a":2,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str"}`, nil},
		{"new key at end", []op{set(".z", FloatValue(1.5))},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","z":1.5}`, nil},
		{"nested create", []op{set(".x.y.z", BoolValue(false))},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","x":{"y":{"z":false}}}`, nil},
		{"null parent becomes map", []op{set(".n.k", IntValue(7))},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":{"k":7},"s":"str"}`, nil},
		{"set through scalar", []op{set(".a.b", IntValue(7))}, editInput, ErrNotContainer},
		{"set index", []op{set(".arr[1].k", NullValue()), set(".arr[-1]", IntValue(9))},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":null},9],"n":null,"s":"str"}`, nil},
		{"set index out of range", []op{set(".arr[3]", IntValue(9))}, editInput, ErrIndexRange},
		{"set index in created map", []op{set(".q.r[0]", IntValue(9))}, editInput, ErrIndexRange},
		{"set root", []op{setJSON(".", `{"only":1}`)}, `{"only":1}`, nil},
		{"set root scalar", []op{set(".", IntValue(1))}, editInput, ErrRootType},
		{"set absent removes", []op{set(".a", Value{})},
			`{"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str"}`, nil},
		{"if absent: present", []op{ifAbsent(".a", IntValue(5))}, editInput, nil},
		{"if absent: null and absent", []op{ifAbsent(".n", IntValue(5)), ifAbsent(".m", IntValue(6))},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":5,"s":"str","m":6}`, nil},
		{"remove", []op{remove(".b.c"), remove(".arr[0]"), remove(".missing.x"), remove(".a.b")},
			`{"a":1,"b":{"d":{"e":true}},"arr":[{"k":"v"},3],"n":null,"s":"str"}`, nil},
		{"if absent after an edit", []op{set(".z", IntValue(1)), ifAbsent(".n", IntValue(5)), ifAbsent(".a", IntValue(6)),
			ifAbsent(".y", IntValue(7))},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":5,"s":"str","z":1,"y":7}`, nil},
		{"remove top keys, edited or not", []op{remove(".arr"), remove(".nope"), set(".z", IntValue(1)), remove(".a"),
			remove(".z"), remove(".s")},
			`{"b":{"c":"x","d":{"e":true}},"n":null}`, nil},
		{"take", []op{take(".b.d", `{"e":true}`), take(".arr[-1]", "3"), take(".nope", "absent"),
			take(".b.nope", "absent"), take(".a", "1"), take(".a", "absent")},
			`{"b":{"c":"x"},"arr":[1,{"k":"v"}],"n":null,"s":"str"}`, nil},
		{"take root", []op{take(".", editInput)}, `{}`, nil},
		{"remove root", []op{remove(".")}, `{}`, nil},
		{"rename", []op{rename(".a", ".a2")},
			`{"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","a2":1}`, nil},
		{"rename overwrites", []op{rename(".a", ".s")},
			`{"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":1}`, nil},
		{"rename across maps", []op{rename(".b.d", ".top")},
			`{"a":1,"b":{"c":"x"},"arr":[1,{"k":"v"},3],"n":null,"s":"str","top":{"e":true}}`, nil},
		{"rename absent", []op{rename(".nope", ".a")}, editInput, nil},
		{"rename into itself", []op{rename(".b", ".b.inner")},
			`{"a":1,"arr":[1,{"k":"v"},3],"n":null,"s":"str","b":{"inner":{"c":"x","d":{"e":true}}}}`, nil},
		{"rename to bad path", []op{rename(".a", ".s.x")}, // taken, then the set fails: the VM discards such a record
			`{"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str"}`, ErrNotContainer},
		{"lift", []op{lift(".b", "b_")},
			`{"a":1,"arr":[1,{"k":"v"},3],"n":null,"s":"str","b_c":"x","b_d":{"e":true}}`, nil},
		{"lift overwrites in place", []op{setJSON(".m", `{"a":10,"new":11}`), lift(".m", "")},
			`{"a":10,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","new":11}`, nil},
		{"lift nested", []op{lift(".b.d", "")},
			`{"a":1,"b":{"c":"x","e":true},"arr":[1,{"k":"v"},3],"n":null,"s":"str"}`, nil},
		{"lift own name", []op{setJSON(".m", `{"m":1}`), lift(".m", "")},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","m":1}`, nil},
		{"lift absent and null", []op{lift(".zz", "p"), lift(".n", "p")}, editInput, nil},
		{"lift scalar", []op{lift(".a", "p")}, editInput, ErrNotLiftable},
		{"lift in array", []op{lift(".arr[1]", "p")}, editInput, ErrNotLiftable},
		{"copy is a copy", []op{copyTo(".b", ".b2"), set(".b.c", IntValue(0)), set(".b2.d.e", IntValue(1))},
			`{"a":1,"b":{"c":0,"d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","b2":{"c":"x","d":{"e":1}}}`, nil},
		{"copy of edited map is a copy", []op{set(".b.c", IntValue(0)), copyTo(".b", ".b2"),
			set(".b.d.e", IntValue(5)), set(".b2.c", IntValue(2))},
			`{"a":1,"b":{"c":0,"d":{"e":5}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","b2":{"c":2,"d":{"e":true}}}`, nil},
		{"many appends grow", []op{set(".k1", IntValue(1)), set(".k2", IntValue(2)), set(".k3", IntValue(3)),
			set(".k4", IntValue(4)), set(".k5", IntValue(5)), set(".k6", IntValue(6)), remove(".k3")},
			`{"a":1,"b":{"c":"x","d":{"e":true}},"arr":[1,{"k":"v"},3],"n":null,"s":"str","k1":1,"k2":2,"k4":4,"k5":5,"k6":6}`, nil},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			r := mustDecode(t, a, editInput, mode)
			var err error
			for _, o := range tt.ops {
				if err = o(r); err != nil {
					break
				}
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: err %v, want %v", tt.name, err, tt.err)
			}
			if got := string(r.AppendJSON(nil)); got != tt.want {
				t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
			}
			r.Discard()
			if got := string(r.AppendJSON(nil)); got != editInput || r.Edited() {
				t.Errorf("%s: after Discard %s", tt.name, got)
			}
		}
	}
}

func TestMetadataOverlay(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"a":1}`, Referenced)
	r.SetTag([]byte("app.log"))
	r.SetTime(1_700_000_000_123_456_789)
	r.Commit()
	r.SetTag([]byte("other"))
	r.SetTime(5)
	r.Set(NewPath("b"), IntValue(2))
	if string(r.Tag()) != "other" || r.Time() != 5 || !r.Edited() {
		t.Fatal("edits not seen")
	}
	r.Discard()
	if string(r.Tag()) != "app.log" || r.Time() != 1_700_000_000_123_456_789 || r.Edited() {
		t.Errorf("Discard: tag %q time %d", r.Tag(), r.Time())
	}
	if got := string(r.AppendJSON(nil)); got != `{"a":1}` {
		t.Errorf("got %s", got)
	}
}

func TestBuilders(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"m":{"x":1}}`, Referenced)
	inner := a.BeginArray(0)
	outer := a.BeginMap(1) // interleaved with inner
	for i := 0; i < 10; i++ {
		inner.Append(IntValue(int64(i)))
	}
	sb := a.StringBuilder()
	sb.Start()
	sb.WriteString("he")
	sb.WriteBytes([]byte("llo"))
	sb.WriteByte('!')
	s := sb.End()
	outer.Add(a.NewStringFrom("s"), s)
	outer.Add(a.NewStringFrom("arr"), inner.Finish())
	m, _ := r.Get(NewPath("m"))
	outer.Add(a.NewStringFrom("m"), m)
	outer.Add(a.NewStringFrom("s"), IntValue(1)) // last wins, first position
	v := outer.Finish()
	if err := r.Set(NewPath("new"), v); err != nil {
		t.Fatal(err)
	}
	r.Set(MustParsePath(".m.x"), IntValue(2))
	want := `{"m":{"x":2},"new":{"s":1,"arr":[0,1,2,3,4,5,6,7,8,9],"m":{"x":1}}}`
	if got := string(r.AppendJSON(nil)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if a.Str(s) != "hello!" || a.Len(s) != 6 {
		t.Errorf("string %q", a.Str(s))
	}
}

// allocsPer16 counts the allocations of a batch of 16 records, each
// decoded into an arena reset before the batch, processed and encoded,
// after a batch to warm up. It returns the last record's encoding too.
func allocsPer16(decode func(a *Arena) (*Record, error), process func(a *Arena, i int, r *Record),
	encode func(r *Record, dst []byte) []byte) (float64, []byte) {
	a := NewArena()
	out := make([]byte, 0, 1024)
	run := func() {
		a.Reset()
		for i := 0; i < 16; i++ {
			r, err := decode(a)
			if err != nil {
				panic(err)
			}
			process(a, i, r)
			out = encode(r, out[:0])
		}
	}
	run()
	return testing.AllocsPerRun(100, run), out
}

var pLevel, pUA, pAdded = NewPath("level"), NewPath("http", "user_agent"), NewPath("http", "added")

// editB2 makes three edits of the B2 record: a string set, a remove and a
// nested add.
func editB2(a *Arena, _ int, r *Record) {
	if err := r.Set(pLevel, a.NewStringFrom("warn")); err != nil {
		panic(err)
	}
	r.Remove(pUA)
	if err := r.Set(pAdded, IntValue(1)); err != nil {
		panic(err)
	}
}

func TestAllocsJSON(t *testing.T) {
	line := []byte(b2JSON)
	decode := func(a *Arena) (*Record, error) { return a.DecodeJSON(line, Referenced) }
	if n, _ := allocsPer16(decode, editB2, (*Record).AppendJSON); n != 0 {
		t.Errorf("decode + 3 edits + encode: %v allocs per 16 records, want 0", n)
	}
}

// TestNewRecordLikeOtherArena: a record made like one of another arena
// holds copies of its tag and metadata (copyValue), which outlive that
// arena's Reset.
func TestNewRecordLikeOtherArena(t *testing.T) {
	meta := mustMarshal(t, map[string]any{"otlp": map[string]any{"severity": "INFO", "ids": []any{1, "two"}}})
	body := mustMarshal(t, map[string]any{"log": "x"})
	ev := cat([]byte{0x92, 0x92}, eventTime(7, 8), meta, body)
	src := NewArena()
	r, _, err := src.DecodeMsgpack(ev, Referenced)
	if err != nil {
		t.Fatal(err)
	}
	r.SetTag([]byte("t"))
	dst := NewArena()
	c := dst.NewRecordLike(r)
	src.Reset()
	mustDecode(t, src, `{"overwrite":"the arena with other data, more than before............"}`, Owned)
	want := cat([]byte{0x92, 0x92}, eventTime(7, 8), meta, []byte{0x80})
	if got := c.AppendMsgpack(nil); !bytes.Equal(got, want) || string(c.Tag()) != "t" {
		t.Errorf("tag %q, record %x, want %x", c.Tag(), got, want)
	}
}

// A copy's strings are their bytes alone, without the quotes or the
// separators that lay around them: it must not say they are there
// (flagQuoted, flagFramed), and its JSON is still right.
func TestCopyQuoting(t *testing.T) {
	src := NewArena()
	r := mustDecode(t, src, `{"a":"x y","n":1}`, Referenced)
	v, _ := r.Get(NewPath("a"))
	k := src.newKey(&NewPath("k")[0])
	dst := NewArena()
	for _, x := range []Value{v, k} {
		if x.h&flagQuoted == 0 {
			t.Fatalf("%q: not quoted in its buffer", src.Bytes(x))
		}
		c := dst.copyValue(src, x)
		if c.h&(flagQuoted|flagFramed) != 0 {
			t.Errorf("%q: the copy keeps flags %#x", dst.Bytes(c), c.flags())
		}
		if got, want := string(dst.AppendJSON(nil, c)), string(src.AppendJSON(nil, x)); got != want {
			t.Errorf("copy %s, want %s", got, want)
		}
	}
}

func TestCommit(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"a":{"b":{"c":1}},"x":[1,{"y":2}]}`, Referenced)
	r.Set(MustParsePath(".a.b.c"), IntValue(2))
	r.Set(MustParsePath(".x[1].y"), IntValue(3))
	r.Commit()
	committed := `{"a":{"b":{"c":2}},"x":[1,{"y":3}]}`
	if r.Edited() {
		t.Error("Edited after Commit")
	}
	r.Set(MustParsePath(".a.b.c"), IntValue(9))
	r.Set(MustParsePath(".x[1].y"), IntValue(9))
	r.Remove(NewPath("a"))
	r.Discard()
	if got := string(r.AppendJSON(nil)); got != committed {
		t.Errorf("after Discard %s, want %s", got, committed)
	}
}

// TestCommitShallow covers Commit after edits of the root's keys only, which
// skips the freeze walk, and after nested edits moved to another key.
func TestCommitShallow(t *testing.T) {
	a := NewArena()
	r := mustDecode(t, a, `{"a":{"b":1},"c":2}`, Referenced)
	check := func(step, want string) {
		t.Helper()
		if got := string(r.AppendJSON(nil)); got != want {
			t.Errorf("%s: %s, want %s", step, got, want)
		}
	}
	r.Set(NewPath("d"), IntValue(3))
	r.Remove(NewPath("c"))
	r.Commit()
	r.Set(NewPath("d"), IntValue(4))
	r.Set(MustParsePath(".a.b"), IntValue(5))
	r.Discard()
	check("shallow", `{"a":{"b":1},"d":3}`)
	r.Set(MustParsePath(".a.b"), IntValue(6))
	if err := r.rename(NewPath("a"), NewPath("d")); err != nil {
		t.Fatal(err)
	}
	r.Commit()
	r.Set(MustParsePath(".d.b"), IntValue(7))
	r.Discard()
	check("renamed", `{"d":{"b":6}}`)
}

// Arena.Get reads a path inside a value kept from before edits: the
// value as it was, while the record's Get sees the edits.
func TestArenaGet(t *testing.T) {
	a := NewArena()
	rec, err := a.DecodeJSON([]byte(`{"a": {"b": [1, {"c": "x"}]}, "d": 2}`), Owned)
	if err != nil {
		t.Fatal(err)
	}
	before := rec.Root()
	if err := rec.Set(MustParsePath(".a.b[1].c"), IntValue(3)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string
	}{{".a.b[1].c", `"x"`}, {".a.b[-1].c", `"x"`}, {".d", "2"}, {".a.b[2]", "absent"}, {".d.e", "absent"}, {".x", "absent"}, {".", `{"a":{"b":[1,{"c":"x"}]},"d":2}`}} {
		got := "absent"
		if v, ok := a.Get(before, MustParsePath(tc.path)); ok {
			got = string(a.AppendJSON(nil, v))
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.path, got, tc.want)
		}
	}
	if v, _ := rec.Get(MustParsePath(".a.b[1].c")); v.Int() != 3 {
		t.Errorf("the record's Get: %v", v)
	}
}
