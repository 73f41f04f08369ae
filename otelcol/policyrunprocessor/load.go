package policyrunprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/record"
)

// Loading builds a record's projection (docs/vm.md, "Access sets"): an
// OTLP record of only the values under the programs' paths, read from
// pdata (record.Arena.NewOTLPRecordOf): for each path the maps on the way
// to it and the value at its end, or the value where the path runs into
// one that is not a map. A run over it reads nothing else, so a policy
// that reads one field costs a one-key record. Strings are copied into the arena, which is reset
// per batch: a projection allocates nothing once the arena has grown.

// unreadable is why a record could not be read (or written back): it then
// passes through as it came, counted.
type unreadable uint8

const (
	readable    unreadable = iota
	tooDeep                // values nested deeper than record.DefaultMaxDepth
	valueType              // a pdata value type the view cannot hold
	unwritable             // edits the processor cannot put in pdata
	undecodable            // a batch that a policy with split needs whole does not decode (split.go)
	numUnreadable
)

var unreadableNames = [numUnreadable]string{"", "too_deep", "value_type", "unwritable", "undecodable"}

// src is where a record's view lies in pdata.
type src struct {
	rl plog.ResourceLogs
	sl plog.ScopeLogs
	lr plog.LogRecord
}

type loader struct {
	a    *record.Arena
	vals record.OTLPValues // the fixed keys' values of the record being made
	rec  *record.Record    // the record, for the deep paths
	bad  unreadable
}

// load makes the projection of the log record of s on the paths ps, with
// its time when withTime, or reports why it cannot be read. The values of
// the view's keys are read into the record as it is made
// (NewOTLPRecordOf); only paths deep inside maps are set on it after.
func (l *loader) load(s src, ps []loadPath, withTime bool) (*record.Record, unreadable) {
	l.bad = readable
	l.vals.Reset()
	deep := false
	for i := range ps {
		if ps[i].deep {
			deep = true
			if ps[i].f.holdsMap() && l.get(ps[i].f).Kind() == record.Absent {
				b := l.a.BeginMap(0) // the map on the way; deepPath fills it
				l.put(ps[i].f, b.Finish())
			}
			continue
		}
		l.direct(&ps[i], s)
		if l.bad != readable {
			return nil, l.bad
		}
	}
	rec := l.a.NewOTLPRecordOf(&l.vals)
	if deep {
		l.rec = rec
		for i := range ps {
			if ps[i].deep {
				l.deepPath(&ps[i], s)
			}
		}
		l.rec = nil
		if l.bad != readable {
			return nil, l.bad
		}
	}
	if withTime {
		t := s.lr.Timestamp()
		if t == 0 {
			t = s.lr.ObservedTimestamp()
		}
		rec.SetTime(int64(t))
	}
	return rec, readable
}

// get returns the value field f has in the record being made.
func (l *loader) get(f field) record.Value { return l.vals.Get(f.group(), fields[f].slot) }

// put gives the key of field f the value v in the record being made.
func (l *loader) put(f field, v record.Value) { l.vals.Set(f.group(), fields[f].slot, v) }

// direct reads the value of a field, or its keys, from s.
func (l *loader) direct(lp *loadPath, s src) {
	switch f := lp.f; f {
	case fBody:
		switch b := s.lr.Body(); {
		case b.Type() == pcommon.ValueTypeEmpty: // no body: absent
		case lp.keys != nil && b.Type() == pcommon.ValueTypeMap:
			l.put(f, l.keysOf(b.Map(), lp.keys, 2))
		default: // the body whole, or where the paths run into it
			l.put(f, l.value(b, 2))
		}
	case fAttributes:
		l.attributes(lp, s.lr.Attributes())
	case fResAttributes:
		l.attributes(lp, s.rl.Resource().Attributes())
	case fScopeAttributes:
		l.attributes(lp, s.sl.Scope().Attributes())
	case fSeverityText:
		l.str(f, s.lr.SeverityText())
	case fEventName:
		l.str(f, s.lr.EventName())
	case fResSchemaURL:
		l.str(f, s.rl.SchemaUrl())
	case fScopeName:
		l.str(f, s.sl.Scope().Name())
	case fScopeVersion:
		l.str(f, s.sl.Scope().Version())
	case fScopeSchemaURL:
		l.str(f, s.sl.SchemaUrl())
	case fSeverityNumber:
		l.int(f, int64(s.lr.SeverityNumber()))
	case fFlags:
		l.int(f, int64(s.lr.Flags()))
	case fDropped:
		l.int(f, int64(s.lr.DroppedAttributesCount()))
	case fResDropped:
		l.int(f, int64(s.rl.Resource().DroppedAttributesCount()))
	case fScopeDropped:
		l.int(f, int64(s.sl.Scope().DroppedAttributesCount()))
	case fObservedTime:
		l.put(f, record.TimestampValue(int64(s.lr.ObservedTimestamp())))
	case fTraceID:
		id := s.lr.TraceID()
		l.put(f, l.hex(id[:]))
	case fSpanID:
		id := s.lr.SpanID()
		l.put(f, l.hex(id[:]))
	}
}

