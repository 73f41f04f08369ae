package record

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// FuzzDecodeOTLPJSON: the decoder never panics; what it decodes it decodes
// alike in both modes and with KeyValues off its quick path, and re-encodes (AppendJSON) to JSON that decodes
// to the same records; and it agrees with protojson, the oracle, on what
// both accept. The seed corpus is testdata/fuzz/FuzzDecodeOTLPJSON and
// the small requests below, one per kind of field.
func FuzzDecodeOTLPJSON(f *testing.F) {
	lr := func(s string) string { return `{"resourceLogs":[{"scopeLogs":[{"logRecords":[` + s + `]}]}]}` }
	for _, s := range []string{
		`{}`, `{"resourceLogs":[]}`, lr(`{}`),
		lr(`{"timeUnixNano":"1","observedTimeUnixNano":2,"severityNumber":9,"severityText":"I","flags":1,"droppedAttributesCount":1,"eventName":"e"}`),
		lr(`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708"}`),
		lr(`{"body":{"stringValue":"s"}}`), lr(`{"body":{"boolValue":true}}`), lr(`{"body":{"intValue":"-1"}}`),
		lr(`{"body":{"doubleValue":1.5}}`), lr(`{"body":{"bytesValue":"AQI="}}`),
		lr(`{"body":{"arrayValue":{"values":[{"intValue":1},{}]}}}`),
		lr(`{"body":{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}}`),
		lr(`{"attributes":[{"key":"a","value":{"stringValue":"b"}},{"key":"a"}]}`),
		`{"resourceLogs":[{"resource":{"attributes":[{"key":"r","value":{"intValue":"1"}}],"droppedAttributesCount":1},"schemaUrl":"u",` +
			`"scopeLogs":[{"scope":{"name":"n","version":"v","attributes":[],"droppedAttributesCount":2},"schemaUrl":"s","logRecords":[{},{}]},{"logRecords":[{}]}]},` +
			`{"scopeLogs":[{"logRecords":[{}]}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a := NewArena()
		a.Limits.MaxDepth = 32
		orig := append([]byte(nil), in...)
		keep, err := a.DecodeOTLPJSON([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{}]}]}]}`), Referenced, nil)
		if err != nil || len(keep) != 1 {
			t.Fatal(err)
		}
		nodes, slab, nrec := len(a.nodes), len(a.slab), a.nrec
		recs, err := a.DecodeOTLPJSON(in, Referenced, keep)
		recsO, errO := a.DecodeOTLPJSON(in, Owned, nil)
		if (err == nil) != (errO == nil) {
			t.Fatalf("modes disagree: %v / %v", err, errO)
		}
		if !bytes.Equal(in, orig) {
			t.Fatal("the decoder changed its input")
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(in) || err.Error() != errO.Error() {
				t.Fatalf("bad error %#v / %v", err, errO)
			}
			if len(recs) != 1 || len(a.nodes) != nodes || len(a.slab) != slab || a.nrec != nrec {
				t.Fatal("a failed decode changed the arena")
			}
			checkRejected(t, in, de)
			return
		}
		recs = recs[1:]
		if len(recs) != len(recsO) {
			t.Fatalf("%d records referenced, %d owned", len(recs), len(recsO))
		}
		for i := range recs {
			if !recs[i].equal(recsO[i]) {
				t.Fatalf("record %d: referenced and owned differ", i)
			}
		}
		for i, r := range recs {
			if err := r.CheckOTLP(); err != nil {
				t.Fatalf("record %d: %v", i, err)
			}
		}

		// Re-encoded, the records decode again as they are: the same
		// records (as a set: regrouped), and the same protobuf.
		var e OTLPEncoder
		out := e.AppendJSON(nil, recs)
		back, err := a.DecodeOTLPJSON(out, Owned, nil)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", out, err)
		}
		gv, gt := recordViews(back)
		wv, wt := recordViews(recs)
		if g, w := flatten(gv, gt), flatten(wv, wt); fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("re-decode of %s:\n got %v\nwant %v", out, g, w)
		}
		if p, q := e.AppendProto(nil, recs), e.AppendProto(nil, back); !bytes.Equal(p, q) {
			t.Fatalf("re-decode of %s encodes differently", out)
		}

		// The general path alike: a space after each KeyValue's '{'
		// (which only structure can hold) keeps the quick path out.
		spaced, err := a.DecodeOTLPJSON(bytes.ReplaceAll(in, []byte(`{"key"`), []byte(`{ "key"`)), Owned, nil)
		if err != nil || len(spaced) != len(recs) {
			t.Fatalf("the general path: %d records, %v; the quick %d", len(spaced), err, len(recs))
		}
		for i := range recs {
			if !recs[i].equal(spaced[i]) {
				t.Fatalf("record %d: the quick and general paths differ", i)
			}
		}

		// The oracle. Deliberate differences, skipped: protojson reads
		// ids as base64 (convertIDs gives it them so); it reads deeper
		// nesting than our limit and lone surrogates (we read U+FFFD),
		// and with DiscardUnknown, unknown enum names (as 0), which we
		// refuse: those inputs we reject.
		conv, err := convertIDs(in, hexToBase64)
		if err != nil {
			return
		}
		m := &logs.LogsData{}
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(conv, m); err != nil {
			t.Fatalf("protojson rejects what we accept: %v", err)
		}
		ov, ot := oracleViews(m)
		if len(ov) != len(wv) {
			t.Fatalf("%d records, the oracle %d", len(wv), len(ov))
		}
		for i := range ov {
			// fmt prints maps sorted and NaN as NaN, which DeepEqual
			// finds unequal to itself.
			if g, w := fmt.Sprint(wv[i], wt[i]), fmt.Sprint(ov[i], ot[i]); g != w {
				t.Fatalf("record %d:\n got %s\nwant %s", i, g, w)
			}
		}
	})
}

// checkRejected checks that what we reject protojson rejects too, but for
// the deliberate differences: our nesting limit; ids, which OTLP wants of
// 16 and 8 bytes in hex and protojson takes as base64 of any length;
// unknown enum names, which protojson with DiscardUnknown reads as 0; and
// numbers whose exponent has no digits (0e, 1e+), not JSON, which
// protojson reads.
func checkRejected(t *testing.T, in []byte, de *DecodeError) {
	if !utf8.Valid(in) || errors.Is(de, ErrDepth) || errors.Is(de, ErrIDLength) || emptyExponent.Match(in) ||
		strings.Contains(de.Detail, "Id:") || strings.Contains(de.Detail, "SeverityNumber") {
		return
	}
	m := &logs.LogsData{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(in, m); err == nil {
		t.Fatalf("we reject what protojson accepts: %v", de)
	}
}

var emptyExponent = regexp.MustCompile(`[0-9.][eE][+-]?([^0-9+-]|$)`)
