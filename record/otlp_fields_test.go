package record

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fieldSets are the projections the tests decode with: none, each of the
// expensive keys, a mix, every key but the body, and all.
var fieldSets = []OTLPFields{
	0,
	1 << ViewAttributes,
	1 << ViewBody,
	1<<ViewAttributes | 1<<ViewBody,
	1<<ViewResource | 1<<ViewScope | 1<<ViewTraceID,
	OTLPAllFields &^ (1 << ViewBody),
	OTLPAllFields,
}

// projections are fieldSets and some projections on attributes.
func projections() []OTLPProjection {
	var ps []OTLPProjection
	for _, f := range fieldSets {
		ps = append(ps, OTLPProjection{Fields: f})
	}
	return append(ps,
		OTLPProjection{Attributes: []string{}},
		OTLPProjection{Attributes: []string{"k", "x", "nan", "http.route"}},
		OTLPProjection{Fields: 1 << ViewBody, Attributes: []string{"a", "novalue", "empty"}},
	)
}

// FuzzDecodeOTLPFields: a decode of part of each record refuses what
// DecodeOTLP refuses, with its error, and its records are DecodeOTLP's
// with only the keys asked for. Its seeds are FuzzDecodeOTLP's
// (otlpSeeds and that target's corpus), so they run with every go test.
func FuzzDecodeOTLPFields(f *testing.F) {
	addOTLPSeeds(f)
	f.Fuzz(func(t *testing.T, req []byte) {
		const maxDepth = 32
		full := NewArena()
		full.Limits.MaxDepth = maxDepth
		want, wantErr := full.DecodeOTLP(req, Referenced, nil)
		for _, proj := range projections() {
			keep := proj.Fields
			a := NewArena()
			a.Limits.MaxDepth = maxDepth
			got, err := a.DecodeOTLPProjection(req, Referenced, nil, proj)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("fields %b: error %v, DecodeOTLP's %v", keep, err, wantErr)
			}
			if err != nil {
				if len(got) != 0 || a.nrec != 0 || len(a.nodes) != 0 || len(a.slab) != 0 || len(a.bufs) != 0 {
					t.Fatalf("fields %b: a failed decode left %d records, %d nodes", keep, len(got), len(a.nodes))
				}
				continue
			}
			if len(got) != len(want) {
				t.Fatalf("fields %b: %d records, DecodeOTLP %d", keep, len(got), len(want))
			}
			for i, r := range got {
				w := maps.Clone(want[i].ToGo())
				for _, vf := range rootView {
					if keep&(1<<vf.ID) == 0 {
						delete(w, vf.Name)
					}
				}
				if keep&(1<<ViewAttributes) == 0 && proj.Attributes != nil {
					some := map[string]any{}
					for k, v := range want[i].ToGo()["attributes"].(map[string]any) {
						if slices.Contains(proj.Attributes, k) {
							some[k] = v
						}
					}
					w["attributes"] = some
				}
				if g := r.ToGo(); fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) || r.Time() != want[i].Time() {
					t.Fatalf("fields %b, record %d:\n got %d %#v\nwant %d %#v", keep, i, r.Time(), g, want[i].Time(), w)
				}
				if keys := a.Len(r.Root()); keys != len(w) {
					t.Fatalf("fields %b, record %d: %d keys, want %d", keep, i, keys, len(w))
				}
				if hasWire := r.wire().kind() == Bytes; hasWire != ((r.flags&recProj != 0) || keep == OTLPAllFields && hasWire) {
					t.Fatalf("fields %b, record %d: wire bytes %v, a projection %v", keep, i, hasWire, (r.flags&recProj != 0))
				}
				if want[i].wire().kind() == Bytes && r.wire().kind() != Bytes {
					t.Fatalf("fields %b, record %d: a projection of a clean LogRecord has no bytes", keep, i)
				}
			}
		}
	})
}

