package record

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// protojson is the oracle of OTLP/JSON but for one rule: it writes and
// reads trace and span ids as base64 (the proto3 mapping of bytes), where
// OTLP/JSON has hex. The tests turn one into the other with convertIDs.

// convertIDs rewrites the trace and span ids of a request in JSON with
// conv. It fails on what encoding/json does not take.
func convertIDs(b []byte, conv func(string) (string, bool)) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var req any
	if err := dec.Decode(&req); err != nil {
		return nil, err
	}
	each := func(m any, names []string, f func(any)) {
		if o, ok := m.(map[string]any); ok {
			for _, n := range names {
				if l, ok := o[n].([]any); ok {
					for _, e := range l {
						f(e)
					}
				}
			}
		}
	}
	var bad error
	each(req, []string{"resourceLogs", "resource_logs"}, func(rl any) {
		each(rl, []string{"scopeLogs", "scope_logs"}, func(sl any) {
			each(sl, []string{"logRecords", "log_records"}, func(lr any) {
				o, ok := lr.(map[string]any)
				if !ok {
					return
				}
				for _, n := range []string{"traceId", "trace_id", "spanId", "span_id"} {
					if s, ok := o[n].(string); ok {
						if o[n], ok = conv(s); !ok {
							bad = fmt.Errorf("id %q", s)
						}
					}
				}
			})
		})
	})
	if bad != nil {
		return nil, bad
	}
	return json.Marshal(req)
}

func hexToBase64(s string) (string, bool) {
	b, err := hex.DecodeString(s)
	return base64.StdEncoding.EncodeToString(b), err == nil
}

func base64ToHex(s string) (string, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	return hex.EncodeToString(b), err == nil
}

// marshalOracleJSON writes req as OTLP/JSON: protojson's, ids in hex.
func marshalOracleJSON(t testing.TB, req proto.Message, opts protojson.MarshalOptions) []byte {
	t.Helper()
	b, err := opts.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = convertIDs(b, base64ToHex); err != nil {
		t.Fatal(err)
	}
	if opts.Multiline { // convertIDs compacted it: indent it again
		var buf bytes.Buffer
		if err := json.Indent(&buf, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		b = buf.Bytes()
	}
	return b
}

// unmarshalOracleJSON reads OTLP/JSON with the oracle.
func unmarshalOracleJSON(b []byte) (*logs.LogsData, error) {
	b, err := convertIDs(b, hexToBase64)
	if err != nil {
		return nil, err
	}
	m := &logs.LogsData{}
	return m, protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, m)
}

// rootKeyOrder lists the keys of a record's root and of its resource and
// scope, in order.
func rootKeyOrder(r *Record) []string {
	a := r.Arena()
	var keys []string
	for it := a.Iter(r.Root()); it.Next(); {
		keys = append(keys, a.Str(it.Key()))
		if v := it.Value(); v.Kind() == Map && (a.Str(it.Key()) == "resource" || a.Str(it.Key()) == "scope") {
			for it2 := a.Iter(v); it2.Next(); {
				keys = append(keys, a.Str(it.Key())+"."+a.Str(it2.Key()))
			}
		}
	}
	return keys
}

// sameRecords checks that got are want, record by record: views, times,
// key order, and the time rule's mark.
func sameRecords(t *testing.T, got, want []*Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].equal(want[i]) || got[i].timeFmt != want[i].timeFmt || !got[i].IsOTLP() {
			t.Fatalf("record %d:\n got %v %d\nwant %v %d", i, got[i].ToGo(), got[i].Time(), want[i].ToGo(), want[i].Time())
		}
		if g, w := rootKeyOrder(got[i]), rootKeyOrder(want[i]); !reflect.DeepEqual(g, w) {
			t.Fatalf("record %d: keys %v, want %v", i, g, w)
		}
	}
}

// groupShared reports whether the records of each group of
// genOracleRequest (groupSize records each) share one resource value and
// one scope value, which the records of other groups do not share.
func groupShared(recs []*Record, groupSize int) bool {
	for i := 1; i < len(recs); i++ {
		for _, k := range []string{"resource", "scope"} {
			x, _ := recs[i-1].Get(NewPath(k))
			y, _ := recs[i].Get(NewPath(k))
			if (x == y) != ((i-1)/groupSize == i/groupSize) {
				return false
			}
		}
	}
	return true
}
