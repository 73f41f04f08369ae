package record

// A projection that stands on its LogRecord's bytes (OTLPProjection.Wire):
// what the encoders write for it, and the checks that make sure the bytes
// say what the whole decode would.

// logRecordWhole decodes the LogRecord at [s, e) whole, for a projection
// whose bytes do not say the record's view again (d.dirty): an encoder
// could not write it from them.
func (d *otlpDecoder) logRecordWhole(s, e int, resource, scope Value) error {
	keep, built, some, wire := d.keep, d.built, d.someAttrs, d.wire
	d.keep, d.built, d.someAttrs, d.wire = OTLPAllFields, uint32(OTLPAllFields), false, false
	err := d.logRecord(s, e, resource, scope)
	d.keep, d.built, d.someAttrs, d.wire = keep, built, some, wire
	return err
}

// wholeRoot returns the root an encoder writes for r: its root, or for a
// projection (recProj) the LogRecord decoded whole from its bytes with the
// projection's edits made on it. The projection holds every key the
// policies wrote (OTLPProjectionOf), so what differs between its decoded
// root and its root is all the edits did; the rest is as the bytes say.
func (r *Record) wholeRoot() Value {
	if r.flags&recProj == 0 {
		return r.root
	}
	a, wr := r.a, r.wire()
	buf := a.slab
	if wr.ref != 0 {
		buf = a.bufs[wr.ref-1]
	}
	d := otlpDecoder{w: wire{buf}, a: a, ref: wr.ref, maxDepth: a.Limits.maxDepth(),
		keep: OTLPAllFields, built: uint32(OTLPAllFields)}
	d.kref = a.addBuf(viewKeys)
	s := int(wr.off())
	was, cur := r.decoded, r.root
	res, _ := a.lookup(was, rootView[ViewResource].Name, 0)
	scope, _ := a.lookup(was, rootView[ViewScope].Name, 0)
	if err := d.logRecord(s, s+int(wr.n()), res, scope); err != nil || len(d.recs) != 1 {
		// The bytes decoded once already, under the same limits.
		panic("record: an OTLP projection's bytes do not decode again")
	}
	return a.mergeEdited(d.recs[0].root, was, cur, true)
}

// mergeEdited returns the map whole with the edits that made cur of was,
// was holding some of whole's keys (a projection): a key of was that cur
// still holds (the same key node: edits copy them) keeps its place in
// whole, with cur's value if the edits changed it; one that cur lost
// goes; cur's other keys (set by the edits, or removed and set again)
// follow in cur's order, as the same edits on whole would leave them. At
// the root (root set), changed attributes are merged so too, since a
// projection may hold some of them only.
func (a *Arena) mergeEdited(whole, was, cur Value, root bool) Value {
	we, de, ce := a.entries(whole), a.entries(was), a.entries(cur)
	indexOf := func(es []Value, k Value) int {
		for i := 0; i < len(es); i += 2 {
			if es[i] == k {
				return i
			}
		}
		return -1
	}
	start := len(a.scratch)
	for i := 0; i < len(we); i += 2 {
		j := -1
		for jj := 0; jj < len(de); jj += 2 {
			if string(a.raw(de[jj])) == string(a.raw(we[i])) {
				j = jj
				break
			}
		}
		if j < 0 {
			a.scratch = append(a.scratch, we[i], we[i+1])
			continue
		}
		c := indexOf(ce, de[j])
		switch {
		case c < 0: // removed
		case ce[c+1] == de[j+1]:
			a.scratch = append(a.scratch, we[i], we[i+1])
		case root && ce[c+1].kind() == Map && de[j+1].kind() == Map && we[i+1].kind() == Map && string(a.raw(we[i])) == rootView[ViewAttributes].Name:
			a.scratch = append(a.scratch, we[i], a.mergeEdited(we[i+1], de[j+1], ce[c+1], false))
		default:
			a.scratch = append(a.scratch, we[i], ce[c+1])
		}
	}
	for c := 0; c < len(ce); c += 2 {
		if indexOf(de, ce[c]) < 0 {
			a.scratch = append(a.scratch, ce[c], ce[c+1])
		}
	}
	kv := a.scratch[start:]
	first := a.alloc(len(kv))
	copy(a.nodes[first:], kv)
	a.scratch = a.scratch[:start]
	return containerValue(Map, uint32(first), uint32(len(kv)/2))
}

// keyDups finds a key sent twice among the keys of one map that is
// checked rather than built (a LogRecord's attributes, a kvlist): the
// whole decode would drop one (finish), so bytes with both do not say the
// view again. Each key sets a bit of a hash of its length and last byte;
// only when a bit is met twice are the keys compared.
type keyDups struct {
	bins [4]uint64
	hit  bool // a bin met twice
	n    int
	at   [32]int32 // where the keys start
	ln   [32]uint8 // their lengths (below 0x80: one-byte lengths)
}

// reset empties k for another map.
func (k *keyDups) reset() { k.bins, k.hit, k.n = [4]uint64{}, false, 0 }

// add notes the key b[s:s+n], n < 0x80. Small enough to inline: it runs
// for every key checked.
func (k *keyDups) add(b []byte, s, n int) {
	// Its length and last byte (for none, the byte before it: a length or
	// a tag).
	h := uint64(n) ^ uint64(b[s+n-1])<<8
	bin := uint8((h * 0x9E3779B97F4A7C15) >> 56)
	w, bit := &k.bins[bin>>6], uint64(1)<<(bin&63)
	if *w&bit != 0 {
		k.hit = true
	}
	*w |= bit
	i := k.n & (len(k.at) - 1) // past len(k.at), dup answers true
	k.at[i], k.ln[i] = int32(s), uint8(n)
	k.n++
}

// dup reports whether two of the keys are the same, or may be (more keys
// than it keeps, and a bin met twice).
func (k *keyDups) dup(b []byte) bool {
	if !k.hit {
		return false
	}
	if k.n > len(k.at) {
		return true
	}
	for i := 1; i < k.n; i++ {
		x := b[k.at[i] : k.at[i]+int32(k.ln[i])]
		for j := range i {
			if k.ln[j] == k.ln[i] && string(b[k.at[j]:k.at[j]+int32(k.ln[j])]) == string(x) {
				return true
			}
		}
	}
	return false
}