// addOTLPSeeds adds FuzzDecodeOTLP's seeds (otlpSeeds and that target's
// corpus) to f, for the targets that decode the same requests.
func addOTLPSeeds(f *testing.F) {
	for _, b := range otlpSeeds(f) {
		f.Add(b)
	}
	for _, b := range corpusOf(f, "FuzzDecodeOTLP") {
		f.Add(b)
	}
}

// corpusOf reads the inputs of a fuzz target's corpus in testdata/fuzz
// (files of one []byte each).
func corpusOf(tb testing.TB, target string) [][]byte {
	dir := filepath.Join("testdata", "fuzz", target)
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		_, rest, _ := strings.Cut(string(b), "\n")
		rest = strings.TrimSpace(rest)
		q, ok := strings.CutPrefix(rest, "[]byte(")
		q, ok2 := strings.CutSuffix(q, ")")
		s, err := strconv.Unquote(q)
		if !ok || !ok2 || err != nil {
			tb.Fatalf("%s: not a []byte input: %v", e.Name(), err)
		}
		out = append(out, []byte(s))
	}
	if len(out) == 0 {
		tb.Fatalf("%s: empty corpus", dir)
	}
	return out
}

func TestOTLPProjectionOf(t *testing.T) {
	k := KeyStep
	for _, tt := range []struct {
		name  string
		paths []Path
		want  OTLPProjection
	}{
		{"none", nil, OTLPProjection{}},
		{"an attribute", []Path{{k("attributes"), k("bench.added")}}, OTLPProjection{Attributes: []string{"bench.added"}}},
		{"attributes whole too", []Path{{k("attributes")}, {k("attributes"), k("x")}}, OTLPProjection{Fields: 1 << ViewAttributes}},
		{"two and the body", []Path{{k("attributes"), k("a")}, {k("attributes"), k("b"), k("c")}, {k("body"), k("msg")}},
			OTLPProjection{Fields: 1 << ViewBody, Attributes: []string{"a", "b"}}},
		{"the whole record", []Path{{k("attributes"), k("a")}, {}}, OTLPProjection{Fields: OTLPAllFields}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := OTLPProjectionOf(tt.paths); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("OTLPProjectionOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOTLPFieldsOf(t *testing.T) {
	p := func(keys ...string) Path {
		var out Path
		for _, k := range keys {
			out = append(out, KeyStep(k))
		}
		return out
	}
	for _, tt := range []struct {
		name  string
		paths []Path
		want  OTLPFields
	}{
		{"none", nil, 0},
		{"whole record", []Path{p("attributes"), {}}, OTLPAllFields},
		{"an index", []Path{{IndexStep(0)}}, OTLPAllFields},
		{"an attribute", []Path{p("attributes", "bench.added")}, 1 << ViewAttributes},
		{"resource attribute and body", []Path{p("body", "msg"), p("resource", "attributes", "k")}, 1<<ViewBody | 1<<ViewResource},
		{"not a key of the view", []Path{p("nope")}, 0},
		{"ids", []Path{p("trace_id"), p("span_id")}, 1<<ViewTraceID | 1<<ViewSpanID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := OTLPFieldsOf(tt.paths); got != tt.want {
				t.Errorf("OTLPFieldsOf = %b, want %b", got, tt.want)
			}
		})
	}
}

// TestDecodeOTLPFieldsErrors: requests that DecodeOTLP refuses in a part
// the projection does not build are refused all the same.
func TestDecodeOTLPFieldsErrors(t *testing.T) {
	deep := pb{}.str(1, "x")
	for range DefaultMaxDepth + 2 {
		deep = pb{}.msg(6, pb{}.bytes(1, kvOf("k", deep)))
	}
	for _, tt := range []struct {
		name string
		req  []byte
		want string // in the error
	}{
		{"attribute key not UTF-8", requestOf(pb{}.bytes(6, kvOf("k\xff", nil))), "KeyValue.key"},
		{"attribute value not UTF-8", requestOf(pb{}.bytes(6, kvOf("k", pb{}.str(1, "\xfe")))), "AnyValue.string_value"},
		{"body kvlist value not UTF-8", requestOf(pb{}.msg(5, pb{}.msg(6, pb{}.bytes(1, kvOf("k", pb{}.str(1, "\xc0")))))), "AnyValue.string_value"},
		{"body too deep", requestOf(pb{}.msg(5, deep)), "levels"},
		{"body wrong wire type", requestOf(pb{}.msg(5, pb{}.uint(1, 3))), "wire type"},
		{"body truncated", requestOf(pb{}.raw(5<<3|wireBytes, 10, 1<<3|wireBytes, 8)), "bytes"},
		{"trace id length", requestOf(pb{}.bytes(9, make([]byte, 15))), "trace_id"},
		{"severity text not UTF-8", requestOf(pb{}.str(3, "\xff")), "severity_text"},
		{"a wanted attribute's value not UTF-8", requestOf(pb{}.bytes(6, kvOf("k", pb{}.str(1, "\xfe")))), "AnyValue.string_value"},
		{"a wanted attribute's value too deep", requestOf(pb{}.bytes(6, kvOf("x", deep))), "levels"},
		{"an attribute's int overflows", requestOf(pb{}.bytes(6, kvOf("i", pb{}.tag(3, wireVarint).raw(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)))), "overflows"},
		{"an attribute's int truncated", requestOf(pb{}.bytes(6, kvOf("i", pb{}.tag(3, wireVarint).raw(0xff, 0xff)))), "varint"},
		{"an attribute's double truncated", requestOf(pb{}.bytes(6, kvOf("d", pb{}.tag(4, wireFixed64).raw(1, 2, 3)))), "fixed64"},
		{"a body entry's key not UTF-8", requestOf(pb{}.msg(5, pb{}.msg(6, pb{}.bytes(1, kvOf("\xff", pb{}.uint(3, 1)))))), "KeyValue.key"},
		{"an attribute after a wanted one", requestOf(pb{}.bytes(6, kvOf("k", nil)).bytes(6, kvOf("z", pb{}.str(1, "\xfe")))), "AnyValue.string_value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, want := NewArena().DecodeOTLP(tt.req, Referenced, nil)
			if want == nil || !strings.Contains(want.Error(), tt.want) {
				t.Fatalf("DecodeOTLP: %v, want an error about %s", want, tt.want)
			}
			for _, proj := range projections() {
				if _, err := NewArena().DecodeOTLPProjection(tt.req, Referenced, nil, proj); fmt.Sprint(err) != want.Error() {
					t.Errorf("projection %+v: %v, want %v", proj, err, want)
				}
			}
		})
	}
}

// TestASCII: ascii and validUTF8 against the plain definitions, a high
// byte at every place of every length up to 40 (the loads of 16, 8 and 4
// bytes, and their overlaps).
func TestASCII(t *testing.T) {
	for n := 0; n <= 40; n++ {
		s := []byte(strings.Repeat("a", n))
		if !ascii(s) || !validUTF8(s) {
			t.Fatalf("%d ASCII bytes: not ASCII", n)
		}
		for i := range n {
			for _, c := range []byte{0x80, 0xc3, 0xff} {
				b := slices.Clone(s)
				b[i] = c
				if ascii(b) {
					t.Fatalf("%d bytes, %#x at %d: ascii", n, c, i)
				}
				if validUTF8(b) != utf8.Valid(b) {
					t.Fatalf("%d bytes, %#x at %d: validUTF8 %v", n, c, i, validUTF8(b))
				}
			}
			if i+2 <= n {
				b := slices.Clone(s)
				b[i], b[i+1] = 0xc3, 0xa9 // é
				if !validUTF8(b) {
					t.Fatalf("%d bytes, é at %d: not valid", n, i)
				}
			}
		}
	}
}
