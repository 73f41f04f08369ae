package record

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// pbMsg appends field num as a length-delimited field holding b.
func pbMsg(dst []byte, num protowire.Number, b []byte) []byte {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendBytes(dst, b)
}

// pbKV is a KeyValue with a string value.
func pbKV(k, v string) []byte {
	return pbMsg(pbMsg(nil, 1, []byte(k)), 2, pbMsg(nil, 1, []byte(v)))
}

// pbRequest wraps LogRecords in one ResourceLogs and ScopeLogs.
func pbRequest(lrs ...[]byte) []byte {
	var sl []byte
	sl = pbMsg(sl, 1, pbMsg(nil, 1, []byte("scope")))
	for _, lr := range lrs {
		sl = pbMsg(sl, 2, lr)
	}
	rl := pbMsg(nil, 1, pbMsg(nil, 1, pbKV("service.name", "s")))
	rl = pbMsg(rl, 2, sl)
	return pbMsg(nil, 1, rl)
}

// TestOTLPPassThrough: a LogRecord decoded clean and not edited is written
// as the bytes it came in, and one whose edits only added attributes as
// those bytes and the added attributes; one the view does not say again
// (an unknown field, a merged or replaced value, a duplicate key) or that
// was edited otherwise is encoded from its view.
func TestOTLPPassThrough(t *testing.T) {
	base := func() []byte {
		lr := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
		lr = protowire.AppendFixed64(lr, 1_700_000_000_000_000_000)
		lr = protowire.AppendTag(lr, 2, protowire.VarintType)
		lr = protowire.AppendVarint(lr, 9)
		lr = pbMsg(lr, 5, pbMsg(nil, 1, []byte("hello")))
		lr = pbMsg(lr, 6, pbKV("a", "1"))
		return pbMsg(lr, 6, pbKV("b", "2"))
	}
	unknown := protowire.AppendTag(nil, 99, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 7)
	x := NewPath("attributes", "x")
	tests := []struct {
		name string
		lr   []byte
		do   func(r *Record)
		pass bool
	}{
		{"clean", base(), nil, true},
		{"fields out of order", append(pbMsg(nil, 6, pbKV("z", "0")), base()...), nil, true},
		{"a long string", pbMsg(base(), 6, pbKV("long", string(bytes.Repeat([]byte("x"), 300)))), nil, true},
		{"unknown field", append(base(), unknown...), nil, false},
		{"body twice, merged", pbMsg(base(), 5, pbMsg(nil, 1, []byte("again"))), nil, false},
		{"an array body", pbMsg(base(), 5, pbMsg(nil, 5, pbMsg(nil, 1, pbMsg(nil, 1, []byte("x"))))), nil, false},
		{"an array body, once", append(pbMsg(nil, 5, pbMsg(nil, 5, pbMsg(nil, 1, pbMsg(nil, 1, []byte("x"))))), pbMsg(nil, 6, pbKV("a", "1"))...), nil, true},
		{"a value's member replaced", pbMsg(base(), 6, pbMsg(pbMsg(nil, 1, []byte("c")), 2,
			append(pbMsg(nil, 1, []byte("s")), protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 5)...))), nil, false},
		{"duplicate key", pbMsg(base(), 6, pbKV("a", "3")), nil, false},
		{"unknown field in a kvlist", append(pbMsg(nil, 5, pbMsg(nil, 6, append(pbMsg(nil, 1, pbKV("k", "v")), unknown...))), pbMsg(nil, 6, pbKV("a", "1"))...), nil, false},
		{"an attribute added", base(), func(r *Record) { r.Set(x, IntValue(1)) }, true},
		{"attributes added to none", pbMsg(nil, 5, pbMsg(nil, 1, []byte("hello"))), func(r *Record) {
			r.Set(x, IntValue(1))
			r.Set(NewPath("attributes", "y"), r.Arena().NewStringFrom("two"))
		}, true},
		{"an attribute changed", base(), func(r *Record) { r.Set(NewPath("attributes", "a"), IntValue(1)) }, false},
		{"an attribute removed", base(), func(r *Record) { r.Remove(NewPath("attributes", "a")) }, false},
		{"an attribute added, one removed", base(), func(r *Record) { r.Set(x, IntValue(1)); r.Remove(NewPath("attributes", "a")) }, false},
		{"the body changed", base(), func(r *Record) { r.Set(NewPath("body"), IntValue(1)) }, false},
		{"an attribute added, the severity changed", base(), func(r *Record) {
			r.Set(x, IntValue(1))
			r.Set(NewPath("severity_text"), r.Arena().NewStringFrom("WARN"))
		}, false},
		{"edited, then discarded", base(), func(r *Record) { r.Set(x, IntValue(1)); r.Discard() }, true},
		{"edited, then committed", base(), func(r *Record) { r.Set(x, IntValue(1)); r.Commit() }, true},
		{"changed, then committed", base(), func(r *Record) { r.Set(NewPath("body"), IntValue(1)); r.Commit() }, false},
		{"time set", base(), func(r *Record) { r.SetTime(r.Time() + 1) }, false},
		{"time set to itself", base(), func(r *Record) { r.SetTime(r.Time()) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewArena()
			recs, err := a.DecodeOTLP(pbRequest(tt.lr), Referenced, nil)
			if err != nil || len(recs) != 1 {
				t.Fatalf("decode: %v, %d records", err, len(recs))
			}
			if tt.do != nil {
				tt.do(recs[0])
			}
			want := recs[0].AppendJSON(nil)
			var e OTLPEncoder
			out := e.AppendProto(nil, recs)
			if got := bytes.Contains(out, tt.lr); got != tt.pass {
				t.Errorf("written as its bytes: %v, want %v", got, tt.pass)
			}
			// Whichever way it was written, it decodes as the record.
			back, err := NewArena().DecodeOTLP(out, Referenced, nil)
			if err != nil || len(back) != 1 {
				t.Fatalf("decode the output: %v, %d records", err, len(back))
			}
			if got := back[0].AppendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("the output decodes as\n%s\nnot\n%s", got, want)
			}
			if !tt.pass && bytes.Contains(out, unknown) {
				t.Errorf("an unknown field was written again")
			}
			// FromViews never copies: base() has its time first, which
			// the encoder writes last.
			fv := OTLPEncoder{FromViews: true}
			views := fv.AppendProto(nil, recs)
			if bytes.Contains(views, tt.lr) && bytes.HasPrefix(tt.lr, base()[:9]) {
				t.Errorf("FromViews wrote the record's bytes")
			}
			if back, err := NewArena().DecodeOTLP(views, Referenced, nil); err != nil || len(back) != 1 || !bytes.Equal(back[0].AppendJSON(nil), want) {
				t.Errorf("FromViews: the output does not decode as the record (%v)", err)
			}
		})
	}
}
