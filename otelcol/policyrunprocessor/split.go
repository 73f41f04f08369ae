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
// logs they leave. When ld does not convert (a record nested past the
// decoder's depth, say), each log record is converted and run on its
// own, in its own resource and scope group, and only those that do not
// convert are counted unreadable and passed on untouched. Those records
// come out a resource and scope group each: the fallback is for batches
// that are already wrong, where one record must not cost the rest
// their policies.
func (b *batch) runWhole(ld plog.Logs) plog.Logs {
	b.c.in = int64(ld.LogRecordCount()) // as the other paths count them, read or not
	if out, ok := b.runConverted(ld); ok {
		return out
	}
	out := plog.NewLogs()
	rls := ld.ResourceLogs()
	for ri := range rls.Len() {
		rl := rls.At(ri)
		sls := rl.ScopeLogs()
		for si := range sls.Len() {
			sl := sls.At(si)
			lrs := sl.LogRecords()
			for li := range lrs.Len() {
				one := plog.NewLogs()
				orl := one.ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(orl.Resource())
				orl.SetSchemaUrl(rl.SchemaUrl())
				osl := orl.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(osl.Scope())
				osl.SetSchemaUrl(sl.SchemaUrl())
				lrs.At(li).CopyTo(osl.LogRecords().AppendEmpty())
				res, ok := b.runConverted(one)
				if !ok {
					b.c.unread[undecodable]++
					res = one
				}
				res.ResourceLogs().MoveAndAppendTo(out.ResourceLogs())
			}
		}
	}
	return out
}

// runConverted runs the policies over ld converted whole, reporting
// false (nothing run, nothing counted) when ld does not convert.
func (b *batch) runConverted(ld plog.Logs) (plog.Logs, bool) {
	req, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		return ld, false
	}
	recs, err := b.a.DecodeOTLP(req, record.Referenced, b.whole[:0])
	b.whole = recs[:0]
	if err != nil {
		return ld, false
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
	// The engine's encoder writes what pdata reads: err is not expected.
	return out, err == nil
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
