package policyrunprocessor

import (
	"github.com/policyrun/policyrun/record"
)

// This file maps the paths of the OTLP view (record.OTLPView: the fixed
// keys of docs/otlp.md) to the parts of pdata that hold them. The view's
// names, order and kinds are record's; only the pdata side is spelled
// here, by record's slot constants, and TestFieldsCoverView holds the two
// together.

// field is a fixed key of the view, or one of its groups (the root, the
// resource, the scope), as the processor reads and writes it in pdata.
type field uint8

const (
	fNone field = iota // not a key of the view
	fRoot              // `.`, the whole record
	fBody
	fAttributes
	fSeverityText
	fSeverityNumber
	fObservedTime
	fTraceID
	fSpanID
	fFlags
	fEventName
	fDropped
	fResource // `.resource` whole
	fResAttributes
	fResDropped
	fResSchemaURL
	fScope // `.scope` whole
	fScopeName
	fScopeVersion
	fScopeAttributes
	fScopeDropped
	fScopeSchemaURL
	numFields
)

// fieldInfo is what the processor knows of a field: its path in the view,
// the kind it holds, and the fields of a group.
type fieldInfo struct {
	path record.Path
	kind record.Kind // Absent: any value (the body); Map: attributes or a group
	subs []field     // the fields of a group, in the view's order
	// view is the key's entry in the view (nil for the root): its id
	// rule, for the trace and span ids.
	view *record.ViewField
	// slot is the key's index among its group's keys (record.OTLPValues).
	slot int
}

var fields [numFields]fieldInfo

// The processor's field of each key of the view, by the key's slot in its
// group: the one fact this file adds to record's table (which part of
// pdata holds the key, in write.go and load.go, goes by these fields).
var (
	rootFields = [record.OTLPKeys]field{
		record.ViewBody: fBody, record.ViewAttributes: fAttributes, record.ViewSeverityText: fSeverityText,
		record.ViewSeverityNumber: fSeverityNumber, record.ViewObservedTime: fObservedTime, record.ViewTraceID: fTraceID,
		record.ViewSpanID: fSpanID, record.ViewFlags: fFlags, record.ViewEventName: fEventName,
		record.ViewDropped: fDropped, record.ViewResource: fResource, record.ViewScope: fScope,
	}
	groupFields = map[record.ViewID][]field{
		record.ViewResource: {record.ViewResAttributes: fResAttributes, record.ViewResDropped: fResDropped,
			record.ViewResSchemaURL: fResSchemaURL},
		record.ViewScope: {record.ViewScopeName: fScopeName, record.ViewScopeVersion: fScopeVersion,
			record.ViewScopeAttributes: fScopeAttributes, record.ViewScopeDropped: fScopeDropped,
			record.ViewScopeSchemaURL: fScopeSchemaURL},
	}
	// rootLeaves are the root's fields in the view's order.
	rootLeaves []field
)

func init() {
	for i := range record.OTLPView() {
		vf := &record.OTLPView()[i]
		f := rootFields[vf.ID]
		rootLeaves = append(rootLeaves, f)
		fields[f] = fieldInfo{path: record.NewPath(vf.Name), kind: vf.Kind, view: vf, slot: int(vf.ID)}
		for j := range vf.Fields {
			sub := &vf.Fields[j]
			g := groupFields[vf.ID][sub.ID]
			fields[f].subs = append(fields[f].subs, g)
			fields[g] = fieldInfo{path: record.NewPath(vf.Name, sub.Name), kind: sub.Kind, view: sub, slot: int(sub.ID)}
		}
	}
	fields[fRoot] = fieldInfo{path: record.Path{}, kind: record.Map, subs: rootLeaves}
}

// resolve returns the field a path of the view lies in and the number of
// steps that name it (the rest of the path lies inside its value); fNone
// for a path outside the view (which a record can hold only briefly: a
// run that leaves one faults otlp_view).
func resolve(p record.Path) (field, int) {
	if len(p) == 0 {
		return fRoot, 0
	}
	for _, f := range rootLeaves {
		if fields[f].path[0].Key() != p[0].Key() {
			continue
		}
		if fields[f].subs == nil || len(p) == 1 {
			return f, 1
		}
		for _, g := range fields[f].subs {
			if fields[g].path[1].Key() == p[1].Key() {
				return g, 2
			}
		}
		return fNone, 0
	}
	return fNone, 0
}

// resolved is a path resolved: its field and the steps that name it.
type resolved struct {
	f field
	k int
}

// resolveAll resolves every path of ps, by index.
func resolveAll(ps []record.Path) []resolved {
	out := make([]resolved, len(ps))
	for i, p := range ps {
		out[i].f, out[i].k = resolve(p)
	}
	return out
}

// holdsMap reports whether the field holds a map of any values (the
// attributes), so that a path may go on inside it.
func (f field) holdsMap() bool { return fields[f].kind == record.Map && fields[f].subs == nil }

// group says which part of pdata a field lies in: the view's group of
// keys it is one of.
type group = record.OTLPGroup

const (
	inLog      = record.OTLPRoot
	inResource = record.OTLPResource
	inScope    = record.OTLPScope
)

func (f field) group() group {
	switch {
	case f >= fResource && f <= fResSchemaURL:
		return inResource
	case f >= fScope && f <= fScopeSchemaURL:
		return inScope
	}
	return inLog
}

// loadPath is a path to project a record on, resolved: the field, the
// path, and the steps that name the field (the rest goes inside it).
type loadPath struct {
	f    field
	path record.Path
	k    int
	// keys, when not nil, stand for the paths path+key of a map field,
	// one key deep each: the field's projection is the map of those keys,
	// built in one go.
	keys []string
	// deep says the path goes inside a field's maps further than keys
	// do: it is projected with Record.Set, after the record is made.
	deep bool
}

// loadPaths resolves the paths of a projection, a group or the whole
// record standing for each of its leaves; paths outside the view are
// left out (they hold nothing).
func loadPaths(ps []record.Path) []loadPath {
	var out []loadPath
	var add func(f field, p record.Path, k int)
	add = func(f field, p record.Path, k int) {
		if subs := fields[f].subs; subs != nil && len(p) == k {
			for _, g := range subs {
				add(g, fields[g].path, len(fields[g].path))
			}
			return
		}
		if f != fNone {
			out = append(out, loadPath{f: f, path: p, k: k})
		}
	}
	for _, p := range ps {
		f, k := resolve(p)
		add(f, p, k)
	}
	// The paths are sorted: those inside one field are together.
	var merged []loadPath
	for i := 0; i < len(out); {
		lp := out[i]
		j := i
		for j < len(out) && out[j].f == lp.f && len(out[j].path) == lp.k+1 && (lp.f == fBody || lp.f.holdsMap()) {
			j++
		}
		if j == i {
			merged = append(merged, lp)
			i++
			continue
		}
		g := loadPath{f: lp.f, path: lp.path[:lp.k], k: lp.k}
		for _, q := range out[i:j] {
			g.keys = append(g.keys, q.path[lp.k].Key())
		}
		merged = append(merged, g)
		i = j
	}
	for i := range merged {
		lp := &merged[i]
		lp.deep = lp.keys == nil && len(lp.path) > lp.k && (lp.f == fBody || lp.f.holdsMap())
	}
	return merged
}
