package policyrunprocessor

import (
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// The whole path. A policy with split makes several log records of one,
// each a copy of the whole record: neither the plans nor the general
// path's projections can make those in pdata. When one of the policies
// splits, a batch is converted whole instead: encoded to protobuf,
// decoded into the arena, run through the policies in turn (each record
// a policy makes going on to the next), encoded by the engine's OTLP
// encoder and decoded back into pdata. The records a split makes stay in
// the resource and scope of the record they came of, right after where
// it was (the encoder groups records by resource and scope in their
// order); groups that came in apart with equal resource and scope come
// out as one, as they do from the engine's otlp output.

// runWhole runs the policies over ld converted whole and returns the
// logs they leave, or ld itself when it does not convert (every record
// counted unreadable, passed on untouched).
func (b *batch) runWhole(ld plog.Logs) plog.Logs {
	n := int64(ld.LogRecordCount())
	b.c.in = n // as the other paths count them, read or not
	req, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		b.c.unread[undecodable] += n
		return ld
	}
	recs, err := b.a.DecodeOTLP(req, record.Referenced, b.whole[:0])
	b.whole = recs[:0]
	if err != nil {
		b.c.unread[undecodable] += n
		return ld
	}
	cur, next := recs, b.next[:0]
	for i, m := range b.machines {
		next = b.runPolicy(i, m, cur, next[:0])
		cur, next = next, cur
	}
	out, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b.enc.AppendProto(nil, cur))
	// cur and next are the two arrays, recs' and b.next's, in either
	// order: each goes back to one of the two fields, never both to one
	// (the next batch would append into the array it ranges over).
	clear(cur[:cap(cur)])
	clear(next[:cap(next)])
	b.whole, b.next = cur[:0], next[:0]
	if err != nil {
		// The engine's encoder writes what pdata reads: not reached.
		b.c.unread[undecodable] += n
		return ld
	}
	return out
}

// runPolicy runs policy i over recs and appends the records it keeps to
// kept, counting each record's result.
func (b *batch) runPolicy(i int, m *vm.Machine, recs, kept []*record.Record) []*record.Record {
	for _, r := range recs {
		b.pieces = m.RunPieces(r, b.pieces[:0])
		b.c.split += int64(len(b.pieces) - 1)
		for _, pc := range b.pieces {
			res := pc.Result
			at := i*int(spec.NumReasons) + int(res.Fault)
			if res.Fault != spec.NoFault {
				b.c.faults[at]++
			}
			if res.Kept() {
				kept = append(kept, pc.Rec)
				continue
			}
			b.c.dropped++
			if res.Why != spec.ByPolicy {
				b.c.whys[i*int(spec.NumDropReasons)+int(res.Why)]++
			} else {
				b.c.drops[at]++
			}
		}
		clear(b.pieces)
	}
	return kept
}
