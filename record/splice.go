package record

import "unsafe"

// Splicing: the output of an edited record that was decoded from text (a
// JSON line, a msgpack body) copies the runs of the text whose entries the
// edits left alone and encodes only the rest. The rule is the same in both
// formats; what differs — how a container opens and closes, what parts two
// entries, where an entry lies in the text — is said once, in splicer's
// methods after spliceMap, from what json_splice.go and msgpack_splice.go
// know of their text:
//
//   - an entry of a map whose key and value are the very nodes of a decoded
//     entry (the same handles) is that entry's bytes; consecutive decoded
//     entries are one run of the text, what lies between them included;
//   - an entry whose key is decoded but whose value changed writes the key
//     and then the value: a map edited below is spliced the same way inside
//     its own bytes, against the decoded map it is a copy of;
//   - an array that kept its length is matched element by element;
//   - a decoded map stored elsewhere (a lifted value, say) is its bytes;
//   - anything else is encoded in full.
//
// Entries are written in the order of the current map, so the output has
// the key order of a full encode, and each value is the same value as a
// full encode writes, spelled as the text spelled it.

// splicer splices the record r's output over its text t, in JSON or, with
// msgpack set, in msgpack. Its methods down to spliceMap are the rule;
// those after it say what differs between the two formats, each in one
// place.
type splicer struct {
	r       *Record
	t       []byte
	msgpack bool
}

// span is where a value lies in the text, t[s:e]; s < 0 when not known.
type span struct{ s, e int }

var noSpan = span{-1, 0}

// decodedMap is a decoded map being spliced, at where it lies in the text.
// pos is -1, or, once a JSON map was scanned (scanMap), where in the
// arena's pos entry 0's start and end are (then entry j's are at pos+2j
// and pos+2j+1).
type decodedMap struct {
	m   Value
	at  span
	pos int
}

// spliceValue appends v, which stands where the decoded value orig stood
// (orig is Absent when v has no decoded counterpart), to dst; at is where
// orig lies when the caller knows it.
func (f *splicer) spliceValue(dst []byte, v, orig Value, at span) []byte {
	r := f.r
	a := r.a
	switch v.kind() {
	case Map:
		if r.spanned(v) {
			if out, ok := f.decodedMap(dst, v, orig, at); ok {
				return out
			}
			return f.encode(dst, v)
		}
		if orig.kind() == Map && r.spanned(orig) {
			if at, ok := f.place(orig, at); ok {
				return f.spliceMap(dst, v, orig, at)
			}
		}
		first, n := int(v.off()), int(v.n())
		dst = f.begin(dst, Map, n)
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = f.sep(dst)
			}
			dst = f.key(dst, a.nodes[first+2*i])
			dst = f.spliceValue(dst, a.nodes[first+2*i+1], Value{}, noSpan)
		}
		return f.end(dst, Map)
	case Array:
		var of int
		same := orig.kind() == Array && orig.n() == v.n() && r.spanned(orig)
		if same {
			of = int(orig.off())
		}
		first, n := int(v.off()), int(v.n())
		dst = f.begin(dst, Array, n)
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = f.sep(dst)
			}
			var o Value
			if same {
				o = a.nodes[of+i]
			}
			dst = f.spliceValue(dst, a.nodes[first+i], o, noSpan)
		}
		return f.end(dst, Array)
	}
	return f.encode(dst, v)
}

