package record

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// canonJSON decodes a JSON line into a fresh arena and encodes it again:
// the full encoder's spelling of the line's value, key order kept.
func canonJSON(t testing.TB, line []byte) string {
	t.Helper()
	a := NewArena()
	r, err := a.DecodeJSON(line, Owned)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return string(a.AppendJSON(nil, r.Root()))
}

func TestSplicedJSON(t *testing.T) {
	p := MustParsePath
	tests := []struct {
		name, line string
		do         func(a *Arena, r *Record)
		want       string // the exact output
	}{
		{"remove first", `{"a": 1, "b" : "x\/y", "c":2}`, func(a *Arena, r *Record) { r.Remove(p(".a")) },
			`{"b" : "x\/y", "c":2}`},
		{"remove middle", `{"a": 1, "b" : "x\/y", "c":2}`, func(a *Arena, r *Record) { r.Remove(p(".b")) },
			`{"a": 1,"c":2}`},
		{"remove last", `{"a": 1, "b" : "x\/y", "c":2}`, func(a *Arena, r *Record) { r.Remove(p(".c")) },
			`{"a": 1, "b" : "x\/y"}`},
		{"remove all", `{"a": 1}`, func(a *Arena, r *Record) { r.Remove(p(".a")) }, `{}`},
		// Keys an edit adds are written with their separator (flagFramed),
		// left out before the first entry; constants and the line's plain
		// strings with their quotes (flagQuoted).
		{"added first", `{"a": 1}`, func(a *Arena, r *Record) {
			r.Remove(p(".a"))
			r.Set(p(".b"), a.NewConstString("x"))
			r.Set(p(".c"), a.NewConstString(`q"`))
		}, `{"b":"x","c":"q\""}`},
		{"line strings moved", `{"a": "x y","m":"m\/","n":1}`, func(a *Arena, r *Record) {
			v, _ := r.Get(p(".a"))
			r.Set(p(".b"), v)
			v, _ = r.Get(p(".m"))
			r.Set(p(".c"), v)
			r.Set(p(`."k\"ey"`), a.NewConstString(""))
		}, `{"a": "x y","m":"m\/","n":1,"b":"x y","c":"m/","k\"ey":""}`},
		{"set in place", `{"a": 1, "b" : "x\/y", "c":2E0}`, func(a *Arena, r *Record) { r.Set(p(".b"), IntValue(7)) },
			`{"a": 1,"b":7,"c":2E0}`},
		{"append", `{ "a" : 1.50 }`, func(a *Arena, r *Record) { r.Set(p(".z"), a.NewStringFrom("q\"")) },
			`{"a" : 1.50,"z":"q\""}`},
		{"remove and append", `{"t":"x","trace_id":"0e67","host":"h"}`, func(a *Arena, r *Record) {
			r.Remove(p(".trace_id"))
			r.Set(p(".env"), a.NewStringFrom("prod"))
		}, `{"t":"x","host":"h","env":"prod"}`},
		{"nested set", `{"a":"\u00e9","k":{"p": 1,"pod_id":"x","q":[1, 2]},"z":0}`, func(a *Arena, r *Record) {
			r.Set(p(".k.c"), a.NewStringFrom("c"))
			r.Remove(p(".k.pod_id"))
		}, `{"a":"\u00e9","k":{"p": 1,"q":[1, 2],"c":"c"},"z":0}`},
		{"nested in array", `{"a":[{"x": 1,"y":2},{"x":3}]}`, func(a *Arena, r *Record) {
			r.Set(p(".a[1].y"), IntValue(4))
		}, `{"a":[{"x": 1,"y":2},{"x":3,"y":4}]}`},
		{"lift", `{"log":"l\n","k":{"p":"v","m":{ "x" : 1 },"e":{}},"z":0}`, func(a *Arena, r *Record) {
			r.Lift(p(".k"), []byte("k_"))
		}, `{"log":"l\n","z":0,"k_p":"v","k_m":{ "x" : 1 },"k_e":{}}`},
		{"rename", `{"a": 1,"msg" : "m\/","b":2}`, func(a *Arena, r *Record) {
			r.rename(p(".msg"), p(".message"))
		}, `{"a": 1,"b":2,"message":"m\/"}`},
		{"renamed twice", `{"a": 1,"msg" : "m\/","b":2}`, func(a *Arena, r *Record) {
			r.rename(p(".msg"), p(".message"))
			r.rename(p(".a"), p(".z"))
		}, `{"b":2,"message":"m\/","z":1}`},
		{"moved map", `{"a":{ "x" : [1] },"b":1}`, func(a *Arena, r *Record) {
			v, _ := r.Get(p(".a"))
			r.Set(p(".c"), v)
		}, `{"a":{ "x" : [1] },"b":1,"c":{ "x" : [1] }}`},
		{"root replaced by a nested map", `{"a":{ "x" : [1] },"b":1}`, func(a *Arena, r *Record) {
			v, _ := r.Get(p(".a"))
			r.Set(p("."), v)
		}, `{ "x" : [1] }`},
		{"same value set", `{"a": 1 ,"b":2}`, func(a *Arena, r *Record) { r.Set(p(".a"), IntValue(1)) },
			`{"a": 1 ,"b":2}`},
		{"edit, commit, edit", `{"a": 1 ,"b":{"c": 2},"d":3}`, func(a *Arena, r *Record) {
			r.Set(p(".b.e"), IntValue(5))
			r.Commit()
			r.Remove(p(".d"))
		}, `{"a": 1,"b":{"c": 2,"e":5}}`},
		{"escaped key kept", `{"\u0061": 1,"b":2}`, func(a *Arena, r *Record) { r.Remove(p(".b")) },
			`{"\u0061": 1}`},
		// Keys with escapes do not tell where they lay: their maps are scanned.
		{"escaped keys around an edit", `{"x":0, "\u0062" : [1,{"c":2}] ,"m":"v", "\u0064":{"e": 3}}`,
			func(a *Arena, r *Record) { r.Remove(p(".m")); r.Set(p(".d.f"), IntValue(4)) },
			`{"x":0, "\u0062" : [1,{"c":2}],"d":{"e": 3,"f":4}}`},
		{"escaped last key", `{"a":{"p":1, "\u0071":{"r":[]}},"b":2}`, func(a *Arena, r *Record) {
			r.Set(p(".a.s"), IntValue(5))
		}, `{"a":{"p":1, "\u0071":{"r":[]},"s":5},"b":2}`},
		{"moved map with an escaped first key", `{"a":{"\u0071": 1,"r":2},"b":{"s" :3 }}`, func(a *Arena, r *Record) {
			v, _ := r.Get(p(".a"))
			r.Set(p(".z"), v)
			w, _ := r.Get(p(".b"))
			r.Set(p(".y"), w)
		}, `{"a":{"\u0071": 1,"r":2},"b":{"s" :3 },"z":{"q":1,"r":2},"y":{"s" :3 }}`},
		{"edited map in an array", `{"a":[ {"x": 1 , "y":[2]} , 3 ]}`, func(a *Arena, r *Record) {
			r.Remove(p(".a[0].x"))
		}, `{"a":[{"y":[2]},3]}`},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			r := mustDecode(t, a, tt.line, mode)
			tt.do(a, r)
			got := r.AppendJSON(nil)
			if string(got) != tt.want {
				t.Errorf("%s, mode %d: got %s, want %s", tt.name, mode, got, tt.want)
			}
			if g, w := canonJSON(t, got), string(a.AppendJSON(nil, r.Root())); g != w {
				t.Errorf("%s, mode %d: %s is %s, the full encode %s", tt.name, mode, got, g, w)
			}
		}
	}
}

