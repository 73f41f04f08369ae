package record

// msgpack pass-through and splicing (splice.go has the rule).
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
	if r.text().kind() != Bytes {
		return r.a.appendMsgpack(dst, r.root)
	}
	t := r.a.raw(r.src)
	if r.root == r.decoded {
		return append(dst, t...)
	}
	return (&splicer{r: r, t: t, msgpack: true}).spliceValue(dst, r.root, r.decoded, noSpan)
}

// msgpackEntry returns where entry j of the decoded map m lies in t.
func (r *Record) msgpackEntry(m Value, j int, t []byte) (start, end int) {
	nodes := r.a.nodes
	first, n := int(m.off()), int(m.n())
	k := nodes[first+2*j]
	start = msgpackKeyStart(t, k, r.src) // the text: only records with text are spliced
	if j+1 < n {
		return start, msgpackKeyStart(t, nodes[first+2*j+2], r.src)
	}
	vs := int(k.off()-r.src.off()) + int(k.n())
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
