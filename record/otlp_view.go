package record

import "math/bits"

// OTLP records made from the view (otlp_model.go): at its defaults, or of
// given keys only, as embedders and the generators build them.

// OTLPView returns the fixed keys of an OTLP record's root map, in order.
// The slice is shared: do not modify it.
func OTLPView() []ViewField { return rootView }

// OTLPPath returns the path of the root's key id (.severity_number for
// ViewSeverityNumber), for Record.Get and Set. The path is shared: do
// not modify it.
func OTLPPath(id ViewID) Path { return rootPaths[id] }

var rootPaths = func() (ps [numRootFields]Path) {
	for _, f := range rootView {
		ps[f.ID] = NewPath(f.Name)
	}
	return ps
}()

// NewOTLPRecord returns an OTLP log record of a holding what an empty
// LogRecord decodes to: every key of the view, in the view's order, at its
// default ("" for strings and ids, 0, time 0, empty maps; the resource and
// the scope with theirs), and body, unless it is Absent (no body). Edit it
// with Record.Set and SetTime (the time_unix_nano; 0 reads as the observed
// time), then Commit it to make it as a decoded record is. The encoders
// regroup records whose resource and scope are equal; records that share
// one resource (or scope) Value are grouped without a comparison.
//
// The records of one arena share the nodes of their defaults (built once
// after each Reset) until an edit copies them, as decoded records share
// theirs: a new record costs a Record and, with a body, its root's entries.
func (a *Arena) NewOTLPRecord(body Value) *Record {
	if body.isContainer() && body.writable() {
		body = a.share(body)
	}
	root := a.otlpDefaults()
	if body.kind() != Absent {
		// The body is the first key, the defaults follow.
		n := int(root.n())
		first := a.alloc(2 * (n + 1)) // may move a.nodes: slice it after
		k := rootKeys[ViewBody]
		k.ref = a.otlpKeys
		a.nodes[first], a.nodes[first+1] = k, body
		copy(a.nodes[first+2:], a.nodes[root.off():int(root.off())+2*n])
		root = containerValue(Map, uint32(first), uint32(n+1))
	}
	return a.newOTLPRecord(root, 0, 0)
}

// The number of fixed keys of the view, of its resource and of its scope:
// the lengths of OTLPView() and of its resource's and scope's Fields.
const (
	OTLPKeys         = int(numRootFields)
	OTLPResourceKeys = int(numResourceFields)
	OTLPScopeKeys    = int(numScopeFields)
)

// OTLPGroup names a group of the view's fixed keys: the record's own, its
// resource's or its scope's.
type OTLPGroup uint8

const (
	OTLPRoot OTLPGroup = iota
	OTLPResource
	OTLPScope
)

// OTLPValues are values for the fixed keys of an OTLP record, for
// NewOTLPRecordOf, each at the index of its key in its group: i in
// OTLPRoot for OTLPView()[i], in OTLPResource and OTLPScope for the
// Fields of the view's resource and scope. A key holds no value until
// Set gives it one; the root's keys for the resource and the scope are
// not read (the keys of OTLPResource and OTLPScope are). The zero value
// holds none, and so does one after Reset: an embedder that fills a few
// keys record after record pays for those, not for the view's width.
type OTLPValues struct {
	root     [OTLPKeys]Value
	resource [OTLPResourceKeys]Value
	scope    [OTLPScopeKeys]Value
	has      [3]uint32 // per group, bit i: key i holds a value
}

// Set gives key i of group g the value v (Absent: no value).
func (v *OTLPValues) Set(g OTLPGroup, i int, x Value) {
	v.vals(g)[i] = x
	if x.kind() == Absent {
		v.has[g] &^= 1 << i
	} else {
		v.has[g] |= 1 << i
	}
}

// Get returns the value of key i of group g, Absent when it has none.
func (v *OTLPValues) Get(g OTLPGroup, i int) Value {
	if v.has[g]&(1<<i) == 0 {
		return Value{}
	}
	return v.vals(g)[i]
}

// Reset takes every key's value away.
func (v *OTLPValues) Reset() { v.has = [3]uint32{} }

func (v *OTLPValues) vals(g OTLPGroup) []Value {
	switch g {
	case OTLPResource:
		return v.resource[:]
	case OTLPScope:
		return v.scope[:]
	}
	return v.root[:]
}

