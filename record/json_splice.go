package record

import "unsafe"

// Spliced JSON output. A record decoded from a JSON line keeps the line
// (Record.text) and the range of nodes its decode made (decLo, decHi),
// which never change. When the record is edited, its output copies the
// runs of the line whose entries are unchanged and encodes only the rest:
//
//   - an entry of a map whose key and value are the very nodes of a decoded
//     entry (the same handles) is that entry's bytes, "key": value;
//     consecutive decoded entries are one run of the line, the commas and
//     spacing between them included;
//   - an entry whose key is decoded but whose value changed writes the key
//     and then the value: a map edited below is spliced the same way inside
//     its own bytes, against the decoded map it is a copy of;
//   - a decoded map stored elsewhere (a lifted value, say) is its bytes;
//   - anything else is encoded as AppendJSON encodes it.
//
// Where an entry lay in the line is not noted when the line is decoded
// (that cost every line, edited or not): it is found here, from the key
// nodes, which point into the line. A key's opening quote starts its
// entry; the entry ends where the next one starts, back over ',' and
// spacing, or, for the last entry, back from the '}' of its map, whose
// place the caller knows (the line's end for the root, the end of its
// entry for a map inside a map). So a run costs a few bytes of scanning,
// whatever its length. A key with escapes was unescaped into the slab and
// says nothing of where it lay: a map holding one is scanned once
// (scanMap) when a place is needed.
//
// Entries are written in the order of the current map, so the output has
// the key order of a full encode, and each value is the same JSON value as
// a full encode writes, spelled as the line spelled it (as pass-through
// does). The line holds no line break and nothing the decoder normalised,
// or it would have no text.

// spanned reports whether the container v is one of the decoded nodes of
// r's text, with entries (decoded containers are never changed in place,
// and edits copy them to nodes past decHi).
func (r *Record) spanned(v Value) bool {
	off := v.off()
	return v.n() > 0 && off >= r.decLo && off < r.decHi && !v.writable()
}

// keyAt returns where the string k starts in r's text, less one (the
// opening quote of a JSON key, the last byte of a msgpack key's header),
// or -1 when k's bytes are not in the text: then k is not a key of the
// text as it lay there (it had escapes, or an edit made it).
func (r *Record) keyAt(k Value) int {
	t := r.text
	if k.ref != t.ref || k.off() <= t.off() || k.off() >= t.off()+t.n() {
		return -1
	}
	return int(k.off()-t.off()) - 1
}

// appendSpliced appends the record's map, edited, as JSON to dst,
// copying what the edits left of its line. The record has text.
func (r *Record) appendSpliced(dst []byte) []byte {
	t := r.a.raw(r.text)
	if r.jr.ok {
		return r.spliceJournaled(dst, t)
	}
	return r.spliceValue(dst, r.root, r.decoded, 0, len(t), t)
}

// spliceValue appends v, which stands where the decoded value orig stood
// (orig is Absent when v has no decoded counterpart), to dst. t[os:oe] is
// orig's text when os >= 0; else it is found when needed.
func (r *Record) spliceValue(dst []byte, v, orig Value, os, oe int, t []byte) []byte {
	a := r.a
	switch v.kind() {
	case Map:
		if r.spanned(v) {
			if v == orig && os >= 0 {
				return append(dst, t[os:oe]...)
			}
			if s, e, ok := r.locateMap(v, t); ok {
				return append(dst, t[s:e]...)
			}
			return a.AppendJSON(dst, v)
		}
		if orig.kind() == Map && r.spanned(orig) {
			ok := os >= 0
			if !ok {
				os, oe, ok = r.locateMap(orig, t)
			}
			if ok {
				return r.spliceMap(dst, v, orig, os, oe, t)
			}
		}
		dst = append(dst, '{')
		first, n := int(v.off()), int(v.n())
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			k, val := a.nodes[first+2*i], a.nodes[first+2*i+1]
			dst = a.appendString(dst, k)
			dst = append(dst, ':')
			dst = r.spliceValue(dst, val, Value{}, -1, 0, t)
		}
		return append(dst, '}')
	case Array:
		// Elements are matched by position when the array kept its length
		// (an element edited below); the decoded maps in it are copied.
		var of int
		same := orig.kind() == Array && orig.n() == v.n() && r.spanned(orig)
		if same {
			of = int(orig.off())
		}
		dst = append(dst, '[')
		first, n := int(v.off()), int(v.n())
		for i := 0; i < n; i++ {
			if i > 0 {
				dst = append(dst, ',')
			}
			var o Value
			if same {
				o = a.nodes[of+i]
			}
			dst = r.spliceValue(dst, a.nodes[first+i], o, -1, 0, t)
		}
		return append(dst, ']')
	}
	return a.AppendJSON(dst, v)
}

