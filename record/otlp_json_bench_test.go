package record

import (
	"testing"

	logs "go.opentelemetry.io/proto/otlp/logs/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

func TestOTLPJSONAllocs(t *testing.T) {
	req := genOracleRequest(1, 100, 7)
	js := marshalOracleJSON(t, req, protojson.MarshalOptions{})
	a := NewArena()
	recs, err := a.DecodeOTLPJSON(js, Referenced, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := a.DecodeJSON([]byte(`{"msg":"plain","n":1}`), Referenced)
	recs = append(recs, plain)
	var e OTLPEncoder
	out := e.AppendJSON(nil, recs)
	if n := testing.AllocsPerRun(100, func() { out = e.AppendJSON(out[:0], recs) }); n != 0 {
		t.Errorf("AppendJSON: %v allocations, want 0", n)
	}
	var dst []*Record
	b := NewArena()
	if n := testing.AllocsPerRun(100, func() {
		b.Reset()
		dst, _ = b.DecodeOTLPJSON(js, Referenced, dst[:0])
	}); n != 0 {
		t.Errorf("DecodeOTLPJSON: %v allocations, want 0", n)
	}
	view := []byte(`{"time":"2026-12-01T10:00:00Z","body":"x","attributes":{"a":1},"trace_id":"0102030405060708090A0B0C0D0E0F10","resource":{"attributes":{}}}`)
	if n := testing.AllocsPerRun(100, func() {
		b.Reset()
		_, _ = b.DecodeOTLPView(view, Referenced)
	}); n != 0 {
		t.Errorf("DecodeOTLPView: %v allocations, want 0", n)
	}
}

func BenchmarkOTLPJSON(b *testing.B) {
	req := genOracleRequest(1, 100, 100)
	js := marshalOracleJSON(b, req, protojson.MarshalOptions{})
	a := NewArena()
	var recs []*Record
	b.Run("decode/arena", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(js)))
		for b.Loop() {
			a.Reset()
			recs, _ = a.DecodeOTLPJSON(js, Referenced, recs[:0])
		}
	})
	pj, _ := protojson.Marshal(req)
	b.Run("decode/protojson", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(pj)))
		for b.Loop() {
			_ = protojson.Unmarshal(pj, &logs.LogsData{})
		}
	})
	a.Reset()
	recs, _ = a.DecodeOTLPJSON(js, Referenced, recs[:0])
	var e OTLPEncoder
	var out []byte
	b.Run("encode/arena", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out = e.AppendJSON(out[:0], recs)
		}
	})
	b.Run("encode/protojson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, _ = protojson.MarshalOptions{}.MarshalAppend(out[:0], req)
		}
	})
}
