package policyrunprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/record"
)

// Loading builds a record's projection (docs/vm.md, "Access sets"): an
// OTLP record at the view's defaults with only the values under the
// programs' paths read from pdata, for each path the maps on the way to it
// and the value at its end, or the value where the path runs into one
// that is not a map. Strings are copied into the arena, which is reset
// per batch: a projection allocates nothing once the arena has grown.

// unreadable is why a record could not be read (or written back): it then
// passes through as it came, counted.
type unreadable uint8

const (
	readable   unreadable = iota
	tooDeep               // values nested deeper than record.DefaultMaxDepth
	valueType             // a pdata value type the view cannot hold
	unwritable            // edits the processor cannot put in pdata
	numUnreadable
)

var unreadableNames = [numUnreadable]string{"", "too_deep", "value_type", "unwritable"}

// src is where a record's view lies in pdata.
type src struct {
	rl plog.ResourceLogs
	sl plog.ScopeLogs
	lr plog.LogRecord
}

type loader struct {
	a   *record.Arena
	rec *record.Record
	bad unreadable
}

// load sets the values of s under the paths ps on rec, and the time when
// withTime; it reports why not when the record cannot be read.
func (l *loader) load(rec *record.Record, s src, ps []loadPath, withTime bool) unreadable {
	l.rec, l.bad = rec, readable
	for i := range ps {
		l.path(&ps[i], s)
		if l.bad != readable {
			return l.bad
		}
	}
	if withTime {
		t := s.lr.Timestamp()
		if t == 0 {
			t = s.lr.ObservedTimestamp()
		}
		rec.SetTime(int64(t))
	}
	return readable
}

func (l *loader) path(lp *loadPath, s src) {
	p := lp.path
	switch lp.f {
	case fBody:
		b := s.lr.Body()
		switch {
		case b.Type() == pcommon.ValueTypeEmpty: // no body: absent
		case len(p) == 1 || b.Type() != pcommon.ValueTypeMap:
			l.set(p[:1], l.value(b, 2))
		default:
			l.ensureMap(p[:1])
			l.walk(p, 1, b.Map())
		}
	case fAttributes:
		l.attributes(p, lp.k, s.lr.Attributes())
	case fResAttributes:
		l.attributes(p, lp.k, s.rl.Resource().Attributes())
	case fScopeAttributes:
		l.attributes(p, lp.k, s.sl.Scope().Attributes())
	case fSeverityText:
		l.str(p[:1], s.lr.SeverityText())
	case fEventName:
		l.str(p[:1], s.lr.EventName())
	case fResSchemaURL:
		l.str(p[:2], s.rl.SchemaUrl())
	case fScopeName:
		l.str(p[:2], s.sl.Scope().Name())
	case fScopeVersion:
		l.str(p[:2], s.sl.Scope().Version())
	case fScopeSchemaURL:
		l.str(p[:2], s.sl.SchemaUrl())
	case fSeverityNumber:
		l.int(p[:1], int64(s.lr.SeverityNumber()))
	case fFlags:
		l.int(p[:1], int64(s.lr.Flags()))
	case fDropped:
		l.int(p[:1], int64(s.lr.DroppedAttributesCount()))
	case fResDropped:
		l.int(p[:2], int64(s.rl.Resource().DroppedAttributesCount()))
	case fScopeDropped:
		l.int(p[:2], int64(s.sl.Scope().DroppedAttributesCount()))
	case fObservedTime:
		if t := s.lr.ObservedTimestamp(); t != 0 {
			l.set(p[:1], record.TimestampValue(int64(t)))
		}
	case fTraceID:
		if id := s.lr.TraceID(); !id.IsEmpty() {
			l.set(p[:1], l.hex(id[:]))
		}
	case fSpanID:
		if id := s.lr.SpanID(); !id.IsEmpty() {
			l.set(p[:1], l.hex(id[:]))
		}
	}
}

// attributes projects an attribute map: whole, or along the rest of p.
func (l *loader) attributes(p record.Path, k int, m pcommon.Map) {
	if len(p) == k {
		if m.Len() > 0 {
			l.set(p, l.mapValue(m, k+1))
		}
		return
	}
	l.walk(p, k, m)
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

// str and int set a fixed key unless it holds its default, which
// NewOTLPRecord put there.
func (l *loader) str(p record.Path, s string) {
	if s != "" {
		l.set(p, l.a.NewStringFrom(s))
	}
}

func (l *loader) int(p record.Path, n int64) {
	if n != 0 {
		l.set(p, record.IntValue(n))
	}
}

// hex writes an id as lower-case hex, as the view reads it.
func (l *loader) hex(id []byte) record.Value {
	const digits = "0123456789abcdef"
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
