package record

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// viewKeyOrder is the key order of a decoded OTLP record (rootKeyOrder),
// with or without a body.
func viewKeyOrder(body bool) []string {
	var keys []string
	for _, f := range rootView {
		if f.ID == ViewBody && !body {
			continue
		}
		keys = append(keys, f.Name)
		for _, g := range f.Fields {
			keys = append(keys, f.Name+"."+g.Name)
		}
	}
	return keys
}

func TestDecodeOTLPView(t *testing.T) {
	emptyRes := map[string]any{"attributes": map[string]any{}, "dropped_attributes_count": int64(0), "schema_url": ""}
	emptyScope := map[string]any{"name": "", "version": "", "attributes": map[string]any{}, "dropped_attributes_count": int64(0), "schema_url": ""}
	defaults := func(kv ...any) map[string]any {
		m := map[string]any{
			"attributes": map[string]any{}, "severity_text": "", "severity_number": int64(0),
			"observed_time": time.Unix(0, 0).UTC(), "trace_id": "", "span_id": "", "flags": int64(0),
			"event_name": "", "dropped_attributes_count": int64(0), "resource": emptyRes, "scope": emptyScope,
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	const ts = "2026-12-01T10:00:00.123456789Z"
	tsNanos := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC).UnixNano()
	for _, tt := range []struct {
		name, in string
		want     map[string]any
		time     int64
		unset    bool // time is the observed time
	}{
		{"design example", `{"body": "x", "attributes": {"a": 1}, "resource": {"attributes": {}}}`,
			defaults("body", "x", "attributes", map[string]any{"a": int64(1)}), 0, true},
		{"empty", `{}`, defaults(), 0, true},
		{"time string", `{"time":"` + ts + `","observed_time":5}`,
			defaults("observed_time", time.Unix(0, 5).UTC()), tsNanos, false},
		{"time int", `{"time":7,"observed_time":"` + ts + `"}`,
			defaults("observed_time", time.Unix(0, tsNanos).UTC()), 7, false},
		{"time absent", `{"observed_time":9}`, defaults("observed_time", time.Unix(0, 9).UTC()), 9, true},
		{"time 0", `{"time":0,"observed_time":9}`, defaults("observed_time", time.Unix(0, 9).UTC()), 9, true},
		{"everything", `{"scope":{"version":"2","name":"lib","schema_url":"s"},"body":{"m":[1,2.5,null]},
			"severity_text":"WARN","severity_number":13,"trace_id":"ABCDEF0123456789abcdef0123456789","span_id":"0123456789abcdef",
			"flags":1,"event_name":"ev","dropped_attributes_count":2,
			"resource":{"schema_url":"r","dropped_attributes_count":3,"attributes":{"service.name":"api"}}}`,
			defaults("body", map[string]any{"m": []any{int64(1), 2.5, nil}}, "severity_text", "WARN", "severity_number", int64(13),
				"trace_id", "abcdef0123456789abcdef0123456789", "span_id", "0123456789abcdef", "flags", int64(1),
				"event_name", "ev", "dropped_attributes_count", int64(2),
				"resource", map[string]any{"attributes": map[string]any{"service.name": "api"}, "dropped_attributes_count": int64(3), "schema_url": "r"},
				"scope", map[string]any{"name": "lib", "version": "2", "attributes": map[string]any{}, "dropped_attributes_count": int64(0), "schema_url": "s"}),
			0, true},
		{"nulls", `{"body":null,"attributes":null,"severity_text":null,"observed_time":null,"trace_id":null,"resource":null,"scope":{"attributes":null},"time":null}`,
			defaults("body", nil), 0, true},
		{"empty ids", `{"trace_id":"","span_id":""}`, defaults(), 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []Mode{Referenced, Owned} {
				a := NewArena()
				r, err := a.DecodeOTLPView([]byte(tt.in), mode)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.ToGo(); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("view\n got %v\nwant %v", got, tt.want)
				}
				_, hasBody := tt.want["body"]
				if got := rootKeyOrder(r); !reflect.DeepEqual(got, viewKeyOrder(hasBody)) {
					t.Errorf("keys %v", got)
				}
				if r.Time() != tt.time || (r.timeFmt == otlpTimeUnset) != tt.unset || !r.IsOTLP() {
					t.Errorf("time %d unset %v, want %d %v", r.Time(), r.timeFmt == otlpTimeUnset, tt.time, tt.unset)
				}
				if err := r.CheckOTLP(); err != nil {
					t.Errorf("CheckOTLP: %v", err)
				}
				// Record.AppendJSON writes the view back.
				line := r.AppendJSON(nil)
				r2, err := a.DecodeOTLPView(line, Owned)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if !r2.equal(r) || !reflect.DeepEqual(rootKeyOrder(r2), rootKeyOrder(r)) {
					t.Errorf("AppendJSON round trip:\n%s\n got %v %d\nwant %v %d", line, r2.ToGo(), r2.Time(), r.ToGo(), r.Time())
				}
				// And the protobuf holds it.
				var e OTLPEncoder
				recs, err := a.DecodeOTLP(e.AppendProto(nil, []*Record{r}), Owned, nil)
				if err != nil || len(recs) != 1 {
					t.Fatalf("protobuf: %v", err)
				}
				if !recs[0].equal(r) || recs[0].timeFmt != r.timeFmt || !reflect.DeepEqual(rootKeyOrder(recs[0]), rootKeyOrder(r)) {
					t.Errorf("protobuf round trip:\n got %v %d\nwant %v %d", recs[0].ToGo(), recs[0].Time(), r.ToGo(), r.Time())
				}
			}
		})
	}
}

