package record

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// A differential test of the edits against the ordered model of
// omodel_test.go, over records decoded from JSON and msgpack, checking the
// root's key filter after every step.

// checkAgainst compares r with m: the output, every path of m, and the
// root's key filter.
func checkAgainst(t *testing.T, r *Record, m *omodel, where func() string) {
	t.Helper()
	out := r.AppendJSON(nil)
	got, err := oparse(out, true)
	if err != nil {
		t.Fatalf("%s: output %s: %v", where(), out, err)
	}
	if g, w := ocanon(got), ocanon(m.root); g != w {
		t.Fatalf("%s:\n got %s\nwant %s", where(), g, w)
	}
	for _, p := range opaths(m.root, nil, 4, nil) {
		want, _ := m.oget(p)
		v, ok := r.Get(p)
		if !ok {
			t.Fatalf("%s: Get(%v) missing, model has %s", where(), p, ocanon(want))
		}
		if g, w := valueCanon(t, r.a, v), ocanon(want); g != w {
			t.Fatalf("%s: Get(%v) = %s, want %s", where(), p, g, w)
		}
	}
	if n := r.a.Len(r.Root()); n != len(m.root.keys) {
		t.Fatalf("%s: root has %d keys, model %d", where(), n, len(m.root.keys))
	}
	checkKeyFilter(t, r, where)
}

// checkKeyFilter checks that the root's key filter, while it is in force,
// holds the signature of every key of the root.
func checkKeyFilter(t *testing.T, r *Record, where func() string) {
	t.Helper()
	if r.ext == 0 || r.ts().keysAt != r.root.off()+1 {
		return
	}
	for i := 0; i < int(r.root.n()); i++ {
		k, _ := r.a.entry(r.root, i)
		raw := r.a.raw(k)
		if !r.ts().keys.has(keySig(raw)) {
			t.Fatalf("%s: root key %q (sig %#x) missing from the key filter", where(), raw, keySig(raw))
		}
	}
}

var diffInputs = []struct {
	name, json string
	msgpack    bool // decode the model's msgpack instead of the line
}{
	{"flat", `{"a":1,"b":"s","c":null,"level":"info","env":"prod"}`, false},
	{"nested", `{"a":{"b":1,"c":{"a":"x"}},"arr":[1,{"b":2},null,[3]],"c":"s","d":null,"e":{"a":{"b":{"c":2.5}}}}`, false},
	{"empty", `{}`, false},
	{"escaped", `{"a\u0062":1,"c":{"d\u0065":[1,{"x":true}]},"arr":[{"a":1}]}`, false},
	{"escapedLast", `{"a":[{"b":1}],"x\u0079z":{"q":2}}`, false},
	{"dupKeys", `{"a":1,"b":{"c":2},"a":{"x":[1,2]}}`, false},
	{"spaced", ` { "a" : [ 1 , 2 ] , "field_1" : { "ab" : null } } `, false},
	{"msgpack", `{"a":{"b":[1,{"c":2}]},"level":"warn","arr":[{"x":1},2.5],"n":null}`, true},
	{"msgpackEmpty", `{}`, true},
}

var diffKeys = []string{"a", "b", "c", "ab", "de", "x", "arr", "level", "env", "field_1", "zz", "q"}