// TestSplicedJSONProperty: random JSON records, random edit sequences
// (set, set if absent, remove, rename, lift, with commits and discards):
// after each step, the spliced output is the full encode's value with its
// key order, and holds no line break.
func TestSplicedJSONProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	rounds := 3000
	if testing.Short() {
		rounds = 500
	}
	keys := []string{"a", "b", "level", "msg", "k\n", "é", "new", "x"}
	var sb strings.Builder
	spliced, journaled := 0, 0
	for round := 0; round < rounds; round++ {
		sb.Reset()
		sb.WriteString([]string{"", " ", "\t "}[rng.IntN(3)])
		randomJSON(rng, &sb, 4, true)
		line := sb.String()
		for _, mode := range []Mode{Referenced, Owned} {
			a := NewArena()
			r := mustDecode(t, a, line, mode)
			var log []string
			for step := 0; step < 8; step++ {
				log = append(log, randomEdit(rng, a, r, keys))
				checkJournal(t, r, func() string { return fmt.Sprintf("%q, mode %d, %s", line, mode, strings.Join(log, "; ")) })
				if r.ext != 0 && r.ts().jr.ok && r.root != r.decoded {
					journaled++
				}
				got := r.AppendJSON(nil)
				full := a.AppendJSON(nil, r.Root())
				if bytes.ContainsAny(got, "\r\n") {
					t.Fatalf("%q, mode %d, %s: output %q holds a line break", line, mode, strings.Join(log, "; "), got)
				}
				if g, w := canonJSON(t, got), canonJSON(t, full); g != w {
					t.Fatalf("%q, mode %d, %s:\nspliced %s\n  canon %s\n   full %s", line, mode, strings.Join(log, "; "), got, g, w)
				}
				if lo, hi := r.decodedNodes(); hi > lo && r.Edited() {
					spliced++
				}
			}
		}
	}
	if spliced < rounds || journaled < rounds/2 {
		t.Errorf("only %d spliced outputs, %d by the root journal", spliced, journaled)
	}
}

