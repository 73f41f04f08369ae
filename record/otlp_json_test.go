package record

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func TestDecodeOTLPJSONMatchesOracle(t *testing.T) {
	for _, tt := range []struct {
		name      string
		n, groups int
		opts      protojson.MarshalOptions
	}{
		{"one", 1, 1, protojson.MarshalOptions{}},
		{"b5", 100, 100, protojson.MarshalOptions{UseEnumNumbers: true}},
		{"groups", 60, 7, protojson.MarshalOptions{}},
		{"protonames", 60, 7, protojson.MarshalOptions{UseProtoNames: true}},
		{"multiline", 20, 3, protojson.MarshalOptions{Multiline: true, UseEnumNumbers: true}},
		{"empty", 0, 1, protojson.MarshalOptions{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := genOracleRequest(1, tt.n, tt.groups)
			js := marshalOracleJSON(t, req, tt.opts)
			pa := NewArena()
			fromProto, err := pa.DecodeOTLP(marshalOracle(t, req), Referenced, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []Mode{Referenced, Owned} {
				a := NewArena()
				recs, err := a.DecodeOTLPJSON(js, mode, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameAsOracle(t, req, recs)
				sameRecords(t, recs, fromProto)
				if !groupShared(recs, tt.groups) {
					t.Error("a group's records do not share its resource and scope")
				}
			}
		})
	}
}

// TestDecodeOTLPJSONZeroCopy: strings without escapes point into the
// request; the decoded group values are shared.
func TestDecodeOTLPJSONZeroCopy(t *testing.T) {
	js := []byte(`{"resourceLogs":[{"resource":{"attributes":[{"key":"svc","value":{"stringValue":"api"}}]},
		"scopeLogs":[{"logRecords":[{"body":{"stringValue":"hello"}},{"body":{"stringValue":"t\u00e9"}}]}]}]}`)
	a := NewArena()
	recs, err := a.DecodeOTLPJSON(js, Referenced, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := recs[0].Get(NewPath("body"))
	if b := a.Bytes(body); &b[0] != &js[bytes.Index(js, []byte("hello"))] {
		t.Error("body is not a view into the request")
	}
	if body, _ := recs[1].Get(NewPath("body")); a.Str(body) != "té" {
		t.Errorf("escaped body %q", a.Str(body))
	}
	r0, _ := recs[0].Get(NewPath("resource"))
	r1, _ := recs[1].Get(NewPath("resource"))
	s0, _ := recs[0].Get(NewPath("scope"))
	s1, _ := recs[1].Get(NewPath("scope"))
	if r0 != r1 || s0 != s1 {
		t.Error("resource or scope not shared")
	}
}

func TestOTLPJSONRoundTrip(t *testing.T) {
	for _, groups := range []int{1, 5, 100} {
		req := genOracleRequest(uint64(groups), 100, groups)
		a := NewArena()
		recs, err := a.DecodeOTLPJSON(marshalOracleJSON(t, req, protojson.MarshalOptions{}), Referenced, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e OTLPEncoder
		out := e.AppendJSON(nil, recs)
		if bytes.IndexByte(out, '\n') >= 0 {
			t.Error("output is not one line")
		}
		back, err := unmarshalOracleJSON(out)
		if err != nil {
			t.Fatalf("oracle rejects %s: %v", out, err)
		}
		sameRecordSet(t, fmt.Sprintf("groups %d: round trip", groups), back, req)
		if n := len(back.ResourceLogs); n != min(3, len(req.ResourceLogs)) {
			t.Errorf("groups %d: %d resource groups, want %d", groups, n, min(3, len(req.ResourceLogs)))
		}
		// Our own decoder reads it back as the same records.
		recs2, err := a.DecodeOTLPJSON(out, Owned, nil)
		if err != nil {
			t.Fatal(err)
		}
		if gv, gt := recordViews(recs2); !reflect.DeepEqual(flatten(gv, gt), flatten(oracleViews(req))) {
			t.Fatalf("groups %d: decode of our output changed records", groups)
		}
	}
}

// TestOTLPJSONProtoCross: protobuf → records → JSON and JSON → records →
// protobuf keep the records; and both encoders group alike, so that the
// JSON's records encode as the protobuf's.
func TestOTLPJSONProtoCross(t *testing.T) {
	for _, groups := range []int{1, 7, 100} {
		req := genOracleRequest(uint64(groups)+10, 100, groups)
		a := NewArena()
		var e OTLPEncoder

		fromProto, err := a.DecodeOTLP(marshalOracle(t, req), Referenced, nil)
		if err != nil {
			t.Fatal(err)
		}
		js := e.AppendJSON(nil, fromProto)
		back, err := unmarshalOracleJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		sameRecordSet(t, fmt.Sprintf("groups %d: protobuf → JSON", groups), back, req)

		fromJSON, err := a.DecodeOTLPJSON(marshalOracleJSON(t, req, protojson.MarshalOptions{}), Referenced, nil)
		if err != nil {
			t.Fatal(err)
		}
		pb := e.AppendProto(nil, fromJSON)
		back = &logs.LogsData{}
		if err := proto.Unmarshal(pb, back); err != nil {
			t.Fatal(err)
		}
		sameRecordSet(t, fmt.Sprintf("groups %d: JSON → protobuf", groups), back, req)

		// The JSON of the protobuf's records, decoded, is the regrouped
		// request: it encodes as the protobuf's records do (as the same
		// message: the protobuf's unedited LogRecords are written as the
		// bytes they came in, in the generator's field order).
		regrouped, err := a.DecodeOTLPJSON(js, Referenced, nil)
		if err != nil {
			t.Fatal(err)
		}
		m1, m2 := &logs.LogsData{}, &logs.LogsData{}
		if err := proto.Unmarshal(e.AppendProto(nil, fromProto), m1); err != nil {
			t.Fatal(err)
		}
		if err := proto.Unmarshal(e.AppendProto(nil, regrouped), m2); err != nil {
			t.Fatal(err)
		}
		v1, t1 := oracleViews(m1)
		v2, t2 := oracleViews(m2)
		if !reflect.DeepEqual(groupShape(m1), groupShape(m2)) || !reflect.DeepEqual(v1, v2) || !reflect.DeepEqual(t1, t2) {
			t.Fatalf("groups %d: the encoders group differently", groups)
		}
	}
}

// TestOTLPJSONRegroup: interleaved resources and scopes, edited records
// and plain records are grouped as AppendProto groups them.
func TestOTLPJSONRegroup(t *testing.T) {
	res := func(name string) *resource.Resource {
		return &resource.Resource{Attributes: []*common.KeyValue{{Key: "service.name",
			Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: name}}}}}
	}
	scope := func(v string) *common.InstrumentationScope {
		return &common.InstrumentationScope{Name: "lib", Version: v}
	}
	rec := func(body string) *logs.LogRecord {
		return &logs.LogRecord{Body: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: body}}}
	}
	req := &logs.LogsData{}
	// A/s1, B/s1, A/s2, A/s1, B/s1: two resources, A with two scopes.
	for i, g := range []struct{ res, scope string }{{"A", "1"}, {"B", "1"}, {"A", "2"}, {"A", "1"}, {"B", "1"}} {
		req.ResourceLogs = append(req.ResourceLogs, &logs.ResourceLogs{Resource: res(g.res), ScopeLogs: []*logs.ScopeLogs{
			{Scope: scope(g.scope), LogRecords: []*logs.LogRecord{rec(fmt.Sprint(i, "a")), rec(fmt.Sprint(i, "b"))}},
		}})
	}
	a := NewArena()
	recs, err := a.DecodeOTLPJSON(marshalOracleJSON(t, req, protojson.MarshalOptions{}), Referenced, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Move record 1 (A) to resource B by an edit; add a plain record.
	if err := recs[1].Set(NewPath("resource", "attributes", "service.name"), a.NewStringFrom("B")); err != nil {
		t.Fatal(err)
	}
	plain, err := a.DecodeJSON([]byte(`{"msg":"plain"}`), Referenced)
	if err != nil {
		t.Fatal(err)
	}
	plain.SetTime(5)
	recs = append(recs, plain)
	var e OTLPEncoder
	out := e.AppendJSON(nil, recs)
	back, err := unmarshalOracleJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rl := range back.ResourceLogs {
		name := "-"
		if kv := rl.GetResource().GetAttributes(); len(kv) > 0 {
			name = kv[0].GetValue().GetStringValue()
		}
		for _, sl := range rl.ScopeLogs {
			var bodies []string
			for _, lr := range sl.LogRecords {
				if s, ok := lr.Body.Value.(*common.AnyValue_StringValue); ok {
					bodies = append(bodies, s.StringValue)
				} else {
					bodies = append(bodies, fmt.Sprintf("t%d:%s", lr.TimeUnixNano, lr.Body.GetKvlistValue().GetValues()[0].GetValue().GetStringValue()))
				}
			}
			got = append(got, fmt.Sprintf("%s/%s%q", name, sl.GetScope().GetVersion(), bodies))
		}
	}
	want := []string{
		`A/1["0a" "3a" "3b"]`, `A/2["2a" "2b"]`,
		`B/1["0b" "1a" "1b" "4a" "4b"]`,
		`-/["t5:plain"]`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups\n got %v\nwant %v", got, want)
	}
	// The same groups as the protobuf's.
	pb := &logs.LogsData{}
	if err := proto.Unmarshal(e.AppendProto(nil, recs), pb); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(pb, back) {
		t.Errorf("JSON and protobuf encodings differ:\n%v\n%v", pb, back)
	}
}

// TestOTLPJSONEncodeValues: the forms of OTLP/JSON's values, defaults
// left out.
func TestOTLPJSONEncodeValues(t *testing.T) {
	lr := &logs.LogRecord{
		TimeUnixNano:         math.MaxUint64,
		ObservedTimeUnixNano: 1,
		SeverityNumber:       logs.SeverityNumber_SEVERITY_NUMBER_ERROR,
		TraceId:              []byte{0xAB, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xFF},
		SpanId:               []byte{0, 0, 0, 0, 0, 0, 0, 1},
		Flags:                1,
		Body: &common.AnyValue{Value: &common.AnyValue_ArrayValue{ArrayValue: &common.ArrayValue{Values: []*common.AnyValue{
			{Value: &common.AnyValue_DoubleValue{DoubleValue: math.NaN()}},
			{Value: &common.AnyValue_DoubleValue{DoubleValue: math.Inf(-1)}},
			{Value: &common.AnyValue_DoubleValue{DoubleValue: 1e-7}},
			{Value: &common.AnyValue_DoubleValue{DoubleValue: 2.5}},
			{Value: &common.AnyValue_IntValue{IntValue: -3}},
			{Value: &common.AnyValue_BytesValue{BytesValue: []byte{0xfb, 0xff}}},
			{Value: &common.AnyValue_StringValue{}},
			{Value: &common.AnyValue_BoolValue{}},
			{},
			{Value: &common.AnyValue_ArrayValue{ArrayValue: &common.ArrayValue{}}},
			{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{}}},
		}}}},
		Attributes: []*common.KeyValue{{Key: "", Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "q\"\n<"}}}, {Key: "n"}},
	}
	req := &logs.LogsData{ResourceLogs: []*logs.ResourceLogs{{ScopeLogs: []*logs.ScopeLogs{{LogRecords: []*logs.LogRecord{lr}}}}}}
	a := NewArena()
	recs, err := a.DecodeOTLP(marshalOracle(t, req), Referenced, nil)
	if err != nil {
		t.Fatal(err)
	}
	var e OTLPEncoder
	got := string(e.AppendJSON(nil, recs))
	want := `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"18446744073709551615","observedTimeUnixNano":"1",` +
		`"severityNumber":17,"body":{"arrayValue":{"values":[{"doubleValue":"NaN"},{"doubleValue":"-Infinity"},` +
		`{"doubleValue":1e-7},{"doubleValue":2.5},{"intValue":"-3"},{"bytesValue":"+/8="},{"stringValue":""},` +
		`{"boolValue":false},{},{"arrayValue":{}},{"kvlistValue":{}}]}},` +
		`"attributes":[{"value":{"stringValue":"q\"\n<"}},{"key":"n"}],"flags":1,` +
		`"traceId":"ab0102030405060708090a0b0c0d0eff","spanId":"0000000000000001"}]}]}]}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// What protojson makes of it is the request.
	back, err := unmarshalOracleJSON([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	wv, wt := oracleViews(req)
	if gv, gt := oracleViews(back); fmt.Sprint(gv, gt) != fmt.Sprint(wv, wt) { // NaN: compare as text
		t.Errorf("oracle reads\n%v\nwant\n%v", gv, wv)
	}
	if got := string(e.AppendJSON(nil, nil)); got != `{}` {
		t.Errorf("no records: %s", got)
	}
}

// TestDecodeOTLPJSONForms: the forms protojson reads, beyond what it
// writes.
func TestDecodeOTLPJSONForms(t *testing.T) {
	wrap := func(lr string) string {
		return `{"resourceLogs":[{"scopeLogs":[{"logRecords":[` + lr + `]}]}]}`
	}
	for _, tt := range []struct {
		name, in string
		want     map[string]any // keys of the first record's view to check
		time     int64
	}{
		{"int forms", wrap(`{"timeUnixNano":1e3,"observedTimeUnixNano":"20","flags":"1.0e1","droppedAttributesCount":3.0,"body":{"intValue":"-9223372036854775808"}}`),
			map[string]any{"flags": int64(10), "dropped_attributes_count": int64(3), "body": int64(math.MinInt64)}, 1000},
		{"time unset", wrap(`{"observedTimeUnixNano":"20"}`), nil, 20},
		{"max uint64 time", wrap(`{"timeUnixNano":"18446744073709551615"}`), nil, -1},
		{"enum name", wrap(`{"severityNumber":"SEVERITY_NUMBER_INFO2"}`), map[string]any{"severity_number": int64(10)}, 0},
		{"enum unspecified", wrap(`{"severityNumber":"SEVERITY_NUMBER_UNSPECIFIED"}`), map[string]any{"severity_number": int64(0)}, 0},
		{"enum number", wrap(`{"severityNumber":-5}`), map[string]any{"severity_number": int64(-5)}, 0},
		{"upper-case ids", wrap(`{"traceId":"ABCDEF0123456789abcdef0123456789","spanId":"00000000000000FF"}`),
			map[string]any{"trace_id": "abcdef0123456789abcdef0123456789", "span_id": "00000000000000ff"}, 0},
		{"empty ids", wrap(`{"traceId":"","spanId":""}`), map[string]any{"trace_id": "", "span_id": ""}, 0},
		{"snake_case", wrap(`{"time_unix_nano":"5","severity_text":"W","event_name":"e","dropped_attributes_count":2}`),
			map[string]any{"severity_text": "W", "event_name": "e", "dropped_attributes_count": int64(2)}, 5},
		{"bytes url unpadded", wrap(`{"body":{"bytesValue":"-_8"}}`), map[string]any{"body": []byte{0xfb, 0xff}}, 0},
		{"bytes std padded", wrap(`{"body":{"bytes_value":"+/8="}}`), map[string]any{"body": []byte{0xfb, 0xff}}, 0},
		{"bytes escaped", wrap(`{"body":{"bytesValue":"+\/8="}}`), map[string]any{"body": []byte{0xfb, 0xff}}, 0},
		{"bytes empty", wrap(`{"body":{"bytesValue":""}}`), map[string]any{"body": []byte{}}, 0},
		{"double forms", wrap(`{"body":{"arrayValue":{"values":[{"doubleValue":"Infinity"},{"doubleValue":"2.5"},{"doubleValue":3},{"doubleValue":-0.0}]}}}`),
			map[string]any{"body": []any{math.Inf(1), 2.5, 3.0, math.Copysign(0, -1)}}, 0},
		{"nulls", wrap(`{"body":null,"attributes":null,"severityText":null,"traceId":null}`),
			map[string]any{"attributes": map[string]any{}, "severity_text": "", "trace_id": ""}, 0},
		{"null member", wrap(`{"body":{"stringValue":null,"intValue":"7"}}`), map[string]any{"body": int64(7)}, 0},
		{"empty body", wrap(`{"body":{}}`), map[string]any{"body": nil}, 0},
		{"kv without value", wrap(`{"attributes":[{"key":"a"},{"key":"b","value":{}},{"value":{"boolValue":true}}]}`),
			map[string]any{"attributes": map[string]any{"a": nil, "b": nil, "": true}}, 0},
		{"duplicate attribute", wrap(`{"attributes":[{"key":"a","value":{"intValue":1}},{"key":"a","value":{"intValue":2}}]}`),
			map[string]any{"attributes": map[string]any{"a": int64(2)}}, 0},
		{"unknown fields", `{"x":[{"y":{}}],"resourceLogs":[{"resource":{"entityRefs":[{"type":"t"}]},"scopeLogs":[{"logRecords":[{"future":1e999,"body":{"stringValue":"s","other":null}}]}]}]}`,
			map[string]any{"body": "s"}, 0},
		{"scope after records", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{}],"schemaUrl":"u","scope":{"name":"n"}}],"resource":{"droppedAttributesCount":1},"schemaUrl":"r"}]}`,
			map[string]any{
				"scope":    map[string]any{"name": "n", "version": "", "attributes": map[string]any{}, "dropped_attributes_count": int64(0), "schema_url": "u"},
				"resource": map[string]any{"attributes": map[string]any{}, "dropped_attributes_count": int64(1), "schema_url": "r"},
			}, 0},
		{"whitespace", " \t\r\n" + strings.ReplaceAll(wrap(`{"severityText":"x"}`), ":", " : ") + "\n", map[string]any{"severity_text": "x"}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewArena()
			recs, err := a.DecodeOTLPJSON([]byte(tt.in), Referenced, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			v := recs[0].ToGo()
			for k, w := range tt.want {
				if g := v[k]; !reflect.DeepEqual(g, w) || fmt.Sprint(g) != fmt.Sprint(w) {
					t.Errorf("%s = %#v, want %#v", k, g, w)
				}
			}
			if _, ok := tt.want["body"]; !ok {
				if _, has := v["body"]; has && !strings.Contains(tt.in, `"body"`) {
					t.Errorf("body %v, want absent", v["body"])
				}
			}
			if recs[0].Time() != tt.time {
				t.Errorf("time %d, want %d", recs[0].Time(), tt.time)
			}
			// protojson reads it alike (ids apart, which it takes as base64).
			if strings.Contains(tt.in, "Id") || strings.Contains(tt.in, "1e999") {
				return
			}
			m := &logs.LogsData{}
			if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(tt.in), m); err != nil {
				t.Fatalf("protojson: %v", err)
			}
			wv, wt := oracleViews(m)
			if gv, gt := recordViews(recs); fmt.Sprint(gv, gt) != fmt.Sprint(wv, wt) {
				t.Errorf("oracle\n%v %v\nours\n%v %v", wv, wt, gv, gt)
			}
		})
	}
}

