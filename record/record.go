package record

import "unsafe"

// layout is the shape of a record in msgpack.
type layout uint8

const (
	// layoutMap is a bare map (and the layout of records decoded from JSON).
	layoutMap layout = iota
	// layoutEventV1 is Fluent Bit's [timestamp, map].
	layoutEventV1
	// layoutEventV2 is Fluent Bit's [[timestamp, metadata], map].
	layoutEventV2
	// layoutOTLP is an OTLP log record: the root is its view (otlp_model.go),
	// written as a map in msgpack.
	layoutOTLP
)

// How an event's timestamp was written, so that it is written back the same way.
const (
	timeEventTime uint8 = iota // ext type 0, seconds and nanoseconds
	timeInt                    // integer seconds
	timeFloat                  // float seconds
	timeExt                    // msgpack timestamp ext type -1
)

// otlpTimeUnset marks an OTLP record whose time_unix_nano was 0, so that
// its time is its observed time and is written back as 0 while it is.
const otlpTimeUnset uint8 = 1

// newOTLPRecord makes an OTLP record of root (a view) by the view's rule
// for time: %time is time_unix_nano, or the observed time when that is 0.
func (a *Arena) newOTLPRecord(root Value, unixNano, observed int64) *Record {
	r := a.newRecord()
	r.base, r.root = root, root
	r.layout = layoutOTLP
	if unixNano == 0 {
		unixNano, r.timeFmt = observed, otlpTimeUnset
	}
	r.time, r.baseTime = unixNano, unixNano
	return r
}

// otlpTimeUnixNano is the time_unix_nano to write for an OTLP record whose
// view has the observed time observed: 0 while a time that was unset is
// still the observed time, so that a round trip does not invent a time.
func (r *Record) otlpTimeUnixNano(observed int64) int64 {
	if r.timeFmt == otlpTimeUnset && r.time == observed {
		return 0
	}
	return r.time
}

// Record is one log record: a map at the root, a tag, a time and, for
// Fluent Bit v2 events, a metadata map. Records live in an Arena and are
// valid until its next Reset.
//
// Get, and the Arena's reads of the values it returns (Arena.Key, Index,
// Len, Iter, Bytes, Str), see every edit made so far. A map or array Value
// read before an edit is a snapshot: read the path again after editing it.
type Record struct {
	a          *Arena
	root, base Value
	tag        Value
	baseTag    Value
	time       int64
	baseTime   int64
	// decoded is the root as decoded, which the record's source bytes
	// (src) may stand for in output while the root is still it.
	decoded Value
	// src is what stands for decoded, Absent when nothing does: for a
	// record decoded from text, its text (text: a JSON line, a String, or
	// a msgpack map, Bytes; see passThrough); for an OTLP record, its
	// LogRecord as it came in protobuf (wire), which stands for the
	// record while its root is decoded (or only has attributes added) and
	// its time unchanged (see appendWire). One field holds both: no record
	// has both, and every record pays for what is in Record.
	src Value
	// ext is the record's textState in its arena, +1; 0 when it has none
	// (records not decoded from text): what only some records use is
	// there, so that the others do not pay for it (docs/records.md).
	ext     uint32
	layout  layout // the msgpack layout decoded from
	timeFmt uint8
	flags   uint8 // recProj, recTimeSet, recDeep
}

// Record flags.
const (
	// recProj is set when the root is a projection (DecodeOTLPProjection)
	// that wire stands behind: encoders write wire, or the LogRecord
	// decoded whole from it with the projection's edits (wholeRoot).
	recProj uint8 = 1 << iota
	// recTimeSet is set once the time changed: wire holds the old one.
	recTimeSet
	// recDeep is set when an edit may have left writable containers below
	// the root (anything but the one-key edits of the root map), so that
	// Commit must walk the tree to freeze them.
	recDeep
)

// text is the text the record was decoded from, Absent when there is none.
func (r *Record) text() Value {
	if r.layout == layoutOTLP {
		return Value{}
	}
	return r.src
}

// wire is an OTLP record's LogRecord as it came, Absent when there is none.
func (r *Record) wire() Value {
	if r.layout != layoutOTLP {
		return Value{}
	}
	return r.src
}

// Arena returns the arena the record lives in.
func (r *Record) Arena() *Arena { return r.a }

// IsOTLP reports whether the record is an OTLP log record, whose root is
// the view of docs/otlp.md.
func (r *Record) IsOTLP() bool { return r.layout == layoutOTLP }

// Root returns the root map, edits included.
func (r *Record) Root() Value { return r.root }

// Tag returns the record's tag as a view into the arena.
func (r *Record) Tag() []byte { return r.a.Bytes(r.tag) }

// TagValue returns the tag as a String value (Absent when there is none).
func (r *Record) TagValue() Value { return r.tag }

// SetTag copies tag into the arena and makes it the record's tag.
func (r *Record) SetTag(tag []byte) { r.tag = r.a.NewString(tag) }

// SetTagValue sets the tag to a String value of the record's arena.
func (r *Record) SetTagValue(v Value) {
	if v.kind() == String || v.kind() == Bytes {
		v.setKind(String)
		r.tag = v
	}
}

// Time returns the record's time in unix nanoseconds.
func (r *Record) Time() int64 { return r.time }

// SetTime sets the record's time in unix nanoseconds.
func (r *Record) SetTime(unixNanos int64) {
	if unixNanos != r.time {
		r.flags |= recTimeSet // wire holds the old time
	}
	r.time = unixNanos
}

