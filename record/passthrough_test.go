package record

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestJSONPassThrough(t *testing.T) {
	x := NewPath("x")
	tests := []struct {
		name string
		line string
		do   func(r *Record)
		pass bool // the output is the trimmed line, else the encoder's
	}{
		{"canonical", `{"a":1,"b":"x","c":[true,null,1.5],"d":{}}`, nil, true},
		{"surrounding space", " \t{\"a\":1}  \r\n", nil, true},
		{"inner spaces", `{"a": 1, "b" : [1, 2], "c":{ }}`, nil, true},
		{"inner line break", "{\"a\":\n1}", nil, false},
		{"inner carriage return", "{\"a\":1\r,\"b\":2}", nil, false},
		{"escapes", `{"s":"\u00e9\/\"\\\n\u0000","\u006b":"v"}`, nil, true},
		{"surrogate pair", `{"s":"\ud83d\ude00"}`, nil, true},
		{"number forms", `{"e":1E+2,"z":-0,"f":1.50,"u":1e-400}`, nil, true},
		{"escaped keys, no duplicate", `{"\u0061":1,"b":2,"a\u0062":3}`, nil, true},
		{"duplicate key", `{"a":1,"b":2,"a":3}`, nil, false},
		{"duplicate key by escape", `{"a":1,"\u0061":2}`, nil, false},
		{"nested duplicate key", `{"x":[{"k":1,"k":2}]}`, nil, false},
		{"big int", `{"n":18446744073709551616}`, nil, false},
		{"negative big int", `{"a":[-9223372036854775809]}`, nil, false},
		{"int64 bounds", `{"a":-9223372036854775808,"b":9223372036854775807}`, nil, true},
		{"lone surrogate", `{"s":"a\ud800b"}`, nil, false},
		{"lone low surrogate", `{"s":"\udc00"}`, nil, false},
		{"edit", `{"a":1}`, func(r *Record) { r.Set(x, IntValue(2)) }, false},
		{"nested edit", `{"a":{"b":1}}`, func(r *Record) { r.Set(NewPath("a", "b"), IntValue(1)) }, false},
		{"remove", `{"a":1,"x":2}`, func(r *Record) { r.Remove(x) }, false},
		{"remove absent", `{"a":1}`, func(r *Record) { r.Remove(x) }, true},
		{"edit then discard", `{"a": 1}`, func(r *Record) { r.Set(x, IntValue(2)); r.Discard() }, true},
		{"edit then commit", `{"a": 1}`, func(r *Record) { r.Set(x, IntValue(2)); r.Commit() }, false},
		{"edit, commit, discard", `{"a": 1}`, func(r *Record) {
			r.Set(x, IntValue(2))
			r.Commit()
			r.Discard()
		}, false},
		{"tag, time and commit", `{"a": 1}`, func(r *Record) {
			r.SetTag([]byte("t"))
			r.SetTime(5)
			r.Commit()
			r.Set(x, IntValue(2))
			r.Discard()
		}, true},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			in := []byte(tt.line)
			r := mustDecode(t, a, tt.line, mode)
			if tt.do != nil {
				tt.do(r)
			}
			got := r.AppendJSON([]byte("prefix"))
			want := append([]byte("prefix"), a.AppendJSON(nil, r.Root())...)
			if tt.pass {
				want = append([]byte("prefix"), bytes.TrimSpace(in)...)
			} else {
				// An edited line is spliced: the same value and key
				// order as the full encode, in the line's spelling.
				got = append([]byte("prefix"), canonJSON(t, got[len("prefix"):])...)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s, mode %d: got %s, want %s", tt.name, mode, got, want)
			}
		}
	}
}

func TestPassThroughNotFromMsgpack(t *testing.T) {
	a := NewArena()
	r, _, err := a.DecodeMsgpack(b2Msgpack(t), Referenced)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.AppendJSON(nil), a.AppendJSON(nil, r.Root()); !bytes.Equal(got, want) {
		t.Errorf("got %s, want %s", got, want)
	}
}