// TestDecodeOTLPJSONScalarsMatchProtojson: every scalar field (but the
// ids) takes the forms protojson takes, and only those, with the value
// protojson reads.
func TestDecodeOTLPJSONScalarsMatchProtojson(t *testing.T) {
	forms := []string{
		`0`, `1`, `-1`, `-0`, `1.0`, `1.5`, `1e2`, `1E+2`, `100e-2`, `150e-2`, `0.1e1`, `1.50e1`, `0.0e5`, `-0.0`,
		`2147483647`, `2147483648`, `-2147483648`, `-2147483649`, `4294967295`, `4294967296`,
		`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
		`18446744073709551615`, `18446744073709551616`, `1e19`, `1e20`, `0.00000000000000000000001e23`,
		`123456789012345678901e-1`, `1e-400`, `1e400`, `1e99999999999`, `4.9e-324`, `1.7976931348623157e308`,
		`"1"`, `"-1"`, `"1e2"`, `"1.5"`, `" 1"`, `"1 "`, `"0x1"`, `"+1"`, `"01"`, `"1."`, `".5"`, `""`, `"\u0031"`,
		`"NaN"`, `"Infinity"`, `"-Infinity"`, `"nan"`, `"inf"`, `"SEVERITY_NUMBER_FATAL4"`, `"SEVERITY_NUMBER_FATAL5"`,
		`"18446744073709551615"`, `"-9223372036854775808"`, `true`, `{}`, `[]`, `"1"2`,
		`"AQI="`, `"AQI"`, `"AQ-_"`, `"AQ+/"`, `"AQ=="`, `"A"`, `"AQI=="`, `"AQ\nI="`, `"AQ I="`, `"-_8="`, `"+/8"`, `"AQ-/"`,
		`"AQ\u003d\u003d"`, `"x\ud83d\ude00"`, `"\u00e9\t"`, `false`, `null`, `tru`, `"\x"`,
	}
	fields := []struct {
		name string
		wrap func(v string) string
	}{
		{"timeUnixNano", func(v string) string { return `{"timeUnixNano":` + v + `}` }},
		{"observedTimeUnixNano", func(v string) string { return `{"observedTimeUnixNano":` + v + `}` }},
		{"severityNumber", func(v string) string { return `{"severityNumber":` + v + `}` }},
		{"flags", func(v string) string { return `{"flags":` + v + `}` }},
		{"droppedAttributesCount", func(v string) string { return `{"droppedAttributesCount":` + v + `}` }},
		{"intValue", func(v string) string { return `{"body":{"intValue":` + v + `}}` }},
		{"doubleValue", func(v string) string { return `{"body":{"doubleValue":` + v + `}}` }},
		{"bytesValue", func(v string) string { return `{"body":{"bytesValue":` + v + `}}` }},
		{"boolValue", func(v string) string { return `{"body":{"boolValue":` + v + `}}` }},
		{"stringValue", func(v string) string { return `{"body":{"stringValue":` + v + `}}` }},
		{"key", func(v string) string { return `{"attributes":[{"key":` + v + `}]}` }},
		{"severityText", func(v string) string { return `{"severityText":` + v + `}` }},
		{"resource.droppedAttributesCount", nil},
	}
	for _, fd := range fields {
		for _, form := range forms {
			in := `{"resourceLogs":[{"resource":{"droppedAttributesCount":` + form + `},"scopeLogs":[{"logRecords":[{}]}]}]}`
			if fd.wrap != nil {
				in = `{"resourceLogs":[{"scopeLogs":[{"logRecords":[` + fd.wrap(form) + `]}]}]}`
			}
			a := NewArena()
			recs, err := a.DecodeOTLPJSON([]byte(in), Referenced, nil)
			m := &logs.LogsData{}
			// Without DiscardUnknown: an unknown enum name is an error.
			perr := protojson.Unmarshal([]byte(in), m)
			if (err == nil) != (perr == nil) {
				t.Errorf("%s %s: ours %v, protojson %v", fd.name, form, err, perr)
				continue
			}
			if err != nil {
				continue
			}
			wv, wt := oracleViews(m)
			if gv, gt := recordViews(recs); fmt.Sprint(gv, gt) != fmt.Sprint(wv, wt) {
				t.Errorf("%s %s:\n ours %v %v\n protojson %v %v", fd.name, form, gv, gt, wv, wt)
			}
		}
	}
}

func TestDecodeOTLPJSONErrors(t *testing.T) {
	wrap := func(lr string) string {
		return `{"resourceLogs":[{"scopeLogs":[{},{"logRecords":[{},{},{},` + lr + `]}]}]}`
	}
	const at = "resourceLogs[0].scopeLogs[1].logRecords[3]"
	deep := `{"stringValue":"x"}`
	for range 200 {
		deep = `{"arrayValue":{"values":[` + deep + `]}}`
	}
	for _, tt := range []struct {
		name, in string
		err      error
		detail   string // the error's detail
		offset   int    // -1: not checked
	}{
		{"empty", ``, ErrTruncated, "expected an object", 0},
		{"not an object", `[1]`, ErrNotMap, "an OTLP/JSON request is an object", 0},
		{"not JSON", `hello`, ErrSyntax, "", 0},
		{"trailing", `{} {}`, ErrTrailing, "", 3},
		{"truncated", `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"ab`, ErrTruncated,
			"resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue: in a string", -1},
		{"truncated object", `{"resourceLogs":[{"scopeLogs":[`, ErrTruncated, "resourceLogs[0].scopeLogs[0]: expected an object", 31},
		{"truncated literal", `{"resourceLogs":nul`, ErrTruncated, "resourceLogs: in null", -1},
		{"string for int", wrap(`{"flags":"x"}`), ErrFieldType, at + `.flags: "x", not a uint32`, 67},
		{"fraction", wrap(`{"timeUnixNano":1.5}`), ErrFieldType, at + ".timeUnixNano: 1.5, not a uint64", -1},
		{"negative uint", wrap(`{"droppedAttributesCount":-1}`), ErrNumberRange, at + ".droppedAttributesCount: -1, not a uint32", -1},
		{"uint32 range", wrap(`{"flags":4294967296}`), ErrNumberRange, at + ".flags: 4294967296, not a uint32", -1},
		{"int64 range", wrap(`{"body":{"intValue":"9223372036854775808"}}`), ErrNumberRange, at + `.body.intValue: "9223372036854775808", not an int64`, -1},
		{"double range", wrap(`{"body":{"doubleValue":1e400}}`), ErrNumberRange, at + ".body.doubleValue: 1e400, not a double", -1},
		{"number for string", wrap(`{"severityText":5}`), ErrFieldType, at + ".severityText: a number, not a string", -1},
		{"object for string", wrap(`{"body":{"stringValue":{}}}`), ErrFieldType, at + ".body.stringValue: an object, not a string", -1},
		{"string for bool", wrap(`{"body":{"boolValue":"true"}}`), ErrFieldType, at + ".body.boolValue: a string, not a bool", -1},
		{"string for array", `{"resourceLogs":"x"}`, ErrFieldType, "resourceLogs: a string, not an array", 16},
		{"null element", `{"resourceLogs":[null]}`, ErrFieldType, "resourceLogs[0]: null, not an object", 17},
		{"bad enum name", wrap(`{"severityNumber":"INFO"}`), ErrFieldType, at + `.severityNumber: "INFO", not a SeverityNumber`, -1},
		{"short trace id", wrap(`{"traceId":"000102030405060708090a0b0c0d0e"}`), ErrIDLength, at + ".traceId: 15 bytes, not 16", -1},
		{"odd span id", wrap(`{"spanId":"000000000000001"}`), ErrIDLength, at + ".spanId: 15 hex digits, not 16", -1},
		{"non-hex id", wrap(`{"spanId":"000000000000000g"}`), ErrSyntax, at + `.spanId: "000000000000000g" is not hex`, -1},
		{"base64 id", wrap(`{"spanId":"AAAAAAAAAAE="}`), ErrSyntax, at + `.spanId: "AAAAAAAAAAE=" is not hex`, -1},
		{"bad base64", wrap(`{"body":{"bytesValue":"a*=="}}`), ErrSyntax, at + ".body.bytesValue: not base64", -1},
		{"invalid UTF-8", wrap(`{"severityText":"a` + "\xff" + `"}`), ErrInvalidUTF8, at + ".severityText", -1},
		{"invalid UTF-8 key", wrap(`{"attributes":[{"key":"` + "\xc3" + `","value":{}}]}`), ErrInvalidUTF8, at + ".attributes[0].key", -1},
		{"invalid UTF-8 unknown", `{"x` + "\xe2\x82" + `":1}`, ErrInvalidUTF8, "", -1},
		{"duplicate field", wrap(`{"body":{},"body":{}}`), ErrSyntax, at + ".body: duplicate field", -1},
		{"duplicate by both names", wrap(`{"timeUnixNano":"1","time_unix_nano":"1"}`), ErrSyntax, at + ".timeUnixNano: duplicate field", -1},
		{"two values", wrap(`{"body":{"stringValue":"a","intValue":"1"}}`), ErrSyntax, at + ".body.intValue: a second value in one AnyValue", -1},
		{"too deep", wrap(`{"body":` + deep + `}`), ErrDepth, at + ".body.arrayValue.values[0].arrayValue.values[0].arrayValue", -1},
		{"too deep unknown", `{"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, ErrDepth, "x: more than 128 levels", -1},
		{"syntax", wrap(`{"body" {}}`), ErrSyntax, at + ": expected ':'", -1},
		{"bad number", wrap(`{"flags":01}`), ErrSyntax, at + ": expected ',' or '}'", -1},
		{"trailing comma", `{"resourceLogs":[],}`, ErrSyntax, "expected a string key", 19},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := NewArena()
			keep, _ := a.DecodeOTLPJSON([]byte(wrap("{}")), Referenced, nil)
			nodes, slab, bufs, nrec := len(a.nodes), len(a.slab), len(a.bufs), a.nrec
			recs, err := a.DecodeOTLPJSON([]byte(tt.in), Owned, keep)
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.detail != "" && de.Detail != tt.detail && !strings.HasPrefix(de.Detail, tt.detail+": ") &&
				!(tt.err == ErrDepth && strings.HasPrefix(de.Detail, tt.detail) && strings.HasSuffix(de.Detail, ": more than 128 levels")) {
				t.Errorf("detail %q, want %q", de.Detail, tt.detail)
			}
			if tt.offset >= 0 && de.Offset != tt.offset {
				t.Errorf("offset %d, want %d", de.Offset, tt.offset)
			}
			if de.Offset < 0 || de.Offset > len(tt.in) {
				t.Errorf("offset %d out of the input", de.Offset)
			}
			if len(recs) != len(keep) || len(a.nodes) != nodes || len(a.slab) != slab || len(a.bufs) != bufs || a.nrec != nrec {
				t.Error("a failed decode changed the arena")
			}
		})
	}
}

// TestDecodeOTLPJSONDepth: the nesting limit is the protobuf decoder's.
func TestDecodeOTLPJSONDepth(t *testing.T) {
	for _, inBody := range []bool{true, false} {
		for depth := 1; depth <= 8; depth++ {
			v := &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: "x"}}
			for range depth {
				if depth%2 == 0 {
					v = &common.AnyValue{Value: &common.AnyValue_ArrayValue{ArrayValue: &common.ArrayValue{Values: []*common.AnyValue{v}}}}
				} else {
					v = &common.AnyValue{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{Values: []*common.KeyValue{{Key: "k", Value: v}}}}}
				}
			}
			lr := &logs.LogRecord{Body: v}
			if !inBody {
				lr = &logs.LogRecord{Attributes: []*common.KeyValue{{Key: "a", Value: v}}}
			}
			req := &logs.LogsData{ResourceLogs: []*logs.ResourceLogs{{ScopeLogs: []*logs.ScopeLogs{{LogRecords: []*logs.LogRecord{lr}}}}}}
			a := NewArena()
			a.Limits.MaxDepth = 5
			_, perr := a.DecodeOTLP(marshalOracle(t, req), Referenced, nil)
			_, jerr := a.DecodeOTLPJSON(marshalOracleJSON(t, req, protojson.MarshalOptions{}), Referenced, nil)
			if (perr == nil) != (jerr == nil) || jerr != nil && !errors.Is(jerr, ErrDepth) {
				t.Errorf("body %v, depth %d: protobuf %v, JSON %v", inBody, depth, perr, jerr)
			}
		}
	}
}