// attributes reads an attribute map whole, or some of its keys.
func (l *loader) attributes(lp *loadPath, m pcommon.Map) {
	if lp.keys != nil {
		l.put(lp.f, l.keysOf(m, lp.keys, lp.k+1))
	} else {
		l.put(lp.f, l.mapValue(m, lp.k+1))
	}
}

// keysOf returns the map of those of keys that m has, m at depth d.
func (l *loader) keysOf(m pcommon.Map, keys []string, d int) record.Value {
	a := l.a
	b := a.BeginMap(len(keys))
	for _, k := range keys {
		if v, ok := m.Get(k); ok {
			b.Add(a.NewStringFrom(k), l.value(v, d+1))
		}
	}
	return b.Finish()
}

// deepPath projects a path that goes deep inside the body or an attribute
// map, setting what it finds on the record.
func (l *loader) deepPath(lp *loadPath, s src) {
	p := lp.path
	switch lp.f {
	case fBody:
		switch b := s.lr.Body(); {
		case b.Type() == pcommon.ValueTypeEmpty:
		case b.Type() != pcommon.ValueTypeMap:
			l.set(p[:1], l.value(b, 2))
		default:
			l.ensureMap(p[:1])
			l.walk(p, 1, b.Map())
		}
	case fAttributes:
		l.walk(p, lp.k, s.lr.Attributes())
	case fResAttributes:
		l.walk(p, lp.k, s.rl.Resource().Attributes())
	case fScopeAttributes:
		l.walk(p, lp.k, s.sl.Scope().Attributes())
	}
}

// walk projects the path p from step k on, in m, the map at p[:k]: the
// maps on the way (made empty in the record unless a path made them
// already) and the value at the end, or the value that is not a map.
func (l *loader) walk(p record.Path, k int, m pcommon.Map) {
	for i := k; i < len(p); i++ {
		v, ok := m.Get(p[i].Key())
		if !ok {
			return
		}
		if i == len(p)-1 || v.Type() != pcommon.ValueTypeMap {
			l.set(p[:i+1], l.value(v, i+2))
			return
		}
		l.ensureMap(p[:i+1])
		m = v.Map()
	}
}

// ensureMap makes the record hold a map at p, keeping one that is there.
func (l *loader) ensureMap(p record.Path) {
	if v, ok := l.rec.Get(p); ok && v.Kind() == record.Map {
		return
	}
	b := l.a.BeginMap(0)
	l.set(p, b.Finish())
}

func (l *loader) set(p record.Path, v record.Value) {
	if l.bad != readable {
		return
	}
	if err := l.rec.Set(p, v); err != nil {
		// The projection puts values only where the view has room for
		// them; a failure is a bug, and the record is left alone.
		l.bad = unwritable
	}
}

func (l *loader) str(f field, s string) { l.put(f, l.a.NewStringFrom(s)) }

func (l *loader) int(f field, n int64) { l.put(f, record.IntValue(n)) }

// hex writes an id as lower-case hex, as the view reads it: "" when it
// is all zero (unset).
func (l *loader) hex(id []byte) record.Value {
	const digits = "0123456789abcdef"
	zero := true
	for _, c := range id {
		zero = zero && c == 0
	}
	if zero {
		return l.a.NewStringFrom("")
	}
	b := l.a.StringBuilder()
	b.Start()
	for _, c := range id {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.End()
}

// value converts a pdata value at nesting depth d (the record's root map
// is at depth 1, as the decoders count): Empty is null, the others the
// kinds of the same name (Double is float, Slice array).
func (l *loader) value(v pcommon.Value, d int) record.Value {
	a := l.a
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return record.NullValue()
	case pcommon.ValueTypeStr:
		return a.NewStringFrom(v.Str())
	case pcommon.ValueTypeInt:
		return record.IntValue(v.Int())
	case pcommon.ValueTypeDouble:
		return record.FloatValue(v.Double())
	case pcommon.ValueTypeBool:
		return record.BoolValue(v.Bool())
	case pcommon.ValueTypeBytes:
		bs := v.Bytes()
		b := a.StringBuilder()
		b.Start()
		for i := 0; i < bs.Len(); i++ {
			b.WriteByte(bs.At(i))
		}
		s := b.End()
		return a.NewBytes(a.Bytes(s))
	case pcommon.ValueTypeMap:
		return l.mapValue(v.Map(), d)
	case pcommon.ValueTypeSlice:
		if d > record.DefaultMaxDepth {
			l.bad = tooDeep
			return record.Value{}
		}
		s := v.Slice()
		b := a.BeginArray(s.Len())
		for i := 0; i < s.Len() && l.bad == readable; i++ {
			b.Append(l.value(s.At(i), d+1))
		}
		return b.Finish()
	}
	l.bad = valueType
	return record.Value{}
}

// mapValue converts a pdata map at depth d.
func (l *loader) mapValue(m pcommon.Map, d int) record.Value {
	if d > record.DefaultMaxDepth {
		l.bad = tooDeep
		return record.Value{}
	}
	a := l.a
	b := a.BeginMap(m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		b.Add(a.NewStringFrom(k), l.value(v, d+1))
		return l.bad == readable
	})
	return b.Finish()
}