// locateMap returns where the decoded map m (spanned) lies in t, from its
// '{' to just past its '}', found from its first and last keys; ok is
// false when its first key does not tell (it had escapes).
func (r *Record) locateMap(m Value, t []byte) (start, end int, ok bool) {
	first, n := int(m.off()), int(m.n())
	q := r.keyAt(r.a.nodes[first])
	if q < 0 {
		return 0, 0, false
	}
	start = spaceBack(t, q) - 1
	if k := r.a.nodes[first+2*n-2]; r.keyAt(k) >= 0 {
		vs := r.valueAfter(t, k, r.keyAt(k))
		end = skipSpace(t, r.valueEnd(t, r.a.nodes[first+2*n-1], vs)) + 1
	} else {
		end = skipJSON(t, start)
	}
	return start, end, t[start] == '{' && t[end-1] == '}'
}

// jmap is a decoded map being spliced: t[s] is its '{', t[e-1] its '}'.
// pos is -1, or, once scanMap ran, where in the arena's pos entry 0's
// start and end are (then entry j's are at pos+2j and pos+2j+1).
type jmap struct {
	m    Value
	s, e int
	pos  int
}

// entryStart returns where entry j of jm starts in t: its key's quote.
func (r *Record) entryStart(jm *jmap, j int, t []byte) int {
	if jm.pos < 0 {
		if q := r.keyAt(r.a.nodes[int(jm.m.off())+2*j]); q >= 0 {
			return q
		}
		r.scanMap(jm, t)
	}
	return int(r.a.pos[jm.pos+2*j])
}

// entryEnd returns where entry j of jm ends in t: just past its value.
func (r *Record) entryEnd(jm *jmap, j int, t []byte) int {
	if jm.pos < 0 {
		if j == int(jm.m.n())-1 {
			return spaceBack(t, jm.e-1)
		}
		if q := r.keyAt(r.a.nodes[int(jm.m.off())+2*j+2]); q >= 0 {
			return spaceBack(t, spaceBack(t, q)-1) // before the ','
		}
		r.scanMap(jm, t)
	}
	return int(r.a.pos[jm.pos+2*j+1])
}

// scanMap notes where each entry of jm lies, scanning its text.
func (r *Record) scanMap(jm *jmap, t []byte) {
	a := r.a
	jm.pos = len(a.pos)
	i := jm.s + 1
	for range int(jm.m.n()) {
		s := skipSpace(t, i)
		i = skipJSON(t, valueStart(t, s))
		a.pos = append(a.pos, uint32(s), uint32(i))
		i = skipSpace(t, i) + 1 // past the ',' or '}'
	}
}

