package record

import (
	"hash/maphash"
	"math"
)

// Regrouping: the OTLP encoders put all records with equal resource and
// equal scope in one ResourceLogs / ScopeLogs, whether they came in one or
// not, groups in the order they first appear and records in their order.

// OTLPEncoder encodes records as OTLP requests (protobuf or OTLP/JSON),
// regrouping them by resource and scope. Records of several arenas may be
// encoded together. An encoder is reused from request to request, which
// then allocates nothing; it is not safe for concurrent use.
type OTLPEncoder struct {
	// FromViews encodes every record from its view, never as the bytes
	// it came in (see appendWire): the output then depends on what the
	// records hold only, not on how edits made it, as tests that compare
	// bytes across backends need.
	FromViews bool

	res    []resGroup
	scopes []scopeGroup
	next   []int32 // the next record of the same scope group, -1 at its end
	recs   []*Record
	byHash map[uint64]int32 // a resource hash → its last group
	seed   maphash.Seed
	seeded bool
	buf    []byte // scratch for hex ids
}

// A group value: its arena, its map (Absent for a plain record, whose
// resource and scope are empty) and its hash.
type groupValue struct {
	a    *Arena
	v    Value
	hash uint64
}

type resGroup struct {
	groupValue
	sameHash    int32 // the previous group with the same hash, -1 if none
	first, last int32 // scope groups, linked by scopeGroup.next
}

type scopeGroup struct {
	groupValue
	next        int32
	first, last int32 // records, linked by OTLPEncoder.next
}

var (
	resourceKey = rootView[ViewResource].Name
	scopeKey    = rootView[ViewScope].Name
	resourceSig = keySig(resourceKey)
	scopeSig    = keySig(scopeKey)
)

// groupOf returns the record's resource or scope map, Absent when it has none.
func groupOf(r *Record, key string, sig uint8) Value {
	if r.layout != layoutOTLP || r.root.kind() != Map {
		return Value{}
	}
	v, _ := r.a.lookup(r.root, key, sig)
	if v.kind() != Map {
		return Value{}
	}
	return v
}

// group sorts recs into resource and scope groups.
func (e *OTLPEncoder) group(recs []*Record) {
	e.res, e.scopes, e.recs = e.res[:0], e.scopes[:0], recs
	if cap(e.next) < len(recs) {
		e.next = make([]int32, len(recs), len(recs)+len(recs)/2)
	}
	e.next = e.next[:len(recs)]
	if e.byHash == nil {
		e.byHash = make(map[uint64]int32)
	}
	clear(e.byHash)
	if !e.seeded {
		e.seed, e.seeded = maphash.MakeSeed(), true
	}
	lastRes, lastScope := int32(-1), int32(-1)
	for i, r := range recs {
		e.next[i] = -1
		rv := groupOf(r, resourceKey, resourceSig)
		sv := groupOf(r, scopeKey, scopeSig)
		if lastRes < 0 || !e.res[lastRes].same(r.a, rv) {
			lastRes, lastScope = e.resourceGroup(r.a, rv), -1
		}
		g := &e.res[lastRes]
		if lastScope < 0 || !e.scopes[lastScope].same(r.a, sv) {
			lastScope = e.scopeGroup(g, r.a, sv)
		}
		s := &e.scopes[lastScope]
		if s.first < 0 {
			s.first = int32(i)
		} else {
			e.next[s.last] = int32(i)
		}
		s.last = int32(i)
	}
}

// same reports whether v of arena a is the group's very value: the
// resource or scope that records of one decoded group share.
func (g *groupValue) same(a *Arena, v Value) bool {
	return g.a == a && g.v == v
}

func (e *OTLPEncoder) resourceGroup(a *Arena, v Value) int32 {
	h := e.hashView(a, v, resourceView)
	last, ok := e.byHash[h]
	for j := last; ok && j >= 0; j = e.res[j].sameHash {
		g := &e.res[j]
		if viewEqual(g.a, g.v, a, v, resourceView) {
			return j
		}
	}
	if !ok {
		last = -1
	}
	e.res = append(e.res, resGroup{groupValue: groupValue{a, v, h}, sameHash: last, first: -1, last: -1})
	n := int32(len(e.res) - 1)
	e.byHash[h] = n
	return n
}

func (e *OTLPEncoder) scopeGroup(g *resGroup, a *Arena, v Value) int32 {
	h := e.hashView(a, v, scopeView)
	for j := g.first; j >= 0; j = e.scopes[j].next {
		s := &e.scopes[j]
		if s.hash == h && viewEqual(s.a, s.v, a, v, scopeView) {
			return j
		}
	}
	e.scopes = append(e.scopes, scopeGroup{groupValue: groupValue{a, v, h}, next: -1, first: -1, last: -1})
	n := int32(len(e.scopes) - 1)
	if g.first < 0 {
		g.first = n
	} else {
		e.scopes[g.last].next = n
	}
	g.last = n
	return n
}

// viewField returns field f of a resource or scope map, with null and
// absent read as the field's default, as the encoder writes them.
func viewValue(a *Arena, m Value, f *ViewField) Value {
	var v Value
	if m.kind() == Map {
		v, _ = a.lookup(m, f.Name, 0)
	}
	if v.kind() == Absent || v.kind() == Null {
		switch f.Kind {
		case Map:
			return containerValue(Map, 0, 0)
		case String:
			return strValue(String, 0, 0, 0)
		case Int:
			return IntValue(0)
		}
	}
	return v
}

// viewEqual reports whether two resources (or two scopes) encode alike.
func viewEqual(xa *Arena, x Value, ya *Arena, y Value, fields []ViewField) bool {
	for i := range fields {
		f := &fields[i]
		if !encodeEqual(xa, viewValue(xa, x, f), ya, viewValue(ya, y, f)) {
			return false
		}
	}
	return true
}

// encodeEqual is ValueEqual but for floats, which are equal when their
// bits are: -0 and 0, or two NaNs of other payloads, encode differently,
// and a record must not get another's.
func encodeEqual(xa *Arena, x Value, ya *Arena, y Value) bool {
	return valueEqual(xa, x, ya, y, true)
}

func (e *OTLPEncoder) hashView(a *Arena, m Value, fields []ViewField) uint64 {
	var h uint64
	for i := range fields {
		h = h*31 + e.hashValue(a, viewValue(a, m, &fields[i]))
	}
	return h
}

// hashValue hashes v as ValueEqual compares it: maps in any key order.
func (e *OTLPEncoder) hashValue(a *Arena, v Value) uint64 {
	k := v.kind()
	switch k {
	case String, Bytes:
		return maphash.Bytes(e.seed, a.raw(v)) ^ uint64(k)
	case Float:
		f := v.Float()
		if f != f {
			return mix(uint64(k) << 56)
		}
		if f == 0 {
			f = 0 // -0 == 0
		}
		return mix(math.Float64bits(f) ^ uint64(k)<<56)
	case Array:
		h := uint64(k)
		for i := 0; i < int(v.n()); i++ {
			h = h*31 + e.hashValue(a, a.nodes[int(v.off())+i])
		}
		return mix(h)
	case Map:
		var h uint64
		for it := a.Iter(v); it.Next(); {
			h += mix(e.hashValue(a, it.Key()) ^ e.hashValue(a, it.Value())*0x9e3779b97f4a7c15)
		}
		return mix(h ^ uint64(k)<<56)
	}
	return mix(v.u ^ uint64(k)<<56)
}

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