// randomJSON writes a random JSON object, with what the decoder normalises
// (duplicate keys, big integers, lone surrogates) and what it does not
// (spacing, escapes, number forms), each now and then.
func randomJSON(rng *rand.Rand, sb *strings.Builder, depth int, top bool) {
	sp := func() {
		if rng.IntN(6) == 0 {
			sb.WriteString([]string{" ", "  ", "\t", "\n", "\r\n"}[rng.IntN(5)])
		}
	}
	keys := []string{`"a"`, `"b"`, `"level"`, `"\u0061"`, `"msg"`, `"k\n"`, `"\u00e9"`, `"é"`}
	k := rng.IntN(8)
	if top || depth > 0 && k >= 6 {
		if top || k == 7 {
			sb.WriteByte('{')
			n := rng.IntN(6)
			for i := 0; i < n; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				sp()
				sb.WriteString(keys[rng.IntN(len(keys))])
				sp()
				sb.WriteByte(':')
				sp()
				randomJSON(rng, sb, depth-1, false)
				sp()
			}
			sb.WriteByte('}')
			return
		}
		sb.WriteByte('[')
		for i, n := 0, rng.IntN(4); i < n; i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			sp()
			randomJSON(rng, sb, depth-1, false)
		}
		sb.WriteByte(']')
		return
	}
	switch k % 6 {
	case 0:
		sb.WriteString([]string{"null", "true", "false"}[rng.IntN(3)])
	case 1:
		sb.WriteString([]string{"0", "-0", "1", "-12", "9223372036854775807", "-9223372036854775808",
			"9223372036854775808", "18446744073709551616", "-99999999999999999999"}[rng.IntN(9)])
	case 2:
		sb.WriteString([]string{"1.5", "-0.0", "1e3", "1E+2", "2.50", "1e-400", "0.1", "123456789012345678.5",
			"1.7976931348623157e308", "5e-324"}[rng.IntN(10)])
	default:
		sb.WriteByte('"')
		for n := rng.IntN(5); n > 0; n-- {
			sb.WriteString([]string{"x", "hello world", `\"`, `\\`, `\/`, `\n`, `\u0000`, `\u00e9`, "é", "😀",
				`\ud83d\ude00`, `\ud800`, `\udc00x`, `\u2028`, `\t`, `\b\f\r`}[rng.IntN(16)])
		}
		sb.WriteByte('"')
	}
}

// TestPassThroughProperty: for random JSON records, the output with
// pass-through decodes to the same value as the output without.
func TestPassThroughProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var sb strings.Builder
	passed := 0
	for i := 0; i < 5000; i++ {
		sb.Reset()
		sb.WriteString([]string{"", " ", "\t "}[rng.IntN(3)])
		randomJSON(rng, &sb, 3, true)
		sb.WriteString([]string{"", "\n", " \r\n"}[rng.IntN(3)])
		line := sb.String()
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			r := mustDecode(t, a, line, mode)
			with := r.AppendJSON(nil)
			without := a.AppendJSON(nil, r.Root())
			if r.passThrough() {
				passed++
				if string(with) != strings.TrimSpace(line) {
					t.Fatalf("%q passed through as %q", line, with)
				}
			} else if !bytes.Equal(with, without) {
				t.Fatalf("%q: %q, want %q", line, with, without)
			}
			if bytes.ContainsAny(with, "\r\n") {
				t.Fatalf("%q: output %q holds a line break", line, with)
			}
			b := NewArena()
			rw, err1 := b.DecodeJSON(with, Owned)
			ro, err2 := b.DecodeJSON(without, Owned)
			if err1 != nil || err2 != nil {
				t.Fatalf("%q: re-decode: %v, %v", line, err1, err2)
			}
			if !ValueEqual(b, rw.Root(), b, ro.Root()) || !ValueEqual(a, r.Root(), b, rw.Root()) {
				t.Fatalf("%q: pass-through %s decodes differently from %s", line, with, without)
			}
		}
	}
	// The generator makes both kinds of line; make sure both were tested.
	if passed < 1000 || passed > 9000 {
		t.Errorf("%d of 10000 passed through", passed)
	}
}

func TestAllocsPassThrough(t *testing.T) {
	line := []byte(b2JSON)
	decode := func(a *Arena) (*Record, error) { return a.DecodeJSON(line, Referenced) }
	commit := func(_ *Arena, i int, r *Record) {
		r.SetTime(int64(i))
		r.Commit()
	}
	n, out := allocsPer16(decode, commit, (*Record).AppendJSON)
	if n != 0 {
		t.Errorf("decode + commit + pass-through: %v allocs per 16 records, want 0", n)
	}
	if string(out) != b2JSON {
		t.Errorf("not passed through: %s", out)
	}
}
