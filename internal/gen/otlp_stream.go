package gen

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/policyrun/policyrun/record"
)

// WriteOTLP writes the first n records of seed as requests of OTLPBatch
// (the requests of OTLPRequests): in protobuf each preceded by its length
// (4 bytes big-endian), the stream that bench otlp replays; in OTLP/JSON
// one a line.
func WriteOTLP(w io.Writer, n int, seed uint64, asJSON bool) error {
	g := NewOTLP(seed)
	a := record.NewArena()
	var e record.OTLPEncoder
	var recs []*record.Record
	var buf []byte
	bw := bufio.NewWriterSize(w, 1<<16)
	for i := 0; i < n; i += OTLPBatch {
		a.Reset()
		recs = g.Records(a, min(OTLPBatch, n-i), recs[:0])
		if asJSON {
			buf = append(e.AppendJSON(buf[:0], recs), '\n')
		} else {
			buf = e.AppendProto(append(buf[:0], 0, 0, 0, 0), recs)
			binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
		}
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}
