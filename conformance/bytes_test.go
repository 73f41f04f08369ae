package conformance

import (
	"encoding/binary"
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestBytesAndTimestamps covers what test blocks cannot hold, since their
// inputs are JSON: msgpack bin and timestamp values, on every backend
// (docs/semantics.md, "Values and JSON").
func TestBytesAndTimestamps(t *testing.T) {
	const src = `policy "bytes"
set .t = type_of(.b)
set .s = to_string(.b)
set .eq = .b == "hi"
set .c = .b
set .tt = type_of(.ts)
set .ts2 = to_string(.ts)
set .ti = to_int(.ts) ?? 0
if is_timestamp(.ts) {
  set .f = format_time(.ts, "%F %T")
}
`
	f, info := checkPolicy(t, "bytes.policy", []byte(src))
	// {"b": bin "hi\xff", "ts": timestamp 2026-01-01T00:00:00Z}
	in := []byte{0x82, 0xa1, 'b', 0xc4, 3, 'h', 'i', 0xff, 0xa2, 't', 's', 0xd6, 0xff}
	in = binary.BigEndian.AppendUint32(in, 1767225600)
	const want = `{"b":"aGn/","ts":"2026-01-01T00:00:00Z","t":"bytes","s":"hi\ufffd","eq":false,"c":"aGn/",` +
		`"tt":"timestamp","ts2":"2026-01-01T00:00:00Z","ti":1767225600000000000,"f":"2026-01-01 00:00:00"}`
	for _, b := range backends {
		r, err := b.Load(f, info, spec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		a := record.NewArena()
		rec, _, err := a.DecodeMsgpack(in, record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := r.Run(rec); err != nil || out != (spec.Result{}) {
			t.Errorf("%s: %s %v", b.Name, out, err)
		}
		if got := string(rec.AppendJSON(nil)); got != want {
			t.Errorf("%s:\n got %s\nwant %s", b.Name, got, want)
		}
	}
}
