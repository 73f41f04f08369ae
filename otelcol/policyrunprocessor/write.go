package policyrunprocessor

import (
	"encoding/hex"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// Writing back puts a run's edits (vm.Differ) into pdata: each edit's
// value at its path, and nothing else. Strings are copied out of the
// arena, which the next batch reuses.

// dst is where edits go: a log record and the resource and scope it is in
// (or, for a record that moves, the new ones it moves to).
type dst struct {
	rl plog.ResourceLogs
	sl plog.ScopeLogs
	lr plog.LogRecord
}

// leafEdit is an edit of one leaf of the view, or of a path inside one.
type leafEdit struct {
	f    field
	rest record.Path // the steps inside the field's value
	v    record.Value
}

type writer struct {
	a *record.Arena
	// strs holds copies of short strings written before, to write again:
	// a policy writes the same keys and values (constants, the few values
	// of a field) record after record, and pdata strings are immutable,
	// so records may share them. Emptied when full.
	strs map[string]string
	// grow counts, per field that holds a map, the keys the edits being
	// applied add to it one step in, less those they remove (removals
	// come first and make room): the map is grown once, by exactly that,
	// rather than by append's doubling (most records get one key, and
	// half the slice would be garbage), and not at all when the removals
	// make room enough.
	grow [numFields]int32
}

const (
	maxInterned    = 4096 // strings in writer.strs
	maxInternedLen = 64   // bytes of one
)

// str copies a string out of the arena ("" for null or absent).
func (w *writer) str(v record.Value) string { return w.intern(w.a.Str(v)) }

// intern returns a copy of s, an arena string, that outlives the arena.
func (w *writer) intern(s string) string {
	if len(s) > maxInternedLen {
		return strings.Clone(s)
	}
	if c, ok := w.strs[s]; ok {
		return c
	}
	if w.strs == nil || len(w.strs) >= maxInterned {
		w.strs = make(map[string]string, 64)
	}
	c := strings.Clone(s)
	w.strs[c] = c
	return c
}

// leaves expands edits into edits of leaves, appended to out: an edit of a
// group (the root, the resource, the scope) becomes one per leaf, from the
// group's new map. It reports false when an edit is not one pdata can
// hold (none is, after a run the view check passed).
//
// writes are the write set's paths resolved (resolveAll), by index.
func (w *writer) leaves(out []leafEdit, edits []vm.Edit, writes []resolved) ([]leafEdit, bool) {
	ok := true
	w.grow = [numFields]int32{}
	for _, e := range edits {
		r := writes[e.Write]
		rest := e.Path[r.k:]
		out, ok = w.leaf(out, r.f, rest, e.Value)
		if !ok {
			return out, false
		}
		switch {
		case len(rest) != 1:
		case e.Added:
			w.grow[r.f]++
		case e.Value.Kind() == record.Absent:
			w.grow[r.f]--
		}
	}
	return out, true
}

func (w *writer) leaf(out []leafEdit, f field, rest record.Path, v record.Value) ([]leafEdit, bool) {
	info := &fields[f]
	k := v.Kind()
	switch {
	case f == fNone:
		return out, k == record.Absent // removing what the view has not
	case info.subs != nil:
		if k != record.Map && k != record.Null && k != record.Absent {
			return out, false
		}
		// Every key of the group's map must be one of its leaves.
		n := 0
		for _, g := range info.subs {
			gv := w.get(v, fields[g].path[len(info.path)].Key())
			if gv.Kind() != record.Absent {
				n++
			}
			var ok bool
			if out, ok = w.leaf(out, g, nil, gv); !ok {
				return out, false
			}
		}
		return out, n == w.a.Len(v)
	case len(rest) > 0:
		// Inside a field: only the body and the attribute maps hold maps.
		if f != fBody && !f.holdsMap() {
			return out, false
		}
	case k == record.Absent || k == record.Null:
	case f == fBody:
	case k != info.kind:
		return out, false
	case info.view.HexLen > 0:
		if !info.view.ValidID(w.a.Str(v)) {
			return out, false
		}
	}
	return append(out, leafEdit{f, rest, v}), true
}

// get returns the value of key in the map m, Absent when there is none.
func (w *writer) get(m record.Value, key string) record.Value {
	for it := w.a.Iter(m); it.Next(); {
		if w.a.Str(it.Key()) == key {
			return it.Value()
		}
	}
	return record.Value{}
}

// apply puts one leaf edit into d.
func (w *writer) apply(d dst, e *leafEdit) {
	v := e.v
	switch e.f {
	case fBody:
		if len(e.rest) == 0 {
			w.value(d.lr.Body(), v)
			return
		}
		b := d.lr.Body()
		if b.Type() != pcommon.ValueTypeMap {
			b.SetEmptyMap() // the run made the body a map (from null or none)
		}
		w.put(b.Map(), e.f, e.rest, v)
	case fAttributes:
		w.attributes(d.lr.Attributes(), e.f, e.rest, v)
	case fResAttributes:
		w.attributes(d.rl.Resource().Attributes(), e.f, e.rest, v)
	case fScopeAttributes:
		w.attributes(d.sl.Scope().Attributes(), e.f, e.rest, v)
	case fSeverityText:
		d.lr.SetSeverityText(w.str(v))
	case fEventName:
		d.lr.SetEventName(w.str(v))
	case fResSchemaURL:
		d.rl.SetSchemaUrl(w.str(v))
	case fScopeName:
		d.sl.Scope().SetName(w.str(v))
	case fScopeVersion:
		d.sl.Scope().SetVersion(w.str(v))
	case fScopeSchemaURL:
		d.sl.SetSchemaUrl(w.str(v))
	// Numbers are cut to their protobuf widths, as the engine's OTLP
	// encoder writes them.
	case fSeverityNumber:
		d.lr.SetSeverityNumber(plog.SeverityNumber(int32(intOf(v))))
	case fFlags:
		d.lr.SetFlags(plog.LogRecordFlags(uint32(intOf(v))))
	case fDropped:
		d.lr.SetDroppedAttributesCount(uint32(intOf(v)))
	case fResDropped:
		d.rl.Resource().SetDroppedAttributesCount(uint32(intOf(v)))
	case fScopeDropped:
		d.sl.Scope().SetDroppedAttributesCount(uint32(intOf(v)))
	case fObservedTime:
		var t int64
		if v.Kind() == record.Timestamp {
			t = v.Time()
		}
		d.lr.SetObservedTimestamp(pcommon.Timestamp(t))
	case fTraceID:
		var id pcommon.TraceID
		hex.Decode(id[:], w.a.Bytes(v)) // checked by leaf; "" leaves it empty
		d.lr.SetTraceID(id)
	case fSpanID:
		var id pcommon.SpanID
		hex.Decode(id[:], w.a.Bytes(v))
		d.lr.SetSpanID(id)
	}
}

func intOf(v record.Value) int64 {
	if v.Kind() == record.Int {
		return v.Int()
	}
	return 0 // null or absent: the default
}

// attributes edits an attribute map: whole (replaced by v's entries, or
// cleared) or at the rest of the path.
func (w *writer) attributes(m pcommon.Map, f field, rest record.Path, v record.Value) {
	if len(rest) > 0 {
		w.put(m, f, rest, v)
		return
	}
	m.Clear()
	w.fill(m, v)
}

// put sets the value at path p in m to v, making maps on the way where
// there are none (as the run did: a set creates them from nothing or
// null), or removes it when v is Absent. The keys of p are the program's
// (Access.Writes), not the arena's: pdata may keep them. m is the map of
// field f, which the edits may grow (writer.grow).
func (w *writer) put(m pcommon.Map, f field, p record.Path, v record.Value) {
	if n := w.grow[f]; n != 0 {
		if n > 0 {
			m.EnsureCapacity(m.Len() + int(n))
		}
		w.grow[f] = 0
	}
	absent := v.Kind() == record.Absent
	for _, s := range p[:len(p)-1] {
		x, ok := m.Get(s.Key())
		switch {
		case !ok && absent:
			return
		case !ok:
			x = m.PutEmpty(s.Key())
			x.SetEmptyMap()
		case x.Type() != pcommon.ValueTypeMap:
			if absent {
				return
			}
			x.SetEmptyMap()
		}
		m = x.Map()
	}
	last := p[len(p)-1].Key()
	if absent {
		m.Remove(last)
		return
	}
	w.value(m.PutEmpty(last), v) // the key's value, or a new key's
}

// fill adds the entries of the map v to the empty map m.
func (w *writer) fill(m pcommon.Map, v record.Value) {
	a := w.a
	if v.Kind() != record.Map {
		return
	}
	m.EnsureCapacity(a.Len(v))
	for it := a.Iter(v); it.Next(); {
		w.value(m.PutEmpty(w.intern(a.Str(it.Key()))), it.Value())
	}
}

// value sets x to the record value v: null and absent are Empty, a
// timestamp is its RFC 3339 text (as the OTLP encoder writes one).
func (w *writer) value(x pcommon.Value, v record.Value) {
	a := w.a
	switch v.Kind() {
	case record.Bool:
		x.SetBool(v.Bool())
	case record.Int:
		x.SetInt(v.Int())
	case record.Float:
		x.SetDouble(v.Float())
	case record.String:
		x.SetStr(w.str(v))
	case record.Bytes:
		x.SetEmptyBytes().FromRaw(a.Bytes(v))
	case record.Timestamp:
		x.SetStr(time.Unix(0, v.Time()).UTC().Format(time.RFC3339Nano))
	case record.Array:
		s := x.SetEmptySlice()
		s.EnsureCapacity(a.Len(v))
		for it := a.Iter(v); it.Next(); {
			w.value(s.AppendEmpty(), it.Value())
		}
	case record.Map:
		w.fill(x.SetEmptyMap(), v)
	default:
		_ = x.FromRaw(nil) // Empty; FromRaw(nil) cannot fail
	}
}
