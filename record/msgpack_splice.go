package record

// msgpack pass-through and splicing, by the rule of JSON's (json_splice.go).
// A record decoded from msgpack keeps its body map's bytes (Record.text, a
// Bytes value) unless the decode normalised something (see
// msgpackDecoder.norm). Unedited, the body is written as those bytes;
// edited, its maps are written with a header for their current count, then
// the runs of decoded entries they still hold, copied, and the rest encoded.
//
// msgpack has no separators, so an entry starts at its key's header, which
// the key node's offset into the bytes gives (msgpackKeyStart), and ends
// where the next entry starts; the last entry of a map ends where its value
// does, which MsgpackLen reads from the value's headers. A map is placed by
// its own keys, wherever it is: no map needs its parent's help.

// appendMsgpackBody appends the record's map to dst, copying what its
// edits left of the decoded body.
func (r *Record) appendMsgpackBody(dst []byte) []byte {
	if r.text.kind() != Bytes {
		return r.a.appendMsgpack(dst, r.root)
	}
	t := r.a.raw(r.text)
	if r.root == r.decoded {
		return append(dst, t...)
	}
	return r.mspliceValue(dst, r.root, r.decoded, t)
}

// mspliceValue appends v, which stands where the decoded value orig stood
// (Absent when there is none), to dst.
func (r *Record) mspliceValue(dst []byte, v, orig Value, t []byte) []byte {
	a := r.a
	switch v.kind() {
	case Map:
		first, n := int(v.off()), int(v.n())
		dst = appendHeader(dst, 0x80, 15, 0, 0xde, 0xdf, n)
		if r.spanned(v) {
			s, _ := r.msgpackEntry(v, 0, t)
			_, e := r.msgpackEntry(v, n-1, t)
			return append(dst, t[s:e]...)
		}
		if orig.kind() == Map && r.spanned(orig) {
			return r.mspliceMap(dst, v, orig, t)
		}
		for i := 0; i < n; i++ {
			dst = appendStr(dst, a.raw(a.nodes[first+2*i]))
			dst = r.mspliceValue(dst, a.nodes[first+2*i+1], Value{}, t)
		}
		return dst
	case Array:
		// As in JSON: elements matched by position when the length is kept.
		var of int
		same := orig.kind() == Array && orig.n() == v.n() && r.spanned(orig)
		if same {
			of = int(orig.off())
		}
		first, n := int(v.off()), int(v.n())
		dst = appendHeader(dst, 0x90, 15, 0, 0xdc, 0xdd, n)
		for i := 0; i < n; i++ {
			var o Value
			if same {
				o = a.nodes[of+i]
			}
			dst = r.mspliceValue(dst, a.nodes[first+i], o, t)
		}
		return dst
	}
	return a.appendMsgpack(dst, v)
}

// mspliceMap writes the entries of cur, an edited copy of the decoded map
// orig (its header is written): runs of orig's entries that cur still holds
// are copied from t, the rest is encoded.
func (r *Record) mspliceMap(dst []byte, cur, orig Value, t []byte) []byte {
	a := r.a
	nodes := a.nodes
	of, on := int(orig.off()), int(orig.n())
	cf, cn := int(cur.off()), int(cur.n())
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
						dst = r.appendMsgpackRun(dst, orig, runFirst, runLast, t)
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
						dst = r.appendMsgpackRun(dst, orig, runFirst, runLast, t)
					}
					runFirst = j
				}
				runLast = j
				continue
			}
		}
		if runFirst >= 0 {
			dst = r.appendMsgpackRun(dst, orig, runFirst, runLast, t)
			runFirst = -1
		}
		dst = appendStr(dst, a.raw(k))
		if j < 0 && next < on && v == nodes[of+2*next+1] {
			// A key renamed where it stands: its value is copied.
			ok := nodes[of+2*next]
			_, end := r.msgpackEntry(orig, next, t)
			dst = append(dst, t[int(ok.off()-r.text.off())+int(ok.n()):end]...)
			next++
			continue
		}
		var o Value
		if j >= 0 {
			o = nodes[of+2*j+1]
		}
		dst = r.mspliceValue(dst, v, o, t)
	}
	if runFirst >= 0 {
		dst = r.appendMsgpackRun(dst, orig, runFirst, runLast, t)
	}
	return dst
}

// appendMsgpackRun appends entries first to last of the decoded map m as
// they stand in t.
func (r *Record) appendMsgpackRun(dst []byte, m Value, first, last int, t []byte) []byte {
	s, _ := r.msgpackEntry(m, first, t)
	_, e := r.msgpackEntry(m, last, t)
	return append(dst, t[s:e]...)
}

// msgpackEntry returns where entry j of the decoded map m lies in t.
func (r *Record) msgpackEntry(m Value, j int, t []byte) (start, end int) {
	nodes := r.a.nodes
	first, n := int(m.off()), int(m.n())
	k := nodes[first+2*j]
	start = msgpackKeyStart(t, k, r.text)
	if j+1 < n {
		return start, msgpackKeyStart(t, nodes[first+2*j+2], r.text)
	}
	vs := int(k.off()-r.text.off()) + int(k.n())
	l, _ := MsgpackLen(t[vs:]) // the decoder read it whole
	return start, vs + l
}

// msgpackKeyStart returns where the header of the key k (one of text's
// keys: msgpack strings always point into their bytes) starts in t.
// The header is told from the bytes before the key's: a fixstr's type byte
// holds the length, str8, str16 and str32 a type byte and then the length,
// and no other header could end with those bytes.
func msgpackKeyStart(t []byte, k, text Value) int {
	p, n := int(k.off()-text.off()), int(k.n())
	switch {
	case n <= 31 && p >= 1 && t[p-1] == 0xa0|byte(n):
		return p - 1
	case n <= 0xff && p >= 2 && t[p-2] == 0xd9 && t[p-1] == byte(n):
		return p - 2
	case n <= 0xffff && p >= 3 && t[p-3] == 0xda:
		return p - 3
	}
	return p - 5
}
