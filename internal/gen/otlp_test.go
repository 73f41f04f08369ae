package gen

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
	"github.com/policyrun/policyrun/record"
)

func TestOTLPDeterministic(t *testing.T) {
	a, b := OTLPRequests(500, 7), OTLPRequests(500, 7)
	if len(a) != 5 {
		t.Fatalf("%d requests for 500 records, want 5", len(a))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("same seed, request %d differs", i)
		}
	}
	if c := OTLPRequests(500, 8); bytes.Equal(a[0], c[0]) {
		t.Fatal("different seeds, same output")
	}
	// A prefix of a longer run is the shorter run; the records do not
	// depend on how many are asked for at a time.
	long := OTLPRequests(750, 7)
	for i := range a {
		if !bytes.Equal(a[i], long[i]) {
			t.Fatalf("request %d depends on the count", i)
		}
	}
	g := NewOTLP(7)
	arena := record.NewArena()
	var recs []*record.Record
	for _, n := range []int{1, 30, 69} {
		recs = g.Records(arena, n, recs)
	}
	var e record.OTLPEncoder
	if !bytes.Equal(e.AppendProto(nil, recs), a[0]) {
		t.Fatal("records asked for 1, 30 and 69 at a time differ")
	}
}

// TestOTLPShape checks the B5 shape: a request of OTLPBatch records of one
// resource (5 attributes), 10 attributes and a kvlist body each, valid
// views.
func TestOTLPShape(t *testing.T) {
	a := record.NewArena()
	recs := OTLPRecords(a, 2000, 1)
	if len(recs) != 2000 {
		t.Fatalf("%d records", len(recs))
	}
	traced := 0
	for i, r := range recs {
		if err := r.CheckOTLP(); err != nil || !r.IsOTLP() || r.Edited() {
			t.Fatalf("record %d: %v", i, err)
		}
		v := r.ToGo()
		body, ok := v["body"].(map[string]any)
		if !ok || len(body) != 5 {
			t.Fatalf("record %d: body %v", i, v["body"])
		}
		if n := len(v["attributes"].(map[string]any)); n != 10 {
			t.Fatalf("record %d: %d attributes", i, n)
		}
		res := v["resource"].(map[string]any)
		if n := len(res["attributes"].(map[string]any)); n != 5 {
			t.Fatalf("record %d: %d resource attributes", i, n)
		}
		if v["trace_id"] != "" {
			traced++
		}
		if v["severity_text"] == "" || r.Time() == 0 {
			t.Fatalf("record %d: no severity or time: %v", i, v)
		}
	}
	if traced < 1500 || traced > 1900 {
		t.Errorf("%d of 2000 records have a trace id, want about 7 in 8", traced)
	}
	// Decoding a request gives the records back (regrouped by scope).
	var e record.OTLPEncoder
	req := e.AppendProto(nil, recs[:OTLPBatch])
	if n := len(req) / OTLPBatch; n < 350 || n > 700 {
		t.Errorf("%d bytes per record", n)
	}
	b := record.NewArena()
	back, err := b.DecodeOTLP(req, record.Referenced, nil)
	if err != nil || len(back) != OTLPBatch {
		t.Fatalf("decode: %d records, %v", len(back), err)
	}
	if got, want := views(back), views(recs[:OTLPBatch]); !slices.Equal(got, want) {
		t.Fatalf("the records decode as\n%v\nwant\n%v", got, want)
	}
}

// views lists the records' views and times in a canonical order.
func views(recs []*record.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d %#v", r.Time(), r.ToGo()))
	}
	slices.Sort(out)
	return out
}

// TestOTLPGolden pins the records of seed 1: the first ones as JSON views,
// and a SHA-256 of 20 requests. go test -run TestOTLPGolden -update
// rewrites the files.
func TestOTLPGolden(t *testing.T) {
	h := sha256.New()
	for _, req := range OTLPRequests(20*OTLPBatch, 1) {
		h.Write(req)
	}
	var views []byte
	a := record.NewArena()
	for _, r := range OTLPRecords(a, 5, 1) {
		views = append(r.AppendJSON(views), '\n')
	}
	golden.Check(t, filepath.Join("testdata", "otlp.golden"), views)
	golden.Check(t, filepath.Join("testdata", "otlp.sha256.golden"), fmt.Appendf(nil, "otlp %x\n", h.Sum(nil)))
}

func BenchmarkOTLPRecords(b *testing.B) {
	g := NewOTLP(1)
	a := record.NewArena()
	var recs []*record.Record
	b.ReportAllocs()
	for b.Loop() {
		a.Reset()
		recs = g.Records(a, OTLPBatch, recs[:0])
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*OTLPBatch), "ns/record")
}
