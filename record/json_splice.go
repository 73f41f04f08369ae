package record

// Spliced JSON output (splice.go has the rule). A record decoded from a
// JSON line keeps the line (Record.text) and the range of nodes its decode
// made (decLo, decHi), which never change.
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
// The line holds no line break and nothing the decoder normalised, or it
// would have no text.

// keyAt returns where the string k starts in r's text, less one (the
// opening quote of a JSON key, the last byte of a msgpack key's header),
// or -1 when k's bytes are not in the text: then k is not a key of the
// text as it lay there (it had escapes, or an edit made it).
func (r *Record) keyAt(k Value) int {
	t := r.src // the text: only records with text are spliced
	if k.ref != t.ref || k.off() <= t.off() || k.off() >= t.off()+t.n() {
		return -1
	}
	return int(k.off()-t.off()) - 1
}

// appendSpliced appends the record's map, edited, as JSON to dst,
// copying what the edits left of its line. The record has text.
func (r *Record) appendSpliced(dst []byte) []byte {
	t := r.a.raw(r.src)
	if r.ts().jr.ok { // a record with text has its textState
		return r.spliceJournaled(dst, t)
	}
	return (&splicer{r: r, t: t}).spliceValue(dst, r.root, r.decoded, span{0, len(t)})
}

// valueSpan returns where the value of entry j of dm lies in t.
func (r *Record) valueSpan(dm *decodedMap, j int, t []byte) span {
	k := r.a.nodes[int(dm.m.off())+2*j]
	return span{r.valueAfter(t, k, r.entryStart(dm, j, t)), r.entryEnd(dm, j, t)}
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

// entryStart returns where entry j of jm starts in t: its key's quote.
func (r *Record) entryStart(jm *decodedMap, j int, t []byte) int {
	if jm.pos < 0 {
		if q := r.keyAt(r.a.nodes[int(jm.m.off())+2*j]); q >= 0 {
			return q
		}
		r.scanMap(jm, t)
	}
	return int(r.a.pos[jm.pos+2*j])
}

// entryEnd returns where entry j of jm ends in t: just past its value.
func (r *Record) entryEnd(jm *decodedMap, j int, t []byte) int {
	if jm.pos < 0 {
		if j == int(jm.m.n())-1 {
			return spaceBack(t, jm.at.e-1)
		}
		if q := r.keyAt(r.a.nodes[int(jm.m.off())+2*j+2]); q >= 0 {
			return spaceBack(t, spaceBack(t, q)-1) // before the ','
		}
		r.scanMap(jm, t)
	}
	return int(r.a.pos[jm.pos+2*j+1])
}

// scanMap notes where each entry of jm lies, scanning its text.
func (r *Record) scanMap(jm *decodedMap, t []byte) {
	a := r.a
	jm.pos = len(a.pos)
	i := jm.at.s + 1
	for range int(jm.m.n()) {
		s := skipSpace(t, i)
		i = skipJSON(t, valueStart(t, s))
		a.pos = append(a.pos, uint32(s), uint32(i))
		i = skipSpace(t, i) + 1 // past the ',' or '}'
	}
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