// NewOTLPRecordOf returns an OTLP log record of a that holds v's values
// and no other key: a part of a record, as an embedder that converts only
// what a program reads and writes builds it (a projection, docs/vm.md).
// The resource and the scope are there when v gives one of their keys a
// value. Keys are in the view's order, as in a decoded record; a missing
// key reads as missing (a program over a projection reads only what it
// was given), and is written as its default. The values must be of a;
// they are not checked against the view (give each key its kind:
// CheckOTLP checks what runs change, not these). A record of every key
// is NewOTLPRecord's.
func (a *Arena) NewOTLPRecordOf(v *OTLPValues) *Record {
	kref := a.viewKeysRef()
	root := v.root
	has := v.has[OTLPRoot] &^ (1<<ViewResource | 1<<ViewScope)
	if v.has[OTLPResource] != 0 {
		root[ViewResource] = a.viewGroup(resourceKeys[:], v.resource[:], v.has[OTLPResource], kref)
		has |= 1 << ViewResource
	}
	if v.has[OTLPScope] != 0 {
		root[ViewScope] = a.viewGroup(scopeKeys[:], v.scope[:], v.has[OTLPScope], kref)
		has |= 1 << ViewScope
	}
	r := a.newRecord()
	r.base = a.viewGroup(rootKeys[:], root[:], has, kref)
	r.root = r.base
	r.layout = layoutOTLP
	r.timeFmt = otlpTimeUnset
	return r
}

// viewGroup builds the map of the keys that has marks, in the order of
// keys (the Values of a group's keys, otlp_decode.go), their values from
// vals and the keys' bytes from the arena's input buffer kref (viewKeys).
func (a *Arena) viewGroup(keys, vals []Value, has uint32, kref uint32) Value {
	n := bits.OnesCount32(has)
	first := a.alloc(2 * n) // may move a.nodes: index it after
	j := first
	for ; has != 0; has &= has - 1 {
		i := bits.TrailingZeros32(has)
		val := vals[i]
		if val.isContainer() && val.writable() {
			val = a.share(val)
		}
		k := keys[i]
		k.ref = kref
		a.nodes[j], a.nodes[j+1] = k, val
		j += 2
	}
	return containerValue(Map, uint32(first), uint32(n))
}

// otlpDefaults returns the root of an OTLP record at the view's defaults
// without a body, built once after each Reset.
func (a *Arena) otlpDefaults() Value {
	if a.otlpEmpty.kind() != Map {
		a.otlpKeys = a.viewKeysRef()
		a.otlpEmpty = a.viewDefaults(rootView, a.otlpKeys, Value{})
	}
	return a.otlpEmpty
}

// viewDefaults builds a map of fields at their defaults, keys from the
// arena's input buffer kref (viewKeys); the Absent field holds body.
func (a *Arena) viewDefaults(fields []ViewField, kref uint32, body Value) Value {
	var vals [numRootFields]Value
	n := 0
	for i := range fields {
		f := &fields[i]
		var v Value
		switch f.Kind {
		case Absent:
			v = body
		case Map:
			if f.Fields != nil {
				v = a.viewDefaults(f.Fields, kref, Value{})
			} else {
				v = containerValue(Map, uint32(len(a.nodes)), 0)
			}
		case String:
			v = strValue(String, 0, 0, 0)
		case Int:
			v = IntValue(0)
		case Timestamp:
			v = TimestampValue(0)
		}
		if v.kind() != Absent {
			n++
		}
		vals[f.ID] = v
	}
	keys := viewKeyValues(fields)
	first := a.alloc(2 * n)
	j := first
	for i := range fields {
		id := fields[i].ID
		if vals[id].kind() == Absent {
			continue
		}
		k := keys[id]
		k.ref = kref
		a.nodes[j], a.nodes[j+1] = k, vals[id]
		j += 2
	}
	return containerValue(Map, uint32(first), uint32(n))
}

// viewKeyValues returns the key Values (otlp_decode.go) of a field list.
func viewKeyValues(fields []ViewField) []Value {
	switch &fields[0] {
	case &resourceView[0]:
		return resourceKeys[:]
	case &scopeView[0]:
		return scopeKeys[:]
	}
	return rootKeys[:]
}

// viewKeysRef returns the ref of viewKeys as one of the arena's input
// buffers, adding it unless it is the last one already.
func (a *Arena) viewKeysRef() uint32 {
	if n := len(a.bufs); n > 0 && len(a.bufs[n-1]) == len(viewKeys) && &a.bufs[n-1][0] == &viewKeys[0] {
		return uint32(n)
	}
	return a.addBuf(viewKeys)
}