func TestEditsAgainstOrderedModel(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	values := []string{`{"m":1,"n":[1,{"o":2}]}`, `[{"x":1},2]`, `{}`, `[]`, `"str"`, `7`}
	for ii, in := range diffInputs {
		for _, mode := range []Mode{Referenced, Owned} {
			t.Run(fmt.Sprintf("%s/%d", in.name, mode), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(ii), uint64(mode)+7))
				orig := mustOparse(t, in.json).(*omap)
				a := NewArena()
				for round := range rounds {
					a.Reset()
					var r *Record
					if in.msgpack {
						var err error
						if r, _, err = a.DecodeMsgpack(omsgpack(orig), mode); err != nil {
							t.Fatal(err)
						}
					} else {
						r = mustDecode(t, a, in.json, mode)
					}
					m := &omodel{oclone(orig).(*omap)}
					committed := oclone(orig).(*omap)
					everCommitted := false
					first := r.AppendJSON(nil)
					var log []string
					where := func() string {
						return fmt.Sprintf("round %d (input %s):\n  %s", round, in.json, strings.Join(log, "\n  "))
					}
					randStep := func() Step {
						if rng.IntN(4) == 0 {
							return IndexStep(rng.IntN(5) - 2)
						}
						return KeyStep(diffKeys[rng.IntN(len(diffKeys))])
					}
					randPath := func() Path {
						if rng.IntN(2) == 0 {
							// Start from a path the model has, so that
							// edits reach existing maps and arrays.
							ps := opaths(m.root, nil, 3, nil)
							p := ps[rng.IntN(len(ps))]
							if len(p) > 0 && rng.IntN(3) == 0 {
								p = p[:len(p)-1]
							}
							if len(p) < 3 && (len(p) == 0 || rng.IntN(2) == 0) {
								p = append(p, randStep())
							}
							return p
						}
						p := Path{KeyStep(diffKeys[rng.IntN(len(diffKeys))])}
						for n := rng.IntN(3); n > 0; n-- {
							p = append(p, randStep())
						}
						return p
					}
					randKeyPath := func() Path { // ends in a key
						p := randPath()
						if p[len(p)-1].isIndex {
							p[len(p)-1] = KeyStep(diffKeys[rng.IntN(len(diffKeys))])
						}
						return p
					}
					randValue := func() (Value, any) {
						switch rng.IntN(6) {
						case 0:
							n := rng.Int64N(100)
							return IntValue(n), scalar(strconv.FormatInt(n, 10))
						case 1:
							return a.NewStringFrom("v"), scalar(`"v"`)
						case 2:
							return NullValue(), onull
						case 3:
							s := values[rng.IntN(len(values))]
							v, err := a.DecodeJSONValue([]byte(s))
							if err != nil {
								t.Fatal(err)
							}
							return v, mustOparse(t, s)
						case 4:
							return BoolValue(true), scalar("true")
						}
						// A copy of a part of the record, maybe edited
						// (writable) already.
						ps := opaths(m.root, nil, 3, nil)
						p := ps[rng.IntN(len(ps))]
						v, _ := r.Get(p)
						mv, _ := m.oget(p)
						return v, mv
					}
					for range 40 {
						var desc string
						var gotErr, wantErr error
						switch op := rng.IntN(20); {
						case op < 6:
							p := randPath()
							v, mv := randValue()
							desc = fmt.Sprintf("set %v = %s", p, ocanon(mv))
							wantErr = m.oset(p, mv)
							gotErr = r.Set(p, v)
						case op < 7:
							p := randPath()
							desc = fmt.Sprintf("set %v = absent", p)
							m.otake(p)
							gotErr = r.Set(p, Value{})
						case op < 9:
							p := randPath()
							v, mv := randValue()
							desc = fmt.Sprintf("set %v ?= %s", p, ocanon(mv))
							want := false
							if cur, ok := m.oget(p); !ok || cur == onull {
								wantErr = m.oset(p, mv)
								want = wantErr == nil
							}
							var did bool
							did, gotErr = r.SetIfAbsent(p, v)
							if did != want {
								t.Fatalf("%s\n%s: SetIfAbsent reported %v, want %v", where(), desc, did, want)
							}
						case op < 12:
							p := randPath()
							desc = fmt.Sprintf("take %v", p)
							mv, want := m.otake(p)
							v, ok := r.Take(p)
							if ok != want {
								t.Fatalf("%s\n%s: Take reported %v, want %v", where(), desc, ok, want)
							}
							if ok && valueCanon(t, a, v) != ocanon(mv) {
								t.Fatalf("%s\n%s: Take returned %s, want %s", where(), desc, valueCanon(t, a, v), ocanon(mv))
							}
						case op < 15:
							from, to := randKeyPath(), randKeyPath()
							if rng.IntN(2) == 0 && len(from) > 0 { // same map
								to = append(append(Path(nil), from[:len(from)-1]...), KeyStep(diffKeys[rng.IntN(len(diffKeys))]))
							}
							desc = fmt.Sprintf("rename %v to %v", from, to)
							wantErr = m.orename(from, to)
							gotErr = r.rename(from, to)
						case op < 17:
							p := randKeyPath()
							prefix := []string{"", "p_", "a"}[rng.IntN(3)]
							desc = fmt.Sprintf("lift %v prefix %q", p, prefix)
							wantErr = m.olift(p, prefix)
							gotErr = r.Lift(p, []byte(prefix))
						case op < 18:
							desc = "discard"
							r.Discard()
							m.root = oclone(committed).(*omap)
						case op < 19:
							desc = "commit"
							r.Commit()
							committed = oclone(m.root).(*omap)
							everCommitted = true
						default:
							switch rng.IntN(8) {
							case 0:
								desc = "take ."
								v, _ := r.Take(nil)
								mv, _ := m.otake(nil)
								if valueCanon(t, a, v) != ocanon(mv) {
									t.Fatalf("%s\n%s: got %s", where(), desc, valueCanon(t, a, v))
								}
							case 1:
								desc = "set . = {...}"
								v := mustValue(t, a, `{"b":{"c":[1]},"a":2}`)
								wantErr = m.oset(nil, mustOparse(t, `{"b":{"c":[1]},"a":2}`))
								gotErr = r.Set(nil, v)
							case 2:
								desc = "set . = 1"
								wantErr = m.oset(nil, scalar("1"))
								gotErr = r.Set(nil, IntValue(1))
							default:
								desc = "lift ."
								wantErr = m.olift(nil, "")
								gotErr = r.Lift(nil, nil)
							}
						}
						log = append(log, desc)
						if !errors.Is(gotErr, wantErr) || (gotErr == nil) != (wantErr == nil) {
							t.Fatalf("%s\nerror %v, want %v", where(), gotErr, wantErr)
						}
						checkAgainst(t, r, m, where)
						if desc == "discard" && !everCommitted {
							if out := r.AppendJSON(nil); !bytes.Equal(out, first) {
								t.Fatalf("%s\nafter discard: %s, want %s", where(), out, first)
							}
						}
					}
				}
			})
		}
	}
}

