package record

import (
	"bytes"
	"testing"
	"unsafe"
)

// emptyLogRecordsReq is a request of n empty LogRecords in one ScopeLogs,
// two bytes each: the cheapest request per record there is.
func emptyLogRecordsReq(n int) []byte {
	lrs := bytes.Repeat(appendBytesField(nil, groupChildren, nil), n) // ScopeLogs.log_records, empty
	return appendBytesField(nil, reqResourceLogs, appendBytesField(nil, groupChildren, lrs))
}

// TestRecordFixedCost measures what a record costs in an arena (Reserved
// over the records) for the cheapest records of each decoder, and bounds
// it: the text-splice state is paid only by records decoded from text
// (docs/records.md, "A record's fixed cost").
func TestRecordFixedCost(t *testing.T) {
	const n = 50000
	req := emptyLogRecordsReq(n)
	line := []byte(flatJSON[0])
	tests := []struct {
		name   string
		decode func(a *Arena) int
		max    int // bytes per record, a little above what it was when measured
	}{
		{"otlp projection, empty LogRecords", func(a *Arena) int {
			recs, err := a.DecodeOTLPProjection(req, Referenced, nil, OTLPProjection{})
			if err != nil {
				t.Fatal(err)
			}
			return len(recs)
		}, 128},
		{"DecodeOTLP, empty LogRecords", func(a *Arena) int {
			recs, err := a.DecodeOTLP(req, Referenced, nil)
			if err != nil {
				t.Fatal(err)
			}
			return len(recs)
		}, 490},
		{"B1 JSON line", func(a *Arena) int {
			for range n {
				if _, err := a.DecodeJSON(line, Referenced); err != nil {
					t.Fatal(err)
				}
			}
			return n
		}, 600},
	}
	if s := unsafe.Sizeof(Record{}); s > 128 {
		t.Errorf("Record is %d bytes, want at most 128: what only some records use goes in textState", s)
	}
	for _, tt := range tests {
		a := NewArena()
		got := tt.decode(a)
		if got != n {
			t.Fatalf("%s: %d records, want %d", tt.name, got, n)
		}
		per := a.Reserved() / n
		t.Logf("%s: %d B/record (Record %d B)", tt.name, per, unsafe.Sizeof(Record{}))
		if per > tt.max {
			t.Errorf("%s: %d B/record, want at most %d", tt.name, per, tt.max)
		}
	}
}
