package record

import (
	"errors"
	"testing"
)

// TestOTLPMaxRecords: Limits.MaxRecords refuses a request of more
// LogRecords, in protobuf and OTLP/JSON, whatever its size, and leaves the
// arena and the list as they were.
func TestOTLPMaxRecords(t *testing.T) {
	proto := func(n int) []byte {
		lrs := make([]byte, 0, 2*n)
		for range n {
			lrs = append(lrs, 0x12, 0x00) // ScopeLogs.log_records, empty
		}
		sl := append(appendVarint([]byte{0x12}, uint64(len(lrs))), lrs...)
		return append(appendVarint([]byte{0x0a}, uint64(len(sl))), sl...)
	}
	json := func(n int) []byte {
		b := []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[`)
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "{}"...)
		}
		return append(b, "]}]}]}"...)
	}
	for _, tt := range []struct {
		name   string
		decode func(a *Arena, req []byte, dst []*Record) ([]*Record, error)
		req    func(int) []byte
	}{
		{"protobuf", func(a *Arena, req []byte, dst []*Record) ([]*Record, error) {
			return a.DecodeOTLP(req, Referenced, dst)
		}, proto},
		{"projection", func(a *Arena, req []byte, dst []*Record) ([]*Record, error) {
			return a.DecodeOTLPProjection(req, Referenced, dst, OTLPProjection{})
		}, proto},
		{"json", func(a *Arena, req []byte, dst []*Record) ([]*Record, error) {
			return a.DecodeOTLPJSON(req, Referenced, dst)
		}, json},
	} {
		a := NewArena()
		a.Limits.MaxRecords = 3
		dst := []*Record{a.NewRecord()} // a record before: not counted
		recs, err := tt.decode(a, tt.req(3), dst)
		if err != nil || len(recs) != 4 {
			t.Errorf("%s: 3 records: %d, %v", tt.name, len(recs), err)
		}
		used := a.Used()
		recs, err = tt.decode(a, tt.req(4), recs)
		if !errors.Is(err, ErrTooManyRecords) || len(recs) != 4 || a.Used() != used {
			t.Errorf("%s: 4 records: %d records, %v, arena %d -> %d", tt.name, len(recs), err, used, a.Used())
		}
	}
}
