package record

import (
	"bytes"
	"fmt"
	"testing"
)

// wireEdit is one edit of a wireScript: a set (v not nil), a remove, or a
// time set (path nil).
type wireEdit struct {
	path Path
	v    func(a *Arena) Value
}

func str(s string) func(a *Arena) Value {
	return func(a *Arena) Value { return a.NewStringFrom(s) }
}

func attr(k string) Path { return Path{KeyStep("attributes"), KeyStep(k)} }

// wireScripts are edit sequences a projection on the LogRecord's bytes
// must end the same as the whole decode: none, attributes added (the
// bytes and more), an attribute that may exist set, removed, removed and
// set again, several at once, the resource, the time, the attributes
// whole, and other keys of the view.
var wireScripts = map[string][]wireEdit{
	"none":           nil,
	"add":            {{attr("bench.added"), str("yes")}},
	"set existing":   {{attr("k"), str("new")}},
	"remove":         {{attr("k"), nil}},
	"remove and set": {{attr("k"), nil}, {attr("k"), func(*Arena) Value { return IntValue(1) }}},
	"several": {{attr("x"), str("a")}, {attr("nan"), nil}, {attr("z"), func(*Arena) Value { return BoolValue(true) }},
		{attr("bench.added"), str("yes")}},
	"resource": {{Path{KeyStep("resource"), KeyStep("attributes"), KeyStep("host")}, str("h")}, {attr("bench.added"), str("yes")}},
	"time":     {{nil, nil}, {attr("bench.added"), str("yes")}},
	"attributes whole": {{NewPath("attributes"), func(a *Arena) Value {
		b := a.BeginMap(1)
		b.Add(a.NewStringFrom("only"), IntValue(1))
		return b.Finish()
	}}},
	"body":     {{NewPath("body"), str("b")}, {attr("k"), nil}},
	"severity": {{NewPath("severity_text"), str("WARN")}},
}

func (e wireEdit) apply(r *Record) {
	switch {
	case e.path == nil:
		r.SetTime(r.Time() + 1)
	case e.v == nil:
		r.Remove(e.path)
	default:
		_ = r.Set(e.path, e.v(r.Arena()))
	}
}

// FuzzOTLPWireProjection: records decoded as a projection on their bytes
// (OTLPProjection.Wire, with the keys of the edits) and edited encode, in
// protobuf and in OTLP/JSON, to the same bytes as the whole records with
// the same edits. Its seeds are FuzzDecodeOTLP's.
func FuzzOTLPWireProjection(f *testing.F) {
	addOTLPSeeds(f)
	f.Fuzz(func(t *testing.T, req []byte) {
		for name, script := range wireScripts {
			var paths []Path
			for _, e := range script {
				if e.path != nil {
					paths = append(paths, e.path)
				}
			}
			proj := OTLPProjectionOf(paths)
			proj.Wire = true
			var out [2][2][]byte
			for i, decode := range []func(a *Arena) ([]*Record, error){
				func(a *Arena) ([]*Record, error) { return a.DecodeOTLP(req, Referenced, nil) },
				func(a *Arena) ([]*Record, error) { return a.DecodeOTLPProjection(req, Referenced, nil, proj) },
			} {
				a := NewArena()
				a.Limits.MaxDepth = 32
				recs, err := decode(a)
				if err != nil {
					return // FuzzDecodeOTLPFields holds the errors equal
				}
				for _, r := range recs {
					for _, e := range script {
						e.apply(r)
					}
				}
				var enc OTLPEncoder
				out[i][0] = enc.AppendProto(nil, recs)
				out[i][1] = enc.AppendJSON(nil, recs)
			}
			for j, what := range []string{"protobuf", "JSON"} {
				if j == 0 && !bytes.Equal(out[0][j], out[1][j]) {
					// The whole decode's edited records are written from
					// their bytes field by field (appendWire), the
					// projection's from their views: the same messages.
					if x, y := otlpAsJSON(t, out[1][j]), otlpAsJSON(t, out[0][j]); x != y {
						t.Fatalf("%s, protobuf: the projection's output decodes as\n%s\nthe whole's as\n%s", name, x, y)
					}
					continue
				}
				if !bytes.Equal(out[0][j], out[1][j]) {
					x, y := out[1][j], out[0][j]
					at := 0
					for at < min(len(x), len(y)) && x[at] == y[at] {
						at++
					}
					t.Fatalf("%s, %s: the projection's %d bytes and the whole's %d differ at %d:\nprojection …%q\n     whole …%q",
						name, what, len(x), len(y), at, x[max(0, at-20):min(len(x), at+60)], y[max(0, at-20):min(len(y), at+60)])
				}
			}
		}
	})
}

// otlpAsJSON decodes an OTLP/protobuf request and writes it as OTLP/JSON
// from its views: what the request says, whatever the order of its fields.
func otlpAsJSON(t *testing.T, req []byte) string {
	t.Helper()
	a := NewArena()
	a.Limits.MaxDepth = 32
	recs, err := a.DecodeOTLP(req, Referenced, nil)
	if err != nil {
		t.Fatalf("the output does not decode: %v", err)
	}
	enc := OTLPEncoder{FromViews: true}
	return string(enc.AppendJSON(nil, recs))
}

// TestOTLPWireProjectionCopies: an unedited projection, and one with an
// attribute added, are written as their bytes (no decode whole), and a
// LogRecord with a key twice among the attributes not built is built
// whole at decode.
func TestOTLPWireProjectionCopies(t *testing.T) {
	clean := pb{}.fix64(1, 5).bytes(6, kvOf("p", pb{}.str(1, "1"))).bytes(6, kvOf("q", pb{}.str(1, "2")))
	twice := pb{}.fix64(1, 5).bytes(6, kvOf("p", pb{}.str(1, "1"))).bytes(6, kvOf("p", pb{}.str(1, "2")))
	proj := OTLPProjection{Attributes: []string{"bench.added"}, Wire: true}
	for _, tc := range []struct {
		name       string
		lr         pb
		proj, wire bool
	}{
		{"clean", clean, true, true},
		{"a key twice", twice, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewArena()
			recs, err := a.DecodeOTLPProjection(requestOf(tc.lr), Referenced, nil, proj)
			if err != nil || len(recs) != 1 {
				t.Fatalf("decode: %v, %d records", err, len(recs))
			}
			r := recs[0]
			if (r.flags&recProj != 0) != tc.proj || (r.wire().kind() == Bytes) != tc.wire {
				t.Fatalf("proj %v, wire %v; want %v, %v", (r.flags&recProj != 0), r.wire().kind() == Bytes, tc.proj, tc.wire)
			}
			if !tc.proj {
				if got := fmt.Sprint(r.ToGo()["attributes"]); got != "map[p:2]" {
					t.Fatalf("attributes %s, want the whole decode's map[p:2]", got)
				}
				return
			}
			if _, ok := appendWire(nil, r, &OTLPEncoder{}); !ok {
				t.Fatal("an unedited projection is not written as its bytes")
			}
			_ = r.Set(attr("bench.added"), a.NewStringFrom("yes"))
			if _, ok := appendWire(nil, r, &OTLPEncoder{}); !ok {
				t.Fatal("a projection with an attribute added is not written as its bytes")
			}
		})
	}
}