// spliceMap appends the map cur, an edited copy of the decoded map orig,
// which lies at at, to dst: runs of orig's entries that cur still holds
// unchanged are copied from the text, the rest is written.
func (f *splicer) spliceMap(dst []byte, cur, orig Value, at span) []byte {
	r := f.r
	a := r.a
	nodes := a.nodes
	dm := decodedMap{m: orig, at: at, pos: -1}
	base := len(a.pos)
	of, on := int(orig.off()), int(orig.n())
	cf, cn := int(cur.off()), int(cur.n())
	dst = f.begin(dst, Map, cn)
	sep := false
	runFirst, runLast := -1, 0 // the entries of orig to copy, not yet written
	next := 0                  // the entry of orig after the last one matched
	for e := 0; e < cn; e++ {
		// A stretch of entries as they were, compared word by word: a
		// copy made by an edit keeps the decoded entries it did not
		// change in their order, most often all but a few.
		k, v := nodes[cf+2*e], nodes[cf+2*e+1]
		if next < on && k == nodes[of+2*next] {
			if p := sameEntries(nodes[cf+2*e:cf+2*cn], nodes[of+2*next:of+2*on]); p > 0 {
				if runFirst < 0 || next != runLast+1 {
					if runFirst >= 0 {
						dst = f.appendRun(dst, &dm, runFirst, runLast, sep)
						sep = true
					}
					runFirst = next
				}
				runLast, next, e = next+p-1, next+p, e+p-1
				continue
			}
		}
		j := findEntry(nodes, of, next, on, k)
		if j >= 0 {
			next = j + 1
			if v == nodes[of+2*j+1] {
				if runFirst < 0 || j != runLast+1 {
					if runFirst >= 0 {
						dst = f.appendRun(dst, &dm, runFirst, runLast, sep)
						sep = true
					}
					runFirst = j
				}
				runLast = j
				continue
			}
		}
		if runFirst >= 0 {
			dst = f.appendRun(dst, &dm, runFirst, runLast, sep)
			sep, runFirst = true, -1
		}
		if sep {
			dst = f.sep(dst)
		}
		sep = true
		dst = f.key(dst, k)
		if j < 0 && next < on && v == nodes[of+2*next+1] {
			// A new key holding the value of the next decoded entry,
			// the same handle (a rename takes the value and sets it
			// again): its value as the text spells it.
			dst = f.value(dst, &dm, next)
			next++
			continue
		}
		if kind := v.kind(); kind != Map && kind != Array {
			dst = f.encode(dst, v)
			continue
		}
		o, vat := Value{}, noSpan
		if j >= 0 {
			if o = nodes[of+2*j+1]; o.kind() == Map && r.spanned(o) {
				vat = f.valueSpan(&dm, j)
			}
		}
		dst = f.spliceValue(dst, v, o, vat)
	}
	if runFirst >= 0 {
		dst = f.appendRun(dst, &dm, runFirst, runLast, sep)
	}
	a.pos = a.pos[:base]
	return f.end(dst, Map)
}

// appendRun appends entries first to last of dm as they lie in the text,
// parted from what precedes them when sep is set.
func (f *splicer) appendRun(dst []byte, dm *decodedMap, first, last int, sep bool) []byte {
	if sep {
		dst = f.sep(dst)
	}
	return f.run(dst, dm, first, last)
}

// begin appends the start of a map or array (kind) of n entries or
// elements.
func (f *splicer) begin(dst []byte, kind Kind, n int) []byte {
	switch {
	case f.msgpack && kind == Map:
		return appendHeader(dst, 0x80, 15, 0, 0xde, 0xdf, n)
	case f.msgpack:
		return appendHeader(dst, 0x90, 15, 0, 0xdc, 0xdd, n)
	case kind == Map:
		return append(dst, '{')
	}
	return append(dst, '[')
}

// end appends the end of a map or array (kind): msgpack's have none.
func (f *splicer) end(dst []byte, kind Kind) []byte {
	switch {
	case f.msgpack:
		return dst
	case kind == Map:
		return append(dst, '}')
	}
	return append(dst, ']')
}

// sep appends what parts two entries or elements.
func (f *splicer) sep(dst []byte) []byte {
	if f.msgpack {
		return dst
	}
	return append(dst, ',')
}

// key appends a map key and what parts it from its value.
func (f *splicer) key(dst []byte, k Value) []byte {
	if f.msgpack {
		return appendStr(dst, f.r.a.raw(k))
	}
	return append(f.r.a.appendString(dst, k), ':')
}

// encode appends v in full.
func (f *splicer) encode(dst []byte, v Value) []byte {
	if f.msgpack {
		return f.r.a.appendMsgpack(dst, v)
	}
	return f.r.a.AppendJSON(dst, v)
}

