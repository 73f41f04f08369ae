package record

import (
	"math"
	"math/bits"
	"strconv"
)

// This file defines the view of an OTLP log record (docs/otlp.md): the
// fixed keys of its root map, in their order, with the kind each holds.
// The codecs build and read records by it, CheckOTLP validates edits
// against it, and the compiler's checker types `schema otlp` from it.

// ViewField is one fixed key of the OTLP view.
type ViewField struct {
	Name string
	// Kind is what the key holds: Absent means any value (the body);
	// Map with Fields is a closed object (resource, scope); Map without
	// Fields is a map of any values (the attributes).
	Kind   Kind
	Fields []ViewField
	// ID is the key's slot: the decoders build the root in slot order
	// and CheckOTLP and the encoder switch on it.
	ID viewID
	// HexLen is, for the trace and span ids, the length in bytes of the id
	// that the key holds as lower-case hex.
	HexLen int
	// Signed is, for an Int, that the field is an int32 on the wire; the
	// others are uint32s. A value outside its range cannot be written.
	Signed bool
}

// IntRange is the range of an Int field's values, and its wire type.
func (f *ViewField) IntRange() (lo, hi int64, wire string) {
	if f.Signed {
		return math.MinInt32, math.MaxInt32, "int32"
	}
	return 0, math.MaxUint32, "uint32"
}

// intProblem says what is wrong with n in Int field f, "" when it fits.
func (f *ViewField) intProblem(n int64) string {
	lo, hi, wire := f.IntRange()
	if n < lo || n > hi {
		return "is " + strconv.FormatInt(n, 10) + ", not a " + wire
	}
	return ""
}

// Refinable reports whether a schema may declare a type for the key: the
// body and the attribute maps; the others have the one type the view gives.
func (f *ViewField) Refinable() bool {
	return f.Kind == Absent || f.Kind == Map && f.Fields == nil
}

type viewID uint8

// The slots of the view. The values are the order of the keys in a decoded
// record's root map (and within resource and scope).
const (
	vBody viewID = iota
	vAttributes
	vSeverityText
	vSeverityNumber
	vObservedTime
	vTraceID
	vSpanID
	vFlags
	vEventName
	vDropped
	vResource
	vScope
	numRootFields
)

const (
	vResAttributes viewID = iota
	vResDropped
	vResSchemaURL
	numResourceFields
)

const (
	vScopeName viewID = iota
	vScopeVersion
	vScopeAttributes
	vScopeDropped
	vScopeSchemaURL
	numScopeFields
)

var resourceView = []ViewField{
	{Name: "attributes", Kind: Map, ID: vResAttributes},
	{Name: "dropped_attributes_count", Kind: Int, ID: vResDropped},
	{Name: "schema_url", Kind: String, ID: vResSchemaURL},
}

var scopeView = []ViewField{
	{Name: "name", Kind: String, ID: vScopeName},
	{Name: "version", Kind: String, ID: vScopeVersion},
	{Name: "attributes", Kind: Map, ID: vScopeAttributes},
	{Name: "dropped_attributes_count", Kind: Int, ID: vScopeDropped},
	{Name: "schema_url", Kind: String, ID: vScopeSchemaURL},
}

var rootView = []ViewField{
	{Name: "body", Kind: Absent, ID: vBody},
	{Name: "attributes", Kind: Map, ID: vAttributes},
	{Name: "severity_text", Kind: String, ID: vSeverityText},
	{Name: "severity_number", Kind: Int, ID: vSeverityNumber, Signed: true},
	{Name: "observed_time", Kind: Timestamp, ID: vObservedTime},
	{Name: "trace_id", Kind: String, ID: vTraceID, HexLen: 16},
	{Name: "span_id", Kind: String, ID: vSpanID, HexLen: 8},
	{Name: "flags", Kind: Int, ID: vFlags},
	{Name: "event_name", Kind: String, ID: vEventName},
	{Name: "dropped_attributes_count", Kind: Int, ID: vDropped},
	{Name: "resource", Kind: Map, Fields: resourceView, ID: vResource},
	{Name: "scope", Kind: Map, Fields: scopeView, ID: vScope},
}

// OTLPView returns the fixed keys of an OTLP record's root map, in order.
// The slice is shared: do not modify it.
func OTLPView() []ViewField { return rootView }

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
		k := rootKeys[vBody]
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
	has := v.has[OTLPRoot] &^ (1<<vResource | 1<<vScope)
	if v.has[OTLPResource] != 0 {
		root[vResource] = a.viewGroup(resourceKeys[:], v.resource[:], v.has[OTLPResource], kref)
		has |= 1 << vResource
	}
	if v.has[OTLPScope] != 0 {
		root[vScope] = a.viewGroup(scopeKeys[:], v.scope[:], v.has[OTLPScope], kref)
		has |= 1 << vScope
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
