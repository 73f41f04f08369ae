package gen

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/policyrun/policyrun/record"
)

// WriteOTLP's protobuf stream is OTLPRequests, each after its length;
// its OTLP/JSON stream the same records, a request a line.
func TestWriteOTLP(t *testing.T) {
	for _, n := range []int{0, 1, OTLPBatch, 2*OTLPBatch + 7} {
		var pb, js bytes.Buffer
		if err := WriteOTLP(&pb, n, 3, false); err != nil {
			t.Fatal(err)
		}
		if err := WriteOTLP(&js, n, 3, true); err != nil {
			t.Fatal(err)
		}
		want := OTLPRequests(n, 3)
		data := pb.Bytes()
		for i, req := range want {
			if len(data) < 4 || int(binary.BigEndian.Uint32(data)) != len(req) || !bytes.Equal(data[4:4+len(req)], req) {
				t.Fatalf("n %d: request %d differs from OTLPRequests", n, i)
			}
			data = data[4+len(req):]
		}
		if len(data) != 0 {
			t.Errorf("n %d: %d bytes after the requests", n, len(data))
		}
		lines := bytes.Split(bytes.TrimSuffix(js.Bytes(), []byte("\n")), []byte("\n"))
		if n == 0 {
			lines = nil
		}
		a := record.NewArena()
		got := 0
		for _, l := range lines {
			recs, err := a.DecodeOTLPJSON(l, record.Owned, nil)
			if err != nil {
				t.Fatalf("n %d: %v", n, err)
			}
			got += len(recs)
		}
		if len(lines) != len(want) || got != n {
			t.Errorf("n %d: %d JSON lines of %d records, want %d of %d", n, len(lines), got, len(want), n)
		}
	}
}
