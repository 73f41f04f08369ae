package record

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"
)

// The oracle: go.opentelemetry.io/proto/otlp's generated types, which this
// file turns into the view a policy sees, to compare the codecs with.
// logs.LogsData stands for ExportLogsServiceRequest: the two messages are
// one on the wire (field 1, repeated ResourceLogs), and the collector
// package would bring gRPC into the module for nothing.

// sameAsOracle fails the test unless recs are, in order, the log records
// of req as the oracle sees them: each one's view and time.
func sameAsOracle(t *testing.T, req *logs.LogsData, recs []*Record) {
	t.Helper()
	wantV, wantT := oracleViews(req)
	gotV, gotT := recordViews(recs)
	if len(gotV) != len(wantV) {
		t.Fatalf("%d records, want %d", len(gotV), len(wantV))
	}
	for i := range wantV {
		if !reflect.DeepEqual(gotV[i], wantV[i]) || gotT[i] != wantT[i] {
			t.Fatalf("record %d:\n got %v %d\nwant %v %d", i, gotV[i], gotT[i], wantV[i], wantT[i])
		}
	}
}

// oracleViews returns, for each log record of req in order, its view and
// its time, as Record.ToGo and Record.Time give them.
func oracleViews(req *logs.LogsData) (views []map[string]any, times []int64) {
	for _, rl := range req.GetResourceLogs() {
		res := map[string]any{
			"attributes":               oracleKVs(rl.GetResource().GetAttributes()),
			"dropped_attributes_count": int64(rl.GetResource().GetDroppedAttributesCount()),
			"schema_url":               rl.GetSchemaUrl(),
		}
		for _, sl := range rl.GetScopeLogs() {
			sc := sl.GetScope()
			scope := map[string]any{
				"name": sc.GetName(), "version": sc.GetVersion(),
				"attributes":               oracleKVs(sc.GetAttributes()),
				"dropped_attributes_count": int64(sc.GetDroppedAttributesCount()),
				"schema_url":               sl.GetSchemaUrl(),
			}
			for _, lr := range sl.GetLogRecords() {
				v := map[string]any{
					"attributes":               oracleKVs(lr.GetAttributes()),
					"severity_text":            lr.GetSeverityText(),
					"severity_number":          int64(lr.GetSeverityNumber()),
					"observed_time":            time.Unix(0, int64(lr.GetObservedTimeUnixNano())).UTC(),
					"trace_id":                 hex.EncodeToString(lr.GetTraceId()),
					"span_id":                  hex.EncodeToString(lr.GetSpanId()),
					"flags":                    int64(lr.GetFlags()),
					"event_name":               lr.GetEventName(),
					"dropped_attributes_count": int64(lr.GetDroppedAttributesCount()),
					"resource":                 res,
					"scope":                    scope,
				}
				if lr.Body != nil {
					v["body"] = oracleAny(lr.Body)
				}
				t := int64(lr.GetTimeUnixNano())
				if t == 0 {
					t = int64(lr.GetObservedTimeUnixNano())
				}
				views, times = append(views, v), append(times, t)
			}
		}
	}
	return views, times
}

func oracleKVs(kvs []*common.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		m[kv.GetKey()] = oracleAny(kv.GetValue())
	}
	return m
}

func oracleAny(v *common.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_BoolValue:
		return x.BoolValue
	case *common.AnyValue_IntValue:
		return x.IntValue
	case *common.AnyValue_DoubleValue:
		return x.DoubleValue
	case *common.AnyValue_BytesValue:
		if x.BytesValue == nil {
			return []byte{}
		}
		return x.BytesValue
	case *common.AnyValue_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.GetValues() {
			out = append(out, oracleAny(e))
		}
		return out
	case *common.AnyValue_KvlistValue:
		return oracleKVs(x.KvlistValue.GetValues())
	}
	return nil
}