// Commit makes the current state (edits, tag, time) the state that Discard
// returns to; a pipeline uses it between policy stages.
func (r *Record) Commit() {
	// The committed maps may not change in place any more: later edits
	// copy them again.
	if r.root.writable() { // only an edited root is (and needs the walk)
		if r.flags&recDeep != 0 {
			r.root = r.a.freeze(r.root)
		} else {
			r.root.h &^= flagWritable
			r.root.ref = 0
		}
	}
	r.flags &^= recDeep
	r.base, r.baseTag, r.baseTime = r.root, r.tag, r.time
	if r.ext != 0 {
		t := r.ts()
		t.baseJr = t.jr
	}
}

// Discard drops every edit since the record was decoded (or last
// committed): root, tag and time are as they were.
func (r *Record) Discard() {
	r.root, r.tag, r.time = r.base, r.baseTag, r.baseTime
	if r.ext != 0 {
		t := r.ts()
		t.jr = t.baseJr
	}
}

// Edited reports whether the record has edits that Discard would drop.
func (r *Record) Edited() bool {
	return r.root != r.base || r.tag != r.baseTag || r.time != r.baseTime
}

// Get returns the value at path p, edits included.
func (r *Record) Get(p Path) (Value, bool) {
	if len(p) == 1 && !p[0].isIndex { // most reads: a key of the root
		return r.getTop(&p[0])
	}
	return r.getPath(p)
}

// getTop is Get of key step s of the root map.
func (r *Record) getTop(s *Step) (Value, bool) {
	j := r.findRootStep(s)
	if j < 0 {
		return Value{}, false
	}
	return r.a.nodes[j+1], true
}

func (r *Record) getPath(p Path) (Value, bool) {
	v := r.root
	nodes := r.a.nodes
	for i := range p {
		s := &p[i]
		if s.isIndex {
			if v.kind() != Array {
				return Value{}, false
			}
			n, j := int(v.n()), s.index
			if j < 0 {
				j += n
			}
			if uint(j) >= uint(n) {
				return Value{}, false
			}
			v = nodes[int(v.off())+j]
			continue
		}
		if v.kind() != Map {
			return Value{}, false
		}
		j := r.findIn(i, v, s)
		if j < 0 {
			return Value{}, false
		}
		v = nodes[j+1]
	}
	return v, true
}

// Get returns the value at path p inside v (a map or array of a), as
// Record.Get does from a record's root: for a caller that kept a root
// (or any value) from before edits.
func (a *Arena) Get(v Value, p Path) (Value, bool) {
	nodes := a.nodes
	for i := range p {
		s := &p[i]
		if s.isIndex {
			if v.kind() != Array {
				return Value{}, false
			}
			j, ok := normIndex(s.index, int(v.n()))
			if !ok {
				return Value{}, false
			}
			v = nodes[int(v.off())+j]
			continue
		}
		if v.kind() != Map {
			return Value{}, false
		}
		j := a.findStep(v, s)
		if j < 0 {
			return Value{}, false
		}
		v = nodes[j+1]
	}
	return v, true
}

// keyFilter is the key signatures of a map, when known.
type keyFilter struct {
	sigs sigSet
	ok   bool
}

// findRoot is Arena.find in the root map.
func (r *Record) findRoot(key string, sig uint8) int {
	if r.ext != 0 && r.ts().missing(r.root, sig) {
		return -1
	}
	return r.a.find(r.root, key, sig)
}

// findRootStep is findRoot for key step s (see Arena.findStep).
func (r *Record) findRootStep(s *Step) int {
	root := r.root
	if r.ext != 0 && r.ts().missing(root, s.sig) {
		return -1
	}
	// Arena.findStep's first try, here: most lookups are of the root and
	// hit where the key was last, and a call less is a tenth of them.
	a := r.a
	if mo := s.memo; mo != nil && mo.pos < root.n() {
		i := int(root.off()) + 2*int(mo.pos)
		// The root's entries lie in a.nodes, and entry mo.pos is one of them.
		k := (*Value)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.nodes)), uintptr(i)*unsafe.Sizeof(Value{})))
		if n := len(s.key); uint32(k.u) == uint32(n) {
			buf := a.slab
			if k.ref != 0 {
				buf = a.bufs[k.ref-1]
			}
			// Arena.hintIs, written out.
			off := int(k.off())
			p := unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), off)
			switch {
			case n < 8 && off+8 <= len(buf):
				if word(p)&mo.mask == mo.w0 {
					return i
				}
			case n >= 8 && n <= 16:
				if word(p) == mo.w0 && word(unsafe.Add(p, n-8)) == mo.w1 {
					return i
				}
			default:
				if string(buf[off:off+n]) == s.key {
					return i
				}
			}
		}
		return a.findAndNote(root, s, mo)
	}
	return a.findStep(root, s)
}

// findIn finds step s of a path in map m, which is the root when i is 0.
func (r *Record) findIn(i int, m Value, s *Step) int {
	if i == 0 {
		return r.findRootStep(s)
	}
	return r.a.findStep(m, s)
}

// addRootKey notes a key added to the root map.
func (r *Record) addRootKey(k Value) {
	if r.ext == 0 {
		return
	}
	t := r.ts()
	if t.keysAt != r.root.off()+1 {
		return
	}
	sig := k.sig()
	if sig == 0 {
		sig = keySig(r.a.raw(k))
	}
	t.keys.add(sig)
}