func TestDecodeOTLPViewErrors(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		path     string // of a *ViewError; "" for a *DecodeError
		cause    error  // of a *DecodeError
	}{
		{"unknown key", `{"body":"x","msg":"y"}`, ".msg", nil},
		{"unknown resource key", `{"resource":{"service.name":"x"}}`, ".resource.service.name", nil},
		{"unknown scope key", `{"scope":{"name":"n","nme":"x"}}`, ".scope.nme", nil},
		{"string for int", `{"severity_number":"INFO"}`, ".severity_number", nil},
		{"float for int", `{"flags":1.5}`, ".flags", nil},
		{"int range", `{"dropped_attributes_count":-1}`, ".dropped_attributes_count", nil},
		{"severity range", `{"severity_number":2147483648}`, ".severity_number", nil},
		{"string for map", `{"attributes":"a=1"}`, ".attributes", nil},
		{"array for map", `{"resource":{"attributes":[]}}`, ".resource.attributes", nil},
		{"string for resource", `{"resource":"x"}`, ".resource", nil},
		{"number for string", `{"scope":{"version":2}}`, ".scope.version", nil},
		{"bad trace id", `{"trace_id":"xyz"}`, ".trace_id", nil},
		{"short span id", `{"span_id":"0123"}`, ".span_id", nil},
		{"bool for time", `{"observed_time":true}`, ".observed_time", nil},
		{"bad time", `{"time":"yesterday"}`, ".time", nil},
		{"time out of range", `{"time":"3000-01-01T00:00:00Z"}`, ".time", nil},
		{"float time", `{"time":1.5}`, ".time", nil},
		{"not an object", `[1]`, "", ErrNotMap},
		{"syntax", `{"body":}`, "", ErrSyntax},
		{"truncated", `{"body":"x"`, "", ErrTruncated},
		{"invalid UTF-8", "{\"body\":\"\xff\"}", "", ErrInvalidUTF8},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewArena()
			nodes, slab, bufs, nrec := len(a.nodes), len(a.slab), len(a.bufs), a.nrec
			r, err := a.DecodeOTLPView([]byte(tt.in), Referenced)
			if r != nil {
				t.Fatalf("decoded %v", r.ToGo())
			}
			var ve *ViewError
			var de *DecodeError
			switch {
			case tt.path != "":
				if !errors.As(err, &ve) || ve.Path != tt.path {
					t.Errorf("error %v, want a ViewError of %s", err, tt.path)
				}
			case !errors.As(err, &de) || !errors.Is(err, tt.cause):
				t.Errorf("error %v, want a DecodeError of %v", err, tt.cause)
			}
			if len(a.nodes) != nodes || len(a.slab) != slab || len(a.bufs) != bufs || a.nrec != nrec {
				t.Error("a failed decode changed the arena")
			}
		})
	}
}

// TestDecodeOTLPViewOfDecoded: the JSON of a record that DecodeOTLPJSON
// made (with JSON's types: no bytes, no NaN) is read back as the record.
func TestDecodeOTLPViewOfDecoded(t *testing.T) {
	js := `{"resourceLogs":[{"resource":{"attributes":[{"key":"k8s.pod","value":{"stringValue":"p"}}],"droppedAttributesCount":1},"schemaUrl":"rs",
		"scopeLogs":[{"scope":{"name":"n","version":"v","attributes":[{"key":"a","value":{"intValue":"1"}}]},"schemaUrl":"ss",
		"logRecords":[{"timeUnixNano":"1700000000000000001","observedTimeUnixNano":"1700000000000000002","severityNumber":9,
		"severityText":"INFO","body":{"kvlistValue":{"values":[{"key":"m","value":{"arrayValue":{"values":[{"doubleValue":1.5},{"boolValue":true},{}]}}}]}},
		"attributes":[{"key":"x","value":{"stringValue":"é\"\n"}}],"droppedAttributesCount":2,"flags":1,
		"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","eventName":"e"},
		{"observedTimeUnixNano":"5"}]}]}]}`
	a := NewArena()
	recs, err := a.DecodeOTLPJSON([]byte(js), Referenced, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		line := r.AppendJSON(nil)
		v, err := a.DecodeOTLPView(line, Referenced)
		if err != nil {
			t.Fatalf("record %d: %s: %v", i, line, err)
		}
		if !v.equal(r) || !reflect.DeepEqual(rootKeyOrder(v), rootKeyOrder(r)) {
			t.Errorf("record %d:\n got %v %d\nwant %v %d", i, v.ToGo(), v.Time(), r.ToGo(), r.Time())
		}
	}
}
