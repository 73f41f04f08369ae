package otlptest

import (
	"fmt"

	"github.com/policyrun/policyrun/record"
)

// Request is one protobuf OTLP request of the records {"n": from} …
// {"n": from+n-1} as bodies: what a Receiver counts, by the default Key.
func Request(from, n int) []byte {
	a := record.NewArena()
	recs := make([]*record.Record, n)
	for i := range n {
		r, err := a.DecodeJSON(fmt.Appendf(nil, `{"n":%d}`, from+i), record.Owned)
		if err != nil {
			panic(err) // a record of one number always decodes
		}
		recs[i] = r
	}
	var enc record.OTLPEncoder
	return enc.AppendProto(nil, recs)
}
