package record

import "math/bits"

// The root journal. Most edits are of the root map's own entries (set a
// key, remove one, rename one), and the splicer's general rule — compare
// the edited map with the decoded one entry by entry to find what is
// unchanged — costs every entry of the root on every edited record. While
// only such edits were made, the edits themselves say what changed: the
// root is the decoded root's entries in their order, less those removed,
// with some changed (a value set, a key renamed where it stands, a
// container edited below), followed by the entries added since. The
// journal keeps that as two masks over the decoded root's entries, so the
// output copies the runs between the marked entries, writes the changed
// ones and appends the added ones, at a cost that grows with the edits,
// not with the record (spliceJournaled).
//
// Every edit of the root's entries goes through edit.go, which notes it
// here; an edit the journal cannot describe (the root replaced) turns it
// off, and the splicer's general rule takes over.

// rootJournal describes the root map against the decoded root, of at
// most 64 entries, while ok.
type rootJournal struct {
	removed, changed uint64
	ok               bool
}

// startJournal turns the journal on for a record decoded from text whose
// root has at most 64 entries.
func (r *Record) startJournal(t *textState) {
	t.jr = rootJournal{ok: r.decoded.kind() == Map && r.decoded.n() <= 64}
	t.baseJr = t.jr
}

// journalIndex returns the entry of the decoded root that the root's
// entry pos stands for, or false when pos is an entry added since.
func (r *Record) journalIndex(jr *rootJournal, pos int) (int, bool) {
	on := int(r.decoded.n())
	if pos >= on-bits.OnesCount64(jr.removed) {
		return 0, false
	}
	// The pos-th entry not removed: removed entries below it shift it up.
	for m := jr.removed; m != 0; m &= m - 1 {
		if b := bits.TrailingZeros64(m); b <= pos {
			pos++
		} else {
			break
		}
	}
	return pos, true
}

// journalBit returns the journal and the bit of the decoded root's entry
// that the root's entry pos stands for, or a nil journal when it is off or
// pos is an entry added since: an edit of one then changes no mask.
func (r *Record) journalBit(pos int) (*rootJournal, uint64) {
	if r.ext == 0 {
		return nil, 0
	}
	jr := &r.ts().jr
	if !jr.ok {
		return nil, 0
	}
	i, ok := r.journalIndex(jr, pos)
	if !ok {
		return nil, 0
	}
	return jr, 1 << i
}

// noteChanged records that the root's entry pos changed its value or key.
func (r *Record) noteChanged(pos int) {
	if jr, bit := r.journalBit(pos); jr != nil {
		jr.changed |= bit
	}
}

// noteRemoved records that the root's entry pos was removed.
func (r *Record) noteRemoved(pos int) {
	if jr, bit := r.journalBit(pos); jr != nil {
		jr.removed |= bit
		jr.changed &^= bit
	}
}

