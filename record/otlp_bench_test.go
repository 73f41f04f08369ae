package record_test

import (
	"encoding/hex"
	"testing"

	common "go.opentelemetry.io/proto/otlp/common/v1"
	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	resource "go.opentelemetry.io/proto/otlp/resource/v1"
	"google.golang.org/protobuf/proto"

	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/record"
)

// The OTLP codecs against protobuf-go's generated types (the oracle of
// otlp_oracle_test.go) on the B5 requests of internal/gen: 100 records of
// one resource and 3 scopes each. This file is package record_test because
// internal/gen imports record.

const benchRequests = 8 // distinct requests, used in turn

func benchInput(tb testing.TB) (reqs [][]byte, recs [][]*record.Record) {
	reqs = gen.OTLPRequests(benchRequests*gen.OTLPBatch, 1)
	for _, req := range reqs {
		a := record.NewArena()
		rs, err := a.DecodeOTLP(req, record.Referenced, nil)
		if err != nil || len(rs) != gen.OTLPBatch {
			tb.Fatalf("%d records: %v", len(rs), err)
		}
		// Encoded from their views: a record decoded clean and not
		// edited is written as its bytes (a copy), which is not the
		// encoder. Setting the time, then setting it back, drops them.
		for _, r := range rs {
			t := r.Time()
			r.SetTime(t + 1)
			r.SetTime(t)
		}
		recs = append(recs, rs)
	}
	return reqs, recs
}

// BenchmarkOTLP: decode starts from the request's bytes on both sides;
// encode starts from the same decoded records on both sides and includes
// the regrouping (protogo: records → generated structs, grouped, then
// proto.Marshal). ns/op is per request of 100 records.
func BenchmarkOTLP(b *testing.B) {
	reqs, recs := benchInput(b)
	perRecord := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*gen.OTLPBatch), "ns/record")
	}
	// decode runs one of the arena's decoders over the requests in turn.
	decodeOf := func(b *testing.B, reqs [][]byte, dec func(a *record.Arena, req []byte, out []*record.Record) ([]*record.Record, error)) {
		a := record.NewArena()
		var out []*record.Record
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			a.Reset()
			var err error
			if out, err = dec(a, reqs[i%benchRequests], out[:0]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		perRecord(b)
	}
	decode := func(b *testing.B, dec func(a *record.Arena, req []byte, out []*record.Record) ([]*record.Record, error)) {
		decodeOf(b, reqs, dec)
	}
	b.Run("decode/arena", func(b *testing.B) {
		decode(b, func(a *record.Arena, req []byte, out []*record.Record) ([]*record.Record, error) {
			return a.DecodeOTLP(req, record.Referenced, out)
		})
	})
	// Projections (DecodeOTLPProjection): B5's ingest only (no key), its
	// "add an attribute" (that attribute alone) and all the attributes.
	for _, fc := range benchFields {
		b.Run("decode/fields-"+fc.name, func(b *testing.B) {
			decode(b, func(a *record.Arena, req []byte, out []*record.Record) ([]*record.Record, error) {
				return a.DecodeOTLPProjection(req, record.Referenced, out, fc.proj)
			})
		})
		// The same on the LogRecords' bytes, for an output that encodes
		// protobuf (OTLPProjection.Wire).
		b.Run("decode/wire-"+fc.name, func(b *testing.B) {
			proj := fc.proj
			proj.Wire = true
			decode(b, func(a *record.Arena, req []byte, out []*record.Record) ([]*record.Record, error) {
				return a.DecodeOTLPProjection(req, record.Referenced, out, proj)
			})
		})
	}
	// OTLP/JSON of the same requests, as the arena's encoder writes it
	// (the layout of OTLP/JSON encoders: no space, key before value).
	jsonReqs := make([][]byte, len(recs))
	for i, rs := range recs {
		var e record.OTLPEncoder
		jsonReqs[i] = e.AppendJSON(nil, rs)
	}
	b.Run("decode/json", func(b *testing.B) {
		decodeOf(b, jsonReqs, func(a *record.Arena, req []byte, out []*record.Record) ([]*record.Record, error) {
			return a.DecodeOTLPJSON(req, record.Referenced, out)
		})
	})
	b.Run("decode/protogo", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m := &logs.LogsData{}
			if err := proto.Unmarshal(reqs[i%benchRequests], m); err != nil {
				b.Fatal(err)
			}
			i++
		}
		perRecord(b)
	})
	b.Run("encode/arena", func(b *testing.B) {
		var e record.OTLPEncoder
		var out []byte
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			out = e.AppendProto(out[:0], recs[i%benchRequests])
			i++
		}
		perRecord(b)
	})
	b.Run("encode/protogo", func(b *testing.B) {
		var c protoConverter
		var out []byte
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var err error
			if out, err = (proto.MarshalOptions{}).MarshalAppend(out[:0], c.request(recs[i%benchRequests])); err != nil {
				b.Fatal(err)
			}
			i++
		}
		perRecord(b)
	})
}

