package record

import (
	"bytes"
	"time"
)

// DecodeOTLPView makes an OTLP record from its view written as JSON: what
// the test blocks of OTLP policies write as input, and what
// Record.AppendJSON writes for an OTLP record. For example
//
//	{"body": "x", "attributes": {"a": 1}, "resource": {"attributes": {}}}
//
// The view's keys that the line leaves out (or sets to null) get their
// defaults (body stays absent); the record's keys are in the view's order,
// as the codecs make them. "time", an RFC 3339 string or integer unix
// nanoseconds, is the record's time (absent or 0: the observed time, as
// in OTLP); observed_time is an RFC 3339 string or integer nanoseconds;
// trace_id and span_id are hex of their length (made lower-case) or "".
// A key the view does not have, or a fixed key holding a value of another
// type, is a *ViewError naming the key; JSON that does not decode is a
// *DecodeError. On error the arena is as it was before the call.
func (a *Arena) DecodeOTLPView(line []byte, mode Mode) (*Record, error) {
	m := a.mark()
	var keys keyFilter // a map, please
	root, _, err := a.decodeJSON(line, mode, &keys)
	if err != nil {
		return nil, err
	}
	d := otlpDecoder{a: a, kref: a.addBuf(viewKeys)}
	var vals [numRootFields]Value
	t, hasTime := int64(0), false
	for it := a.Iter(root); it.Next(); {
		name, v := a.str(it.Key()), it.Value()
		if name == timeField.Name {
			if v.kind() != Null {
				if t, err = viewTime(a, v, nil, &timeField); err != nil {
					break
				}
				hasTime = true
			}
			continue
		}
		f := viewField(rootView, name)
		if f == nil {
			err = &ViewError{Path: "." + name, Problem: "is not a key of the OTLP view (use .attributes)"}
			break
		}
		if vals[f.ID], err = d.viewValue(nil, f, v); err != nil {
			break
		}
	}
	if err != nil {
		a.rollback(m)
		return nil, err
	}
	for i := range rootView {
		f := &rootView[i]
		if vals[f.ID].kind() == Absent && f.ID != ViewBody {
			vals[f.ID], _ = d.viewValue(nil, f, NullValue()) // a default: no error
		}
	}
	if !hasTime {
		t = 0
	}
	return a.newOTLPRecord(d.fixedMap(rootKeys[:], vals[:]), t, vals[ViewObservedTime].Time()), nil
}

// viewPath is the path of field f of the view, in group (resource or
// scope) or, when group is nil, in the root.
func viewPath(group, f *ViewField) string {
	if group == nil {
		return "." + f.Name
	}
	return "." + group.Name + "." + f.Name
}

// timeField is "time", which a view written as JSON has besides its keys.
var timeField = ViewField{Name: "time", Kind: Timestamp}

// viewValue checks the value of field f of the view (in group, see
// viewPath) and returns it as the record holds it; null is the field's
// default.
func (d *otlpDecoder) viewValue(group, f *ViewField, v Value) (Value, error) {
	a := d.a
	k := v.kind()
	switch {
	case f.Kind == Absent: // the body: anything
		return v, nil
	case k == Null && f.Fields == nil:
		return viewDefault(a, f), nil
	case k == Null: // resource or scope: every key's default
		v, k = viewDefault(a, f), Map
	}
	if f.Kind == Timestamp {
		t, err := viewTime(a, v, group, f)
		return TimestampValue(t), err
	}
	if k != f.Kind {
		return Value{}, &ViewError{Path: viewPath(group, f), Problem: "holds " + article(k) + ", not " + article(f.Kind)}
	}
	switch {
	case f.Fields != nil:
		return d.viewGroup(f, v)
	case f.HexLen > 0:
		if !f.ValidID(a.str(v)) {
			return Value{}, &ViewError{Path: viewPath(group, f), Problem: f.idProblem()}
		}
		if s := a.raw(v); bytes.ContainsAny(s, "ABCDEF") {
			off := len(a.slab)
			a.slab = appendLowerHex(a.slab, s)
			v = strValue(String, 0, uint32(off), uint32(len(s)))
		}
		v.h |= flagPlain
	case f.Kind == Int:
		if p := f.intProblem(v.Int()); p != "" {
			return Value{}, &ViewError{Path: viewPath(group, f), Problem: p}
		}
	}
	return v, nil
}

// viewDefault is the value of a key of the view that is left out.
func viewDefault(a *Arena, f *ViewField) Value {
	switch f.Kind {
	case String:
		return strValue(String, 0, 0, 0)
	case Int:
		return IntValue(0)
	case Timestamp:
		return TimestampValue(0)
	case Map:
		return containerValue(Map, uint32(len(a.nodes)), 0)
	}
	return Value{}
}

// viewGroup checks the resource or the scope map m and returns it with
// every key of the view's, in order.
func (d *otlpDecoder) viewGroup(f *ViewField, m Value) (Value, error) {
	a := d.a
	var vals [max(numResourceFields, numScopeFields)]Value
	for it := a.Iter(m); it.Next(); {
		name := a.str(it.Key())
		g := viewField(f.Fields, name)
		if g == nil {
			return Value{}, &ViewError{Path: "." + f.Name + "." + name, Problem: "is not a key of the OTLP view"}
		}
		v, err := d.viewValue(f, g, it.Value())
		if err != nil {
			return Value{}, err
		}
		vals[g.ID] = v
	}
	for i := range f.Fields {
		g := &f.Fields[i]
		if vals[g.ID].kind() == Absent {
			vals[g.ID] = viewDefault(a, g)
		}
	}
	keys := resourceKeys[:]
	if f.ID == ViewScope {
		keys = scopeKeys[:]
	}
	return d.fixedMap(keys, vals[:len(f.Fields)]), nil
}

// viewTime reads a timestamp of the view: an RFC 3339 string or integer
// unix nanoseconds.
func viewTime(a *Arena, v Value, group, f *ViewField) (int64, error) {
	switch v.kind() {
	case Int:
		return v.Int(), nil
	case String:
		t, err := time.Parse(time.RFC3339Nano, a.str(v))
		if err != nil {
			return 0, &ViewError{Path: viewPath(group, f), Problem: "is not an RFC 3339 time: " + err.Error()}
		}
		if y := t.Year(); y < 1678 || y > 2261 {
			return 0, &ViewError{Path: viewPath(group, f), Problem: "is outside the years 1678 to 2261 that unix nanoseconds hold"}
		}
		return t.UnixNano(), nil
	case Timestamp:
		return v.Time(), nil
	}
	return 0, &ViewError{Path: viewPath(group, f), Problem: "holds " + article(v.kind()) + ", not a timestamp (an RFC 3339 string or unix nanoseconds)"}
}