func TestEditEdgeCases(t *testing.T) {
	type op = editOp
	set := func(p, js string) op {
		return func(r *Record) error {
			v, err := r.a.DecodeJSONValue([]byte(js))
			if err != nil {
				return err
			}
			var path Path
			if p != "." {
				path = MustParsePath(p)
			}
			return r.Set(path, v)
		}
	}
	take := func(p string) op {
		return func(r *Record) error {
			if p == "." {
				r.Take(nil)
			} else {
				r.Take(MustParsePath(p))
			}
			return nil
		}
	}
	rename, lift := renameOp, liftOp
	ifAbsent := func(p, js string) op {
		return func(r *Record) error {
			v, err := r.a.DecodeJSONValue([]byte(js))
			if err != nil {
				return err
			}
			_, err = r.SetIfAbsent(MustParsePath(p), v)
			return err
		}
	}
	fails := func(o op) op { // o must fail (and, by the wanted output, change nothing)
		return func(r *Record) error {
			if o(r) == nil {
				return errors.New("no error")
			}
			return nil
		}
	}
	discard := func(r *Record) error { r.Discard(); return nil }
	commit := func(r *Record) error { r.Commit(); return nil }
	tests := []struct {
		name, in string
		ops      []op
		want     string
	}{
		{"empty root set", `{}`, []op{set(".a", "1"), set(".b.c", "2"), set(".a", "3")}, `{"a":3,"b":{"c":2}}`},
		{"empty root ifAbsent", `{}`, []op{ifAbsent(".a", "1"), ifAbsent(".a", "2"), fails(ifAbsent(".b[0]", "1")), fails(set(".a.b", "1"))}, `{"a":1}`},
		{"empty root discard", `{}`, []op{set(".a", "1"), discard, set(".b", "2"), set(".a", "3")}, `{"b":2,"a":3}`},
		{"replaced root", `{"a":1,"b":2}`, []op{set(".", `{"b":{"x":1},"c":3}`), set(".c", "4"), set(".a", "5"), set(".b.y", "6")}, `{"b":{"x":1,"y":6},"c":4,"a":5}`},
		{"replaced root then discard", `{"a":1}`, []op{set(".", `{"z":1}`), discard, set(".a", "2"), set(".z", "3")}, `{"a":2,"z":3}`},
		{"take root", `{"a":1,"b":{"c":2}}`, []op{take("."), set(".b", "1"), set(".a", "2")}, `{"b":1,"a":2}`},
		{"take root then discard", `{"a":1,"b":{"c":2}}`, []op{take("."), discard, set(".b.d", "1"), set(".a", "2")}, `{"a":2,"b":{"c":2,"d":1}}`},
		{"take first key then set it", `{"a":1,"b":2,"c":3}`, []op{take(".a"), set(".a", "4"), take(".c"), set(".c", "5")}, `{"b":2,"a":4,"c":5}`},
		{"take all keys", `{"a":1,"b":2}`, []op{take(".b"), take(".a"), take(".a"), set(".b", "3")}, `{"b":3}`},
		{"lift into root", `{"a":1,"k":{"a":2,"z":3}}`, []op{lift(".k", "")}, `{"a":2,"z":3}`},
		{"lift into root prefix", `{"a":1,"k":{"a":2,"z":3}}`, []op{lift(".k", "k_"), set(".k_z", "9")}, `{"a":1,"k_a":2,"k_z":9}`},
		{"lift own name", `{"k":{"k":1,"j":2}}`, []op{lift(".k", "")}, `{"k":1,"j":2}`},
		{"lift into array map", `{"a":[{"k":{"x":1},"y":2}]}`, []op{lift(".a[-1].k", "p")}, `{"a":[{"y":2,"px":1}]}`},
		{"rename root to free name", `{"a":1,"b":2,"c":3}`, []op{rename(".b", ".z"), set(".z", "4"), set(".b", "5")}, `{"a":1,"c":3,"z":4,"b":5}`},
		{"rename root to taken name", `{"a":1,"b":2,"c":3}`, []op{rename(".a", ".c"), set(".a", "4")}, `{"b":2,"c":1,"a":4}`},
		{"rename root into nested", `{"a":1,"b":{"x":1}}`, []op{rename(".a", ".b.a"), rename(".b", ".c.d")}, `{"c":{"d":{"x":1,"a":1}}}`},
		{"rename nested to root", `{"a":{"b":{"c":1}},"d":2}`, []op{rename(".a.b", ".e"), set(".e.f", "3")}, `{"a":{},"d":2,"e":{"c":1,"f":3}}`},
		{"rename through array", `{"a":[{"x":1,"y":2}]}`, []op{rename(".a[0].x", ".a[0].z")}, `{"a":[{"y":2,"z":1}]}`},
		{"discard after edits then edits", `{"a":1,"b":{"c":2}}`, []op{set(".b.d", "3"), take(".a"), discard, set(".e", "4"), take(".b.c")}, `{"a":1,"b":{},"e":4}`},
		{"commit edits discard", `{"a":1,"b":{"c":2}}`, []op{set(".b.d", "3"), commit, set(".b.e", "4"), take(".a"), rename(".b", ".f"), discard, set(".g", "5")}, `{"a":1,"b":{"c":2,"d":3},"g":5}`},
		{"commit take discard", `{"a":1,"b":2}`, []op{take(".a"), commit, take(".b"), discard, set(".a", "1")}, `{"b":2,"a":1}`},
		{"negative index", `{"arr":[1,{"b":2},3]}`, []op{set(".arr[-2].c", "4"), take(".arr[-1]"), set(".arr[-1].b", "5")}, `{"arr":[1,{"b":5,"c":4}]}`},
		{"null element", `{"arr":[null]}`, []op{set(".arr[0].x.y", "1")}, `{"arr":[{"x":{"y":1}}]}`},
	}
	for _, tc := range tests {
		for _, src := range []string{"json", "owned", "msgpack"} {
			a := NewArena()
			var r *Record
			switch src {
			case "json":
				r = mustDecode(t, a, tc.in, Referenced)
			case "owned":
				r = mustDecode(t, a, tc.in, Owned)
			case "msgpack":
				var err error
				if r, _, err = a.DecodeMsgpack(omsgpack(mustOparse(t, tc.in)), Referenced); err != nil {
					t.Fatal(err)
				}
			}
			for i, o := range tc.ops {
				if err := o(r); err != nil {
					t.Fatalf("%s (%s): op %d: %v", tc.name, src, i, err)
				}
				checkKeyFilter(t, r, func() string { return tc.name })
			}
			got, err := oparse(r.AppendJSON(nil), true)
			if err != nil {
				t.Fatalf("%s (%s): %s: %v", tc.name, src, r.AppendJSON(nil), err)
			}
			if g := ocanon(got); g != ocanon(mustOparse(t, tc.want)) {
				t.Errorf("%s (%s): got %s, want %s", tc.name, src, g, tc.want)
			}
		}
	}
}