// randomEdit makes one random edit of r (set, set if absent, remove,
// rename, lift, commit or discard), mostly of a path r has, and says what
// it did.
func randomEdit(rng *rand.Rand, a *Arena, r *Record, keys []string) string {
	// A path the record has, most of the time, maybe one step
	// longer.
	paths := recordPaths(a, r.Root(), nil, 3, nil)
	var path Path
	if len(paths) > 0 && rng.IntN(4) != 0 {
		path = append(Path(nil), paths[rng.IntN(len(paths))]...)
	}
	if len(path) == 0 || rng.IntN(3) == 0 {
		path = append(path, KeyStep(keys[rng.IntN(len(keys))]))
	}
	if len(path) == 1 && !path[0].isIndex && rng.IntN(2) == 0 {
		// One root key, as the VM's steps are: with the hints that
		// every use of the key keeps (where it was, its copy).
		path = Path{hintedStep(path[0].key)}
	}
	var vals []Value
	if len(paths) > 0 {
		if v, ok := r.Get(paths[rng.IntN(len(paths))]); ok {
			vals = append(vals, v)
		}
	}
	vals = append(vals, IntValue(int64(rng.IntN(3))), a.NewStringFrom("s/\"é"), NullValue(), FloatValue(0.5))
	val := vals[rng.IntN(len(vals))]
	switch op := rng.IntN(10); op {
	case 9:
		// A rename to a key with its memo, as the VM's paths have, which
		// MoveTop needs to move a root key in one step.
		to := append(Path(nil), path[:len(path)-1]...)
		to = append(to, hintedStep(keys[rng.IntN(len(keys))]))
		r.rename(path, to)
		return fmt.Sprintf("rename %v to %v (hinted)", path, to)
	case 0, 1:
		r.Set(path, val)
		return fmt.Sprintf("set %v", path)
	case 2:
		r.SetIfAbsent(path, val)
		return fmt.Sprintf("set if absent %v", path)
	case 3, 4:
		r.Remove(path)
		return fmt.Sprintf("remove %v", path)
	case 5:
		to := append(Path(nil), path[:len(path)-1]...)
		to = append(to, KeyStep(keys[rng.IntN(len(keys))]))
		r.rename(path, to)
		return fmt.Sprintf("rename %v to %v", path, to)
	case 6:
		r.Lift(path, []byte([]string{"", "p_"}[rng.IntN(2)]))
		return fmt.Sprintf("lift %v", path)
	case 7:
		r.Commit()
		return "commit"
	case 8:
		r.Discard()
		return "discard"
	}
	return ""
}

// hinted holds the key steps with hints that randomEdit uses, kept from
// edit to edit and record to record as a VM's are.
var hinted = map[string]Step{}

func hintedStep(key string) Step {
	s, ok := hinted[key]
	if !ok {
		s = Path{KeyStep(key)}.WithHints()[0]
		hinted[key] = s
	}
	return s
}

// recordPaths returns the paths of v's values, down to depth levels.
func recordPaths(a *Arena, v Value, prefix Path, depth int, out []Path) []Path {
	if depth == 0 {
		return out
	}
	for it := a.Iter(v); it.Next(); {
		var s Step
		if v.Kind() == Map {
			s = KeyStep(string(a.Bytes(it.Key())))
		} else {
			s = IndexStep(it.Index())
		}
		p := append(append(Path(nil), prefix...), s)
		out = append(out, p)
		out = recordPaths(a, it.Value(), p, depth-1, out)
	}
	return out
}

// TestAllocsSpliced: decoding, editing (root and nested) and the spliced
// output allocate nothing in steady state.
func TestAllocsSpliced(t *testing.T) {
	line := []byte(b2JSON)
	decode := func(a *Arena) (*Record, error) { return a.DecodeJSON(line, Referenced) }
	trace, env, proto, port := NewPath("trace_id"), NewPath("env"), NewPath("http", "proto"), NewPath("http", "port")
	edit := func(a *Arena, i int, r *Record) {
		r.Remove(trace)
		r.Set(env, a.NewStringFrom("prod"))
		r.Set(proto, IntValue(int64(i)))
		r.Remove(port)
	}
	n, out := allocsPer16(decode, edit, (*Record).AppendJSON)
	if n != 0 {
		t.Errorf("decode + edits + spliced output: %v allocs per 16 records, want 0", n)
	}
	want := strings.Replace(b2JSON, `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736",`, "", 1)
	want = strings.Replace(want, `"proto":"HTTP/1.1"`, `"proto":15`, 1)
	want = strings.Replace(want, `,"port":443}}`, `}`, 1) + `,"env":"prod"}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestSameEntries(t *testing.T) {
	entries := func(n int) []Value {
		v := make([]Value, 2*n)
		for i := range v {
			v[i] = IntValue(int64(i))
		}
		return v
	}
	for _, n := range []int{0, 1, 3, 4, 5, 8, 9, 13} {
		for at := 0; at <= n; at++ { // the first entry that differs (n: none)
			for word := 0; word < 4; word++ { // the word of it that differs
				x, y := entries(n), entries(n+1)
				if at < n {
					switch word {
					case 0:
						y[2*at].h ^= flagPlain
					case 1:
						y[2*at].u++
					case 2:
						y[2*at+1].ref++
					case 3:
						y[2*at+1].u++
					}
				}
				if got := sameEntries(x, y); got != at {
					t.Errorf("n %d, entry %d word %d differs: %d", n, at, word, got)
				}
				if got := sameEntries(y, x); got != at {
					t.Errorf("n %d, entry %d word %d differs (swapped): %d", n, at, word, got)
				}
			}
		}
	}
}
