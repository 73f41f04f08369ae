package record

// Spliced JSON output. A record decoded from a JSON line keeps, for each
// node the decode made, where it lay in the line (Record.spanLo). When the
// record is edited, its output copies the runs of the line whose entries
// are unchanged and encodes only the rest:
//
//   - an entry of a map whose key and value are the very nodes of a decoded
//     entry (the same handles: decoded nodes never change) is that entry's
//     bytes, "key": value; consecutive decoded entries are one run of the
//     line, the commas and spacing between them included;
//   - an entry whose key is decoded but whose value changed writes the key
//     and then the value: a map edited below is spliced the same way inside
//     its own bytes, against the decoded map it is a copy of;
//   - a decoded map stored elsewhere (a lifted value, say) is its bytes;
//   - anything else is encoded as AppendJSON encodes it.
//
// Entries are written in the order of the current map, so the output has
// the key order of a full encode, and each value is the same JSON value as
// a full encode writes, spelled as the line spelled it (as pass-through
// does). The line holds no line break and nothing the decoder normalised,
// or it would have no text and no spans.

// spanned reports whether the container v is one of the decoded nodes of
// r's line, with entries (decoded containers are never changed in place,
// and edits copy them to nodes past spanHi).
func (r *Record) spanned(v Value) bool {
	off := v.off()
	return v.n() > 0 && off >= r.spanLo && off < r.spanHi && !v.writable()
}

// span returns where decoded node i lay in r's text (see Record.spanLo).
func (r *Record) span(i int) int {
	return int(r.a.spans[int(r.spanAt)+i-int(r.spanLo)])
}

// inText reports whether the string k's bytes lie in r's text: then it is
// a key (or string) of the line, which is the only kind a decoded key can be.
func (r *Record) inText(k Value) bool {
	t := r.text
	return k.ref == t.ref && k.off() >= t.off() && k.off() < t.off()+t.n()
}

// appendSpliced appends the record's map, edited, as JSON to dst,
// copying what the edits left of its line. The record has text and spans.
func (r *Record) appendSpliced(dst []byte) []byte {
	return r.spliceValue(dst, r.root, r.decoded, r.a.raw(r.text))
}

// spliceValue appends v, which stands where the decoded value orig stood
// (orig is Absent when v has no decoded counterpart), to dst.
func (r *Record) spliceValue(dst []byte, v, orig Value, t []byte) []byte {
	a := r.a
	switch v.kind() {
	case Map:
		if r.spanned(v) {
			if s, e, ok := r.mapText(v, t); ok {
				return append(dst, t[s:e]...)
			}
			return a.AppendJSON(dst, v)
		}
		if orig.kind() == Map && r.spanned(orig) {
			return r.spliceMap(dst, v, orig, t)
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
			dst = r.spliceValue(dst, val, Value{}, t)
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
			dst = r.spliceValue(dst, a.nodes[first+i], o, t)
		}
		return append(dst, ']')
	}
	return a.AppendJSON(dst, v)
}

// mapText returns where the decoded map m (spanned) lies in t: from the
// '{' before its first key to the '}' after its last value.
func (r *Record) mapText(m Value, t []byte) (start, end int, ok bool) {
	first := int(m.off())
	s, e := r.span(first), r.span(first+2*int(m.n())-1)
	for s > 0 && isSpace(t[s-1]) {
		s--
	}
	for e < len(t) && isSpace(t[e]) {
		e++
	}
	if s == 0 || t[s-1] != '{' || e >= len(t) || t[e] != '}' {
		return 0, 0, false // cannot happen: spans are the decoder's
	}
	return s - 1, e + 1, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// spliceMap appends the map cur, an edited copy of the decoded map orig,
// to dst: runs of orig's entries that cur still holds unchanged are
// copied from t, the rest is written.
func (r *Record) spliceMap(dst []byte, cur, orig Value, t []byte) []byte {
	a := r.a
	nodes := a.nodes
	of, on := int(orig.off()), int(orig.n())
	cf, cn := int(cur.off()), int(cur.n())
	dst = append(dst, '{')
	sep := false
	runS, runE := -1, 0 // the run of t to copy, not yet written
	next := 0           // the entry of orig after the last one matched
	for e := 0; e < cn; e++ {
		k, v := nodes[cf+2*e], nodes[cf+2*e+1]
		j := -1
		if next < on && nodes[of+2*next] == k {
			j = next
		} else if k.kind() == String && r.inText(k) {
			j = findEntry(nodes, of, next, on, k)
		}
		if j >= 0 {
			oj := of + 2*j
			if v == nodes[oj+1] {
				if runS >= 0 && j == next {
					runE = r.span(oj + 1) // the run goes on
				} else {
					if runS >= 0 {
						dst = appendRun(dst, t[runS:runE], sep)
						sep = true
					}
					runS, runE = r.span(oj), r.span(oj+1)
				}
				next = j + 1
				continue
			}
			next = j + 1
		}
		if runS >= 0 {
			dst = appendRun(dst, t[runS:runE], sep)
			sep, runS = true, -1
		}
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = a.appendString(dst, k)
		dst = append(dst, ':')
		var o Value
		if j >= 0 {
			o = nodes[of+2*j+1]
		}
		switch v.kind() {
		case Map, Array:
			dst = r.spliceValue(dst, v, o, t)
		default:
			dst = a.AppendJSON(dst, v)
		}
	}
	if runS >= 0 {
		dst = appendRun(dst, t[runS:runE], sep)
	}
	return append(dst, '}')
}

func appendRun(dst, run []byte, sep bool) []byte {
	if sep {
		dst = append(dst, ',')
	}
	return append(dst, run...)
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