var benchFields = []struct {
	name string
	proj record.OTLPProjection
}{
	{"none", record.OTLPProjection{}},
	{"added", record.OTLPProjectionOf([]record.Path{{record.KeyStep("attributes"), record.KeyStep("bench.added")}})},
	{"attributes", record.OTLPProjectionOf([]record.Path{{record.KeyStep("attributes")}})},
}

// TestOTLPCodecAllocs: in steady state, a decode into a reset arena and an
// encode with a reused encoder allocate nothing.
func TestOTLPCodecAllocs(t *testing.T) {
	reqs, recs := benchInput(t)
	a := record.NewArena()
	var out []*record.Record
	i := 0
	if n := testing.AllocsPerRun(50, func() {
		a.Reset()
		out, _ = a.DecodeOTLP(reqs[i%benchRequests], record.Referenced, out[:0])
		i++
	}); n != 0 {
		t.Errorf("DecodeOTLP: %v allocs per request", n)
	}
	for _, fc := range benchFields {
		if n := testing.AllocsPerRun(50, func() {
			a.Reset()
			out, _ = a.DecodeOTLPProjection(reqs[i%benchRequests], record.Referenced, out[:0], fc.proj)
			i++
		}); n != 0 {
			t.Errorf("DecodeOTLPProjection %s: %v allocs per request", fc.name, n)
		}
	}
	var e record.OTLPEncoder
	var buf []byte
	if n := testing.AllocsPerRun(50, func() {
		buf = e.AppendProto(buf[:0], recs[i%benchRequests])
		i++
	}); n != 0 {
		t.Errorf("AppendProto: %v allocs per request", n)
	}
}

// TestProtoConverter checks the baseline: its request is the one
// AppendProto writes.
func TestProtoConverter(t *testing.T) {
	_, recs := benchInput(t)
	var c protoConverter
	var e record.OTLPEncoder
	for _, rs := range recs[:2] {
		want := &logs.LogsData{}
		if err := proto.Unmarshal(e.AppendProto(nil, rs), want); err != nil {
			t.Fatal(err)
		}
		if got := c.request(rs); !proto.Equal(got, want) {
			t.Fatalf("converted\n%v\nwant\n%v", got, want)
		}
	}
}

// protoConverter turns records into the generated structs, regrouped as
// OTLPEncoder does: records that share a resource (or scope) Value join
// its group without a comparison; another Value is converted and compared
// with the groups so far (proto.Equal).
type protoConverter struct {
	resByValue   map[valueKey]int
	scopeByValue map[scopeKey]int
}

type valueKey struct {
	a *record.Arena
	v record.Value
}

type scopeKey struct {
	res int
	valueKey
}

func (c *protoConverter) request(recs []*record.Record) *logs.LogsData {
	if c.resByValue == nil {
		c.resByValue, c.scopeByValue = map[valueKey]int{}, map[scopeKey]int{}
	}
	clear(c.resByValue)
	clear(c.scopeByValue)
	req := &logs.LogsData{}
	for _, r := range recs {
		a := r.Arena()
		rv, _ := a.Key(r.Root(), []byte("resource"))
		sv, _ := a.Key(r.Root(), []byte("scope"))
		ri, ok := c.resByValue[valueKey{a, rv}]
		if !ok {
			ri = c.resourceGroup(req, a, rv)
			c.resByValue[valueKey{a, rv}] = ri
		}
		rl := req.ResourceLogs[ri]
		sk := scopeKey{ri, valueKey{a, sv}}
		si, ok := c.scopeByValue[sk]
		if !ok {
			si = c.scopeGroup(rl, a, sv)
			c.scopeByValue[sk] = si
		}
		sl := rl.ScopeLogs[si]
		sl.LogRecords = append(sl.LogRecords, logRecord(r))
	}
	return req
}