// spliceJournaled appends the root, edited as its journal says, as JSON
// to dst, t being the record's line.
func (r *Record) spliceJournaled(dst []byte, t []byte) []byte {
	a := r.a
	jr := r.ts().jr
	orig, cur := r.decoded, r.root
	of, on := int(orig.off()), int(orig.n())
	cf, cn := int(cur.off()), int(cur.n())
	jm := decodedMap{m: orig, at: span{0, len(t)}, pos: -1}
	base := len(a.pos)
	// A changed entry set to what it held (the same handles) is unchanged
	// after all: it joins its neighbours' run.
	changed := jr.changed
	for m := changed; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		p := i - bits.OnesCount64(jr.removed&(1<<i-1))
		if a.nodes[cf+2*p] == a.nodes[of+2*i] && a.nodes[cf+2*p+1] == a.nodes[of+2*i+1] {
			changed &^= 1 << i
		}
	}
	skip := jr.removed | changed
	dst = append(dst, '{')
	sep := false
	p := 0 // the root's entry standing for the decoded entry i
	for i := 0; i < on; {
		// i < on <= 64: the masks spare the shifts their checks.
		bit := uint64(1) << (uint(i) & 63)
		if skip&bit == 0 {
			end := on
			if rest := skip >> (uint(i) & 63); rest != 0 {
				end = min(on, i+bits.TrailingZeros64(rest))
			}
			// splicer.run, written out for a compact line: the run ends
			// at the ',' before the next entry's key, or at the '}'.
			s, e := r.keyAt(a.nodes[of+2*i]), len(t)-1
			if end < on {
				e = r.keyAt(a.nodes[of+2*end]) - 1
			}
			if sep {
				dst = append(dst, ',')
			}
			if s >= 0 && e > s && (t[e] == ',' || e == len(t)-1) && !isSpace(t[e-1]) {
				dst = append(dst, t[s:e]...)
			} else {
				dst = (&splicer{r: r, t: t}).run(dst, &jm, i, end-1)
			}
			sep = true
			p += end - i
			i = end
			continue
		}
		if changed&bit != 0 {
			nodes := a.nodes
			k, v := nodes[cf+2*p], nodes[cf+2*p+1]
			ov := nodes[of+2*i+1]
			if sep {
				dst = append(dst, ',')
			}
			sep = true
			dst = a.appendString(dst, k)
			dst = append(dst, ':')
			switch {
			case v == ov:
				// A key renamed where it stands: its value as the line
				// spells it.
				vs := r.valueSpan(&jm, i, t)
				dst = append(dst, t[vs.s:vs.e]...)
			case v.kind() == Map || v.kind() == Array:
				vat := noSpan
				if ov.kind() == Map && r.spanned(ov) {
					vat = r.valueSpan(&jm, i, t)
				}
				dst = (&splicer{r: r, t: t}).spliceValue(dst, v, ov, vat)
			default:
				dst = a.AppendJSON(dst, v)
			}
			p++
		}
		i++
	}
	// The entries added, most often a few scalars under keys of the
	// policy: those written here, the rest by spliceValue.
	slab, bufs := a.slab, a.bufs
	added := a.nodes[cf+2*p : cf+2*cn]
	for j := 0; j+1 < len(added); j += 2 {
		k, v := &added[j], &added[j+1]
		if k.h&flagFramed != 0 {
			// `,"key":` in one copy (the ',' left out for a first entry).
			off, n, s := int(k.off()), int(k.n()), int(k.off())-2
			if !sep {
				s++
			}
			dst = appendShort(dst, strBuf(slab, bufs, *k)[s:off+n+2])
		} else {
			if sep {
				dst = append(dst, ',')
			}
			dst = appendJSONStr(dst, strBytes(slab, bufs, *k), k.flags())
			dst = append(dst, ':')
		}
		sep = true
		switch v.kind() {
		case String:
			if v.h&flagQuoted != 0 {
				off, n := v.off(), v.n()
				dst = appendShort(dst, strBuf(slab, bufs, *v)[off-1:off+n+1])
			} else if vs, ve := r.removedValue(&jm, *v, t); vs >= 0 {
				dst = append(dst, t[vs:ve]...)
			} else {
				dst = appendJSONStr(dst, strBytes(slab, bufs, *v), v.flags())
			}
		case Bool:
			if v.u != 0 {
				dst = append(dst, "true"...)
			} else {
				dst = append(dst, "false"...)
			}
		case Map, Array:
			dst = (&splicer{r: r, t: t}).spliceValue(dst, *v, Value{}, noSpan)
		default:
			dst = a.AppendJSON(dst, *v)
		}
	}
	a.pos = a.pos[:base]
	return append(dst, '}')
}

// removedValue returns where the value v lies in t when it is the value
// of an entry removed from the decoded root (a key renamed, in the VM's
// way, to the end): its text is copied, not escaped again. -1 when not.
func (r *Record) removedValue(jm *decodedMap, v Value, t []byte) (int, int) {
	nodes, of := r.a.nodes, int(jm.m.off())
	for m := r.ts().jr.removed; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		if nodes[of+2*i+1] != v {
			continue
		}
		k := nodes[of+2*i]
		if q := r.keyAt(k); q >= 0 {
			return r.valueAfter(t, k, q), r.entryEnd(jm, i, t)
		}
		break
	}
	return -1, 0
}
