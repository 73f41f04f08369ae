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
// projection (r.proj) the LogRecord decoded whole from its bytes with the
// projection's edits made on it. The projection holds every key the
// policies wrote (OTLPProjectionOf), so what differs between its decoded
// root and its root is all the edits did; the rest is as the bytes say.
func (r *Record) wholeRoot() Value {
	if !r.proj {
		return r.root
	}
	a := r.a
	buf := a.slab
	if r.wire.ref != 0 {
		buf = a.bufs[r.wire.ref-1]
	}
	d := otlpDecoder{w: wire{buf}, a: a, ref: r.wire.ref, maxDepth: a.Limits.maxDepth(),
		keep: OTLPAllFields, built: uint32(OTLPAllFields)}
	d.kref = a.addBuf(viewKeys)
	s := int(r.wire.off())
	was, cur := r.decoded, r.root
	res, _ := a.lookup(was, rootView[vResource].Name, 0)
	scope, _ := a.lookup(was, rootView[vScope].Name, 0)
	if err := d.logRecord(s, s+int(r.wire.n()), res, scope); err != nil || len(d.recs) != 1 {
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
		case root && ce[c+1].kind() == Map && de[j+1].kind() == Map && we[i+1].kind() == Map && string(a.raw(we[i])) == rootView[vAttributes].Name:
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
// view again. Keys are told apart by their signatures first; a key whose
// signature was met is compared with the keys kept before it.
type keyDups struct {
	sigs [2]uint64
	n    int
	keys [16]struct {
		s, e int32 // where the key lies in the request
		sig  uint8
	}
}

// reset empties k for another map.
func (k *keyDups) reset() { k.sigs, k.n = [2]uint64{}, 0 }

// seen notes the key b[s:e] and reports whether it may be one met before:
// surely, or because more keys than it keeps share its signature.
func (k *keyDups) seen(b []byte, s, e int) bool {
	sig := keySig(b[s:e]) & 0x7f
	w, bit := &k.sigs[sig>>6], uint64(1)<<(sig&63)
	if *w&bit != 0 && k.again(b, s, e, sig) {
		return true
	}
	*w |= bit
	if k.n < len(k.keys) {
		k.keys[k.n].s, k.keys[k.n].e, k.keys[k.n].sig = int32(s), int32(e), sig
	}
	k.n++
	return false
}

// again compares b[s:e] with the keys kept of its signature.
func (k *keyDups) again(b []byte, s, e int, sig uint8) bool {
	if k.n > len(k.keys) {
		return true
	}
	for _, p := range k.keys[:k.n] {
		if p.sig == sig && string(b[p.s:p.e]) == string(b[s:e]) {
			return true
		}
	}
	return false
}

// kvKey returns where the key of the KeyValue at [s, e) lies, in the
// layout the checks read (a one-byte length); ok false for any other.
func kvKey(b []byte, s, e int) (ks, ke int, ok bool) {
	if s == e {
		return s, s, true // no key: ""
	}
	if e-s < 2 || b[s] != 1<<3|wireBytes || b[s+1] >= 0x80 || s+2+int(b[s+1]) > e {
		return 0, 0, false
	}
	return s + 2, s + 2 + int(b[s+1]), true
}