func (c *protoConverter) resourceGroup(req *logs.LogsData, a *record.Arena, m record.Value) int {
	rl := &logs.ResourceLogs{
		Resource: &resource.Resource{
			Attributes:             keyValues(a, get(a, m, "attributes")),
			DroppedAttributesCount: uint32(get(a, m, "dropped_attributes_count").Int()),
		},
		SchemaUrl: a.Str(get(a, m, "schema_url")),
	}
	return groupIndex(&req.ResourceLogs, rl, (*logs.ResourceLogs).GetResource)
}

func (c *protoConverter) scopeGroup(rl *logs.ResourceLogs, a *record.Arena, m record.Value) int {
	sl := &logs.ScopeLogs{
		Scope: &common.InstrumentationScope{
			Name:                   a.Str(get(a, m, "name")),
			Version:                a.Str(get(a, m, "version")),
			Attributes:             keyValues(a, get(a, m, "attributes")),
			DroppedAttributesCount: uint32(get(a, m, "dropped_attributes_count").Int()),
		},
		SchemaUrl: a.Str(get(a, m, "schema_url")),
	}
	return groupIndex(&rl.ScopeLogs, sl, (*logs.ScopeLogs).GetScope)
}

// groupIndex returns the index of the first of groups with the head
// (resource or scope) and schema URL of a new group g, appending g when
// there is none.
func groupIndex[G interface{ GetSchemaUrl() string }, H proto.Message](groups *[]G, g G, head func(G) H) int {
	for i, h := range *groups {
		if proto.Equal(head(h), head(g)) && h.GetSchemaUrl() == g.GetSchemaUrl() {
			return i
		}
	}
	*groups = append(*groups, g)
	return len(*groups) - 1
}

func get(a *record.Arena, m record.Value, key string) record.Value {
	v, _ := a.Key(m, []byte(key))
	return v
}

// logRecord converts an OTLP record (as decoded: no edits to undo).
func logRecord(r *record.Record) *logs.LogRecord {
	a := r.Arena()
	lr := &logs.LogRecord{}
	var observed int64
	for it := a.Iter(r.Root()); it.Next(); {
		v := it.Value()
		switch a.Str(it.Key()) {
		case "body":
			lr.Body = anyValue(a, v)
		case "attributes":
			lr.Attributes = keyValues(a, v)
		case "severity_text":
			lr.SeverityText = a.Str(v)
		case "severity_number":
			lr.SeverityNumber = logs.SeverityNumber(v.Int())
		case "observed_time":
			observed = v.Time()
			lr.ObservedTimeUnixNano = uint64(observed)
		case "trace_id":
			lr.TraceId, _ = hex.DecodeString(a.Str(v))
		case "span_id":
			lr.SpanId, _ = hex.DecodeString(a.Str(v))
		case "flags":
			lr.Flags = uint32(v.Int())
		case "event_name":
			lr.EventName = a.Str(v)
		case "dropped_attributes_count":
			lr.DroppedAttributesCount = uint32(v.Int())
		}
	}
	if r.Time() != observed {
		lr.TimeUnixNano = uint64(r.Time())
	}
	return lr
}

func keyValues(a *record.Arena, m record.Value) []*common.KeyValue {
	if a.Len(m) == 0 {
		return nil
	}
	out := make([]*common.KeyValue, 0, a.Len(m))
	for it := a.Iter(m); it.Next(); {
		out = append(out, &common.KeyValue{Key: a.Str(it.Key()), Value: anyValue(a, it.Value())})
	}
	return out
}

func anyValue(a *record.Arena, v record.Value) *common.AnyValue {
	switch v.Kind() {
	case record.String:
		return &common.AnyValue{Value: &common.AnyValue_StringValue{StringValue: a.Str(v)}}
	case record.Bool:
		return &common.AnyValue{Value: &common.AnyValue_BoolValue{BoolValue: v.Bool()}}
	case record.Int:
		return &common.AnyValue{Value: &common.AnyValue_IntValue{IntValue: v.Int()}}
	case record.Float:
		return &common.AnyValue{Value: &common.AnyValue_DoubleValue{DoubleValue: v.Float()}}
	case record.Bytes:
		return &common.AnyValue{Value: &common.AnyValue_BytesValue{BytesValue: a.Bytes(v)}}
	case record.Array:
		arr := &common.ArrayValue{}
		for it := a.Iter(v); it.Next(); {
			arr.Values = append(arr.Values, anyValue(a, it.Value()))
		}
		return &common.AnyValue{Value: &common.AnyValue_ArrayValue{ArrayValue: arr}}
	case record.Map:
		return &common.AnyValue{Value: &common.AnyValue_KvlistValue{KvlistValue: &common.KeyValueList{Values: keyValues(a, v)}}}
	}
	return &common.AnyValue{}
}
