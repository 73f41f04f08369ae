package record

import (
	"strings"
	"time"
)

// ViewError says how an edited OTLP record broke its view: a fixed key
// holding a value of another kind, an id that is not hex of its length, or
// a key the view does not have.
type ViewError struct {
	Path    string // the key, as a policy spells it: .resource.schema_url
	Problem string
}

func (e *ViewError) Error() string { return "record: OTLP view: " + e.Path + " " + e.Problem }

// CheckOTLP reports whether an OTLP record's view, edits included, can be
// encoded as a LogRecord: every key is one of the view's, each holds its
// kind (or null, or is absent: the field's default), and the trace and
// span ids are hex of their length or "". Backends call it after a run
// that edited the record; a non-nil error makes the run a fault. It is nil
// for other records.
//
// What the edits left as it was is not checked again: an entry of the
// root, the resource or the scope that is still the very entry it was
// when the record was decoded (or last committed) passes, as a record
// that no run edited is never checked. So a run that sets one attribute
// costs a look at each key of the root, not a walk of the view.
func (r *Record) CheckOTLP() error {
	if r.layout != layoutOTLP {
		return nil
	}
	if r.root.kind() != Map {
		return &ViewError{Path: ".", Problem: "is not a map"}
	}
	return r.a.checkView(r.root, r.base, rootView, nil)
}

// checkView checks the map m against fields, the keys of the group
// parent (nil for the root); old is the map as it was (a Map or not).
// It allocates nothing unless it fails: it runs after every run that
// edits an OTLP record.
func (a *Arena) checkView(m, old Value, fields []ViewField, parent *ViewField) error {
	fail := func(name, problem string) error {
		path := "." + name
		if parent != nil {
			path = "." + parent.Name + path
		}
		return &ViewError{Path: path, Problem: problem}
	}
	if old == m {
		return nil // the very map it was
	}
	var was []Value // old's entries, when it is a map
	if old.kind() == Map {
		was = a.nodes[old.off() : old.off()+2*old.n()]
	}
	var cur []Value // m's entries; a plain loop over them, not an Iter: this runs once a record
	if m.kind() == Map {
		cur = a.nodes[m.off() : m.off()+2*m.n()]
	}
	next := 0 // the field the next key is, when the keys are in order
	for i := 0; i+1 < len(cur); i += 2 {
		key, v := cur[i], cur[i+1]
		if i+1 < len(was) && was[i] == key && was[i+1] == v {
			next++ // unchanged, in its place; the view's order is likely
			continue
		}
		name := a.Str(key)
		var f *ViewField
		for next < len(fields) && fields[next].Kind == Absent && fields[next].Name != name {
			next++ // the body, which a record may lack
		}
		if next < len(fields) && fields[next].Name == name {
			f = &fields[next]
		} else {
			f = viewField(fields, name)
		}
		if f != nil {
			next = int(f.ID) + 1
		}
		if f == nil {
			return fail(name, "is not a key of the OTLP view (use .attributes)")
		}
		k := v.kind()
		switch {
		case f.Kind == Absent || k == Null:
		case k != f.Kind:
			return fail(name, "holds "+article(k)+", not "+article(f.Kind))
		case f.Fields != nil:
			var sub Value // the group as it was, when its entry is in its place
			if i+1 < len(was) && was[i] == key {
				sub = was[i+1]
			}
			if err := a.checkView(v, sub, f.Fields, f); err != nil {
				return err
			}
		case f.Kind == Int:
			if p := f.intProblem(v.Int()); p != "" {
				return fail(name, p)
			}
		case f.HexLen > 0:
			if !f.ValidID(a.Str(v)) {
				return fail(name, f.idProblem())
			}
		}
	}
	return nil
}

func viewField(fields []ViewField, name string) *ViewField {
	for i := range fields {
		if fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

func article(k Kind) string {
	s := k.String()
	if strings.IndexByte("aeiou", s[0]) >= 0 {
		return "an " + s
	}
	return "a " + s
}

// appendOTLPJSON writes an OTLP record to a JSON output: its view as one
// object, with "time" (RFC 3339, nanoseconds) first, from the record's time.
func (r *Record) appendOTLPJSON(dst []byte) []byte {
	dst = append(dst, `{"time":"`...)
	dst = time.Unix(0, r.time).UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, '"')
	a := r.a
	for it := a.Iter(r.root); it.Next(); {
		dst = append(dst, ',')
		dst = a.appendString(dst, it.Key())
		dst = append(dst, ':')
		dst = a.AppendJSON(dst, it.Value())
	}
	return append(dst, '}')
}
