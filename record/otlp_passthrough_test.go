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

// editedRequest decodes a request of the LogRecord lr, edits its record
// with do (if any), and returns the records, the record as JSON and the
// request the encoder writes of them.
func editedRequest(t *testing.T, lr []byte, do func(r *Record)) (recs []*Record, want, out []byte) {
	t.Helper()
	recs, err := NewArena().DecodeOTLP(pbRequest(lr), Referenced, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("decode: %v, %d records", err, len(recs))
	}
	if do != nil {
		do(recs[0])
	}
	var e OTLPEncoder
	return recs, recs[0].AppendJSON(nil), e.AppendProto(nil, recs)
}

// TestOTLPPassThrough: a LogRecord decoded clean and not edited is written
// as the bytes it came in, and one whose edits only added attributes (or
// set fields it did not have) as those bytes and the rest; one the view
// does not say again (an unknown field, a merged or replaced value, a
// duplicate key) is encoded from its view, and one edited otherwise keeps
// the bytes of its unchanged fields only (TestOTLPWireFields).
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
		{"an attribute added, the severity text set", base(), func(r *Record) {
			// base() has no severity_text: its fields are all copied,
			// then severity_text and the attribute written.
			r.Set(x, IntValue(1))
			r.Set(NewPath("severity_text"), r.Arena().NewStringFrom("WARN"))
		}, true},
		{"edited, then discarded", base(), func(r *Record) { r.Set(x, IntValue(1)); r.Discard() }, true},
		{"edited, then committed", base(), func(r *Record) { r.Set(x, IntValue(1)); r.Commit() }, true},
		{"changed, then committed", base(), func(r *Record) { r.Set(NewPath("body"), IntValue(1)); r.Commit() }, false},
		{"time set", base(), func(r *Record) { r.SetTime(r.Time() + 1) }, false},
		{"time set to itself", base(), func(r *Record) { r.SetTime(r.Time()) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, want, out := editedRequest(t, tt.lr, tt.do)
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

// TestOTLPWireFields: an edited LogRecord decoded clean is written with
// the bytes of the fields its edits left, and only the changed ones
// encoded again: a changed field's old bytes are gone, the others' are
// there, and the output decodes as the record.
func TestOTLPWireFields(t *testing.T) {
	timeF := protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), 1_700_000_000_000_000_000)
	obsF := protowire.AppendFixed64(protowire.AppendTag(nil, 11, protowire.Fixed64Type), 1_700_000_000_000_000_500)
	sevF := protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 9)
	textF := pbMsg(nil, 3, []byte("INFO"))
	bodyF := pbMsg(nil, 5, pbMsg(nil, 1, []byte("hello")))
	attrA, attrB := pbMsg(nil, 6, pbKV("a", "1")), pbMsg(nil, 6, pbKV("b", "2"))
	traceF := pbMsg(nil, 9, bytes.Repeat([]byte{0xab}, 16))
	lr := bytes.Join([][]byte{timeF, sevF, textF, bodyF, attrA, attrB, traceF, obsF}, nil)
	noTime := bytes.Join([][]byte{sevF, textF, bodyF, attrA, attrB, obsF}, nil)
	tests := []struct {
		name       string
		lr         []byte
		do         func(r *Record)
		kept, gone [][]byte
	}{
		{"the body changed", lr, func(r *Record) { r.Set(NewPath("body"), IntValue(1)) },
			[][]byte{timeF, sevF, textF, attrA, attrB, traceF, obsF}, [][]byte{bodyF}},
		{"the severity changed", lr, func(r *Record) {
			r.Set(NewPath("severity_number"), IntValue(17))
			r.Set(NewPath("severity_text"), r.Arena().NewStringFrom("ERROR"))
		}, [][]byte{timeF, bodyF, attrA, attrB, traceF, obsF}, [][]byte{sevF, textF}},
		{"an attribute changed", lr, func(r *Record) { r.Set(NewPath("attributes", "a"), IntValue(5)) },
			[][]byte{timeF, sevF, textF, bodyF, traceF, obsF}, [][]byte{attrA}},
		{"an attribute removed", lr, func(r *Record) { r.Remove(NewPath("attributes", "b")) },
			[][]byte{timeF, sevF, textF, bodyF, traceF, obsF, attrA}, [][]byte{attrB}},
		{"the trace id cleared", lr, func(r *Record) { r.Set(NewPath("trace_id"), r.Arena().NewStringFrom("")) },
			[][]byte{timeF, sevF, textF, bodyF, attrA, attrB, obsF}, [][]byte{traceF}},
		{"the time set", lr, func(r *Record) { r.SetTime(r.Time() + 1) },
			[][]byte{sevF, textF, bodyF, attrA, attrB, traceF, obsF}, [][]byte{timeF}},
		{"the observed time changed, no time", noTime, func(r *Record) {
			r.Set(NewPath("observed_time"), TimestampValue(1_800_000_000_000_000_000))
		}, [][]byte{sevF, textF, bodyF, attrA, attrB}, [][]byte{obsF}},
		{"changed, then discarded", lr, func(r *Record) { r.Set(NewPath("body"), IntValue(1)); r.Discard() },
			[][]byte{lr}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, want, out := editedRequest(t, tt.lr, tt.do)
			for _, f := range tt.kept {
				if !bytes.Contains(out, f) {
					t.Errorf("the field %x was not copied", f)
				}
			}
			for _, f := range tt.gone {
				if bytes.Contains(out, f) {
					t.Errorf("the changed field %x was written as it was", f)
				}
			}
			back, err := NewArena().DecodeOTLP(out, Referenced, nil)
			if err != nil || len(back) != 1 {
				t.Fatalf("decode the output: %v, %d records", err, len(back))
			}
			if got := back[0].AppendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("the output decodes as\n%s\nnot\n%s", got, want)
			}
		})
	}
}