// genOracleRequest makes a request of n records in groups of groupSize,
// with every kind of AnyValue, ids, and resources and scopes that repeat.
func genOracleRequest(seed uint64, n, groupSize int) *logs.LogsData {
	rng := rand.New(rand.NewPCG(seed, 7))
	var anyv func(depth int) *common.AnyValue
	anyv = func(depth int) *common.AnyValue {
		k := rng.IntN(8)
		if depth > 2 && k >= 5 {
			k = 0
		}
		switch k {
		case 0:
			return &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: fmt.Sprintf("s%d é", rng.IntN(100))}}
		case 1:
			return &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: rng.IntN(2) == 1}}
		case 2:
			return &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: rng.Int64() - 1<<62}}
		case 3:
			return &common.AnyValue{Value: &common.AnyValue_DoubleValue{DoubleValue: rng.Float64() * 1e6}}
		case 4:
			return &common.AnyValue{Value: &common.AnyValue_BytesValue{BytesValue: []byte{byte(rng.IntN(256)), 0, 0xff}}}
		case 5:
			a := &common.ArrayValue{}
			for range rng.IntN(4) {
				a.Values = append(a.Values, anyv(depth+1))
			}
			return &common.AnyValue{Value: &common.AnyValue_ArrayValue{ArrayValue: a}}
		case 6:
			return &common.AnyValue{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{Values: kvs(rng, anyv, depth+1, rng.IntN(4))}}}
		}
		return &common.AnyValue{}
	}
	req := &logs.LogsData{}
	for i := 0; i < n; i += groupSize {
		g := len(req.ResourceLogs) % 3 // resources repeat: regrouping merges them
		rl := &logs.ResourceLogs{
			Resource:  &resource.Resource{Attributes: []*common.KeyValue{{Key: "service.name", Value: &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: fmt.Sprintf("svc-%d", g)}}}}},
			SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
		}
		sl := &logs.ScopeLogs{Scope: &common.InstrumentationScope{Name: "lib", Version: fmt.Sprint(g % 2)}}
		for j := i; j < min(n, i+groupSize); j++ {
			lr := &logs.LogRecord{
				TimeUnixNano:         uint64(1700000000000000000 + j),
				ObservedTimeUnixNano: uint64(1700000000000000500 + j),
				SeverityNumber:       logs.SeverityNumber(rng.IntN(25)),
				SeverityText:         "INFO",
				Body:                 anyv(0),
				Attributes:           kvs(rng, anyv, 0, 1+rng.IntN(10)),
				Flags:                uint32(rng.IntN(2)),
				EventName:            "",
			}
			if j%4 == 0 {
				lr.TimeUnixNano = 0
				lr.Body = nil
			}
			if j%3 == 0 {
				lr.TraceId = make([]byte, 16)
				lr.SpanId = make([]byte, 8)
				for k := range lr.TraceId {
					lr.TraceId[k] = byte(rng.IntN(256))
				}
				lr.SpanId[7] = 0xab
			}
			sl.LogRecords = append(sl.LogRecords, lr)
		}
		rl.ScopeLogs = append(rl.ScopeLogs, sl)
		req.ResourceLogs = append(req.ResourceLogs, rl)
	}
	return req
}

func kvs(rng *rand.Rand, anyv func(int) *common.AnyValue, depth, n int) []*common.KeyValue {
	var out []*common.KeyValue
	for i := range n {
		out = append(out, &common.KeyValue{Key: fmt.Sprintf("k%d", i), Value: anyv(depth)})
	}
	return out
}

func marshalOracle(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordViews is what the arena's records hold, in the oracle's terms.
func recordViews(recs []*Record) (views []map[string]any, times []int64) {
	for _, r := range recs {
		views, times = append(views, r.ToGo()), append(times, r.Time())
	}
	return views, times
}

func TestDecodeOTLPMatchesOracle(t *testing.T) {
	for _, tt := range []struct {
		name      string
		n, groups int
	}{{"one", 1, 1}, {"b5", 100, 100}, {"groups", 60, 7}, {"empty", 0, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []Mode{Referenced, Owned} {
				req := genOracleRequest(1, tt.n, tt.groups)
				b := marshalOracle(t, req)
				a := NewArena()
				recs, err := a.DecodeOTLP(b, mode, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameAsOracle(t, req, recs)
			}
		})
	}
}

// flatten lists each record's view with its time, in a canonical order, so
// that a request and its regrouped encoding compare as sets of records
// that each keep their own resource and scope. The views print as Go
// syntax (%#v), which tells bytes from strings and nil from empty.
// groupShape is how many records each ScopeLogs of each ResourceLogs has.
func groupShape(m *logs.LogsData) [][]int {
	var shape [][]int
	for _, rl := range m.GetResourceLogs() {
		var scopes []int
		for _, sl := range rl.GetScopeLogs() {
			scopes = append(scopes, len(sl.GetLogRecords()))
		}
		shape = append(shape, scopes)
	}
	return shape
}

// sameRecordSet fails the test unless got holds the log records of want,
// however grouped and ordered, as the oracle sees them.
func sameRecordSet(t *testing.T, what string, got, want *logs.LogsData) {
	t.Helper()
	if !reflect.DeepEqual(flatten(oracleViews(got)), flatten(oracleViews(want))) {
		t.Fatalf("%s changed the records", what)
	}
}

func flatten(views []map[string]any, times []int64) []string {
	var out []string
	for i, v := range views {
		out = append(out, fmt.Sprintf("%d %#v", times[i], v))
	}
	sort.Strings(out)
	return out
}

func TestOTLPRoundTrip(t *testing.T) {
	for _, groups := range []int{1, 5, 100} {
		req := genOracleRequest(uint64(groups), 100, groups)
		a := NewArena()
		recs, err := a.DecodeOTLP(marshalOracle(t, req), Referenced, nil)
		if err != nil {
			t.Fatal(err)
		}
		var e OTLPEncoder
		out := e.AppendProto(nil, recs)
		back := &logs.LogsData{}
		if err := proto.Unmarshal(out, back); err != nil {
			t.Fatal(err)
		}
		sameRecordSet(t, fmt.Sprintf("groups %d: round trip", groups), back, req)
		// Regrouped: no two groups equal (3 resources, 2 scope versions
		// in genOracleRequest).
		if n := len(back.ResourceLogs); n != min(3, len(req.ResourceLogs)) {
			t.Errorf("groups %d: %d resource groups, want %d", groups, n, min(3, len(req.ResourceLogs)))
		}
		for _, rl := range back.ResourceLogs {
			if len(rl.ScopeLogs) != 1 {
				t.Errorf("groups %d: %d scope groups in one resource, want 1", groups, len(rl.ScopeLogs))
			}
		}
	}
}