// spliceMap appends the map cur, an edited copy of the decoded map orig,
// which lies at t[os:oe], to dst: runs of orig's entries that cur still
// holds unchanged are copied from t, the rest is written.
func (r *Record) spliceMap(dst []byte, cur, orig Value, os, oe int, t []byte) []byte {
	a := r.a
	nodes := a.nodes
	jm := jmap{m: orig, s: os, e: oe, pos: -1}
	base := len(a.pos)
	of, on := int(orig.off()), int(orig.n())
	cf, cn := int(cur.off()), int(cur.n())
	dst = append(dst, '{')
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
						dst = r.appendRun(dst, &jm, runFirst, runLast, sep, t)
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
						dst = r.appendRun(dst, &jm, runFirst, runLast, sep, t)
						sep = true
					}
					runFirst = j
				}
				runLast = j
				continue
			}
		}
		if runFirst >= 0 {
			dst = r.appendRun(dst, &jm, runFirst, runLast, sep, t)
			sep, runFirst = true, -1
		}
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = a.appendString(dst, k)
		dst = append(dst, ':')
		if j < 0 && next < on && v == nodes[of+2*next+1] {
			// A key renamed where it stands: its value, the same handle
			// and so the same value, is copied as the line spells it.
			q := r.entryStart(&jm, next, t)
			dst = append(dst, t[r.valueAfter(t, nodes[of+2*next], q):r.entryEnd(&jm, next, t)]...)
			next++
			continue
		}
		switch v.kind() {
		case Map, Array:
			o, vs, ve := Value{}, -1, 0
			if j >= 0 {
				if o = nodes[of+2*j+1]; o.kind() == Map && r.spanned(o) {
					vs, ve = r.valueAfter(t, nodes[of+2*j], r.entryStart(&jm, j, t)), r.entryEnd(&jm, j, t)
				}
			}
			dst = r.spliceValue(dst, v, o, vs, ve, t)
		default:
			dst = a.AppendJSON(dst, v)
		}
	}
	if runFirst >= 0 {
		dst = r.appendRun(dst, &jm, runFirst, runLast, sep, t)
	}
	a.pos = a.pos[:base]
	return append(dst, '}')
}

// appendRun appends entries first to last of jm as they stand in t, after
// a comma when sep is set.
func (r *Record) appendRun(dst []byte, jm *jmap, first, last int, sep bool, t []byte) []byte {
	if sep {
		dst = append(dst, ',')
	}
	return append(dst, t[r.entryStart(jm, first, t):r.entryEnd(jm, last, t)]...)
}

// findEntry returns the entry of the map at nodes[of:], of on entries, at
// or after entry from whose key is the handle k, or -1. The decoded keys
// of the line lie in it in order, so the scan stops at one past k.
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

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// spaceBack returns i moved back over the spacing before it.
func spaceBack(t []byte, i int) int {
	for i > 0 && isSpace(t[i-1]) {
		i--
	}
	return i
}

// valueAfter is valueStart for the entry of key k, whose quote is at t[q]:
// a key in the text has no escapes, so its length is its node's.
func (r *Record) valueAfter(t []byte, k Value, q int) int {
	if r.keyAt(k) != q {
		return valueStart(t, q)
	}
	i := skipSpace(t, q+int(k.n())+2)
	return skipSpace(t, i+1) // past the ':'
}

// valueEnd returns where the decoded value v, which starts at t[vs], ends:
// a string in the text from its node, a map of the text by locateMap,
// anything else by skipping it.
func (r *Record) valueEnd(t []byte, v Value, vs int) int {
	switch v.kind() {
	case String:
		if q := r.keyAt(v); q == vs {
			return q + int(v.n()) + 2
		}
	case Map:
		if r.spanned(v) {
			if _, e, ok := r.locateMap(v, t); ok {
				return e
			}
		}
	}
	return skipJSON(t, vs)
}

// valueStart returns where the value of the entry whose key's quote is at
// t[q] starts.
func valueStart(t []byte, q int) int {
	i := skipSpace(t, skipJSONString(t, q))
	return skipSpace(t, i+1) // past the ':'
}

// skipJSONString returns the end of the string whose quote is at t[i].
func skipJSONString(t []byte, i int) int {
	for i++; ; {
		i = strSpecial(t, i)
		switch t[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
}

// skipJSON returns the end of the JSON value at t[i], which the decoder
// has checked (so no bounds or syntax are checked here).
func skipJSON(t []byte, i int) int {
	switch t[i] {
	case '"':
		return skipJSONString(t, i)
	case '{', '[':
	default: // a number or literal: up to the next delimiter
		for i < len(t) && !isSpace(t[i]) && t[i] != ',' && t[i] != '}' && t[i] != ']' {
			i++
		}
		return i
	}
	depth := 0
	for {
		switch t[i] {
		case '"':
			i = skipJSONString(t, i)
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
		i++
	}
}