// decodedMap appends the decoded map v, unedited, from the text (at is
// where v lies when v is orig and the caller knows it); false when the
// text cannot tell where it lies.
func (f *splicer) decodedMap(dst []byte, v, orig Value, at span) ([]byte, bool) {
	if f.msgpack {
		n := int(v.n())
		s, _ := f.r.msgpackEntry(v, 0, f.t)
		_, e := f.r.msgpackEntry(v, n-1, f.t)
		return append(f.begin(dst, Map, n), f.t[s:e]...), true
	}
	if v == orig && at.s >= 0 {
		return append(dst, f.t[at.s:at.e]...), true
	}
	if s, e, ok := f.r.locateMap(v, f.t); ok {
		return append(dst, f.t[s:e]...), true
	}
	return dst, false
}

// place returns where the decoded map m lies in the text: at when it is
// known; false when the text cannot tell. msgpack finds an entry from its
// key alone and needs no place.
func (f *splicer) place(m Value, at span) (span, bool) {
	if f.msgpack || at.s >= 0 {
		return at, true
	}
	s, e, ok := f.r.locateMap(m, f.t)
	return span{s, e}, ok
}

// run appends entries first to last of the decoded map dm as they lie in
// the text.
func (f *splicer) run(dst []byte, dm *decodedMap, first, last int) []byte {
	if f.msgpack {
		s, _ := f.r.msgpackEntry(dm.m, first, f.t)
		_, e := f.r.msgpackEntry(dm.m, last, f.t)
		return append(dst, f.t[s:e]...)
	}
	return append(dst, f.t[f.r.entryStart(dm, first, f.t):f.r.entryEnd(dm, last, f.t)]...)
}

// value appends the value of entry j of dm as it lies in the text.
func (f *splicer) value(dst []byte, dm *decodedMap, j int) []byte {
	if f.msgpack {
		k := f.r.a.nodes[int(dm.m.off())+2*j]
		_, end := f.r.msgpackEntry(dm.m, j, f.t)
		return append(dst, f.t[int(k.off()-f.r.src.off())+int(k.n()):end]...)
	}
	vs := f.r.valueSpan(dm, j, f.t)
	return append(dst, f.t[vs.s:vs.e]...)
}

// valueSpan returns where the value of entry j of dm, a decoded map, lies
// (noSpan in msgpack, whose maps are found from their own keys).
func (f *splicer) valueSpan(dm *decodedMap, j int) span {
	if f.msgpack {
		return noSpan
	}
	return f.r.valueSpan(dm, j, f.t)
}

// spanned reports whether the container v is one of the decoded nodes of
// r's text, with entries (decoded containers are never changed in place,
// and edits copy them to nodes past decHi).
func (r *Record) spanned(v Value) bool {
	off := v.off()
	lo, hi := r.decodedNodes()
	return v.n() > 0 && off >= lo && off < hi && !v.writable()
}

// findEntry returns the entry of the map at nodes[of:], of on entries, at
// or after entry from whose key is the handle k, or -1. The decoded keys
// of the text lie in it in order, so the scan stops at one past k.
func findEntry(nodes []Value, of, from, on int, k Value) int {
	for j := from; j < on; j++ {
		ok := nodes[of+2*j]
		if ok == k {
			return j
		}
		if ok.ref == k.ref && ok.off() > k.off() {
			break
		}
	}
	return -1
}

// sameEntries returns how many leading map entries (key and value nodes)
// x and y have in common. A copy made by an edit keeps the decoded entries
// it did not change in their order, most often all but a few: comparing
// them four words at a time before matching entry by entry makes such a
// stretch cheap.
func sameEntries(x, y []Value) int {
	n := min(len(x), len(y)) / 2
	if n == 0 {
		return 0
	}
	// An entry is two Values of two words each (h and ref, then u).
	// (memequal on 4 entries at a time costs more: its setup outweighs
	// the few entries of a log record's map.)
	xe := unsafe.Slice((*[4]uint64)(unsafe.Pointer(&x[0])), n)
	ye := unsafe.Slice((*[4]uint64)(unsafe.Pointer(&y[0])), n)
	for i := range xe {
		p, q := &xe[i], &ye[i]
		if (p[0]^q[0])|(p[1]^q[1])|(p[2]^q[2])|(p[3]^q[3]) != 0 {
			return i
		}
	}
	return n
}
