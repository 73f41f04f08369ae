package record

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"unicode/utf8"
)

// alloc extends the node slice by k nodes and returns the index of the first.
func (a *Arena) alloc(k int) int {
	first := len(a.nodes)
	a.nodes = slices.Grow(a.nodes, k)[:first+k]
	return first
}

// width is the number of nodes per element: a map entry is a key node and
// a value node.
func width(k Kind) int {
	if k == Map {
		return 2
	}
	return 1
}

// share returns v in a form that may be stored in another place: containers
// that an edit overlay may still change in place are deep-copied (their
// read-only parts are shared), so that a stored value behaves as a copy.
func (a *Arena) share(v Value) Value {
	if !v.isContainer() || !v.writable() {
		return v
	}
	w, n := width(v.kind()), int(v.n())
	first := a.alloc(w * n)
	copy(a.nodes[first:], a.nodes[int(v.off()):int(v.off())+w*n])
	for i := w - 1; i < w*n; i += w {
		a.nodes[first+i] = a.share(a.nodes[first+i])
	}
	return containerValue(v.kind(), uint32(first), uint32(n))
}

// freeze clears the writable mark of v and of the writable containers in
// it, in place: only containers of one record's overlay are writable, so
// nothing else refers to them.
func (a *Arena) freeze(v Value) Value {
	if !v.isContainer() || !v.writable() {
		return v
	}
	w, n, off := width(v.kind()), int(v.n()), int(v.off())
	for i := off + w - 1; i < off+w*n; i += w {
		// Only writable containers carry the flag: skip the rest unread.
		if a.nodes[i].h&flagWritable != 0 {
			a.nodes[i] = a.freeze(a.nodes[i])
		}
	}
	v.h &^= flagWritable
	v.ref = 0
	return v
}

// Clone returns a copy of v that later edits of any record do not change.
// Record.Set and the builders already copy what they store; Clone is for a
// caller that keeps a map or array read from an edited record while the
// record is edited further.
func (a *Arena) Clone(v Value) Value { return a.share(v) }

// Builder builds a new map or array in the arena without heap allocation.
// The zero Builder is not usable; get one from Arena.BeginMap or BeginArray.
// Several builders may be in progress at once (for nested literals).
type Builder struct {
	a     *Arena
	bkind Kind
	// first node, entries used and entries reserved
	first, n, cap int
}

// BeginMap starts a map with room for capHint entries.
func (a *Arena) BeginMap(capHint int) Builder { return a.begin(Map, capHint) }

// BeginArray starts an array with room for capHint elements.
func (a *Arena) BeginArray(capHint int) Builder { return a.begin(Array, capHint) }

func (a *Arena) begin(k Kind, capHint int) Builder {
	if capHint < 0 {
		capHint = 0
	}
	return Builder{a: a, bkind: k, first: a.alloc(width(k) * capHint), cap: capHint}
}

func (b *Builder) room() {
	if b.n < b.cap {
		return
	}
	a, w := b.a, width(b.bkind)
	newCap := 2*b.cap + 4
	if b.first+w*b.cap == len(a.nodes) { // last in the slice: grow in place
		a.alloc(w * (newCap - b.cap))
	} else {
		first := a.alloc(w * newCap)
		copy(a.nodes[first:], a.nodes[b.first:b.first+w*b.n])
		b.first = first
	}
	b.cap = newCap
}

// Add appends key (a String value of this arena) and val to a map builder.
// A key added twice keeps its first position and its last value.
func (b *Builder) Add(key, val Value) {
	key.setSig(keySig(b.a.raw(key)))
	b.room()
	j := b.first + 2*b.n
	b.a.nodes[j] = key
	b.a.nodes[j+1] = b.a.share(val)
	b.n++
}

// Append appends val to an array builder.
func (b *Builder) Append(val Value) {
	b.room()
	b.a.nodes[b.first+b.n] = b.a.share(val)
	b.n++
}

// Finish returns the built value. The builder must not be used afterwards.
func (b *Builder) Finish() Value {
	n := b.n
	if b.bkind == Map {
		n = b.a.dedup(b.a.nodes[b.first : b.first+2*b.n])
	}
	return containerValue(b.bkind, uint32(b.first), uint32(n))
}

// keySig returns the signature of a key: its first and last 4 bytes (or,
// in a shorter key, its first, middle and last byte) and its length mixed
// into 7 bits, with the top bit set so that 0 means "not known". Keys with
// different signatures differ, so lookups compare the bytes of a key only
// when its signature matches, a map's set of signatures tells that a key
// is missing, and while decoding a map, a key whose signature is new needs
// no comparison with the keys before it. (First and last byte alone gave
// keys like field_1 … field_999 a quarter of the 128 signatures.)
func keySig[T string | []byte](k T) uint8 {
	n := len(k)
	x := uint64(n)
	if n >= 4 {
		x ^= le32(k)<<8 | le32(k[n-4:])<<40
	} else if n > 0 {
		x ^= uint64(k[0])<<8 | uint64(k[n/2])<<16 | uint64(k[n-1])<<24
	}
	return uint8((x*0x9E3779B97F4A7C15)>>57) | 0x80
}

// le32 reads the first 4 bytes of k, little-endian (the compiler makes it
// one load).
func le32[T string | []byte](k T) uint64 {
	_ = k[3]
	return uint64(k[0]) | uint64(k[1])<<8 | uint64(k[2])<<16 | uint64(k[3])<<24
}

// sigSet is a set of key signatures.
type sigSet [2]uint64

// has reports whether sig is in the set.
func (s *sigSet) has(sig uint8) bool { return s[sig>>6&1]&(1<<(sig&63)) != 0 }

// add adds sig and reports whether it was there already.
func (s *sigSet) add(sig uint8) bool {
	w, bit := &s[sig>>6&1], uint64(1)<<(sig&63)
	had := *w&bit != 0
	*w |= bit
	return had
}

// hasKey reports whether the map entries kv, being decoded, hold key; the
// keys carry their signatures.
func (a *Arena) hasKey(kv []Value, key Value) bool {
	for i := 0; i < len(kv); i += 2 {
		if kv[i].sig() == key.sig() && a.keyEq(kv[i], key) {
			return true
		}
	}
	return false
}

// ascii reports whether s (a short string) is all ASCII.
func ascii(s []byte) bool {
	n := len(s)
	switch {
	case n >= 8:
		// The last 8 bytes, then 16 at a time from the start: the
		// loop's overhead is paid half as often (OTLP's user agents
		// and URLs run to a hundred bytes).
		acc := binary.LittleEndian.Uint64(s[n-8:])
		for ; len(s) >= 16; s = s[16:] {
			acc |= binary.LittleEndian.Uint64(s) | binary.LittleEndian.Uint64(s[8:])
		}
		if len(s) >= 8 {
			acc |= binary.LittleEndian.Uint64(s)
		}
		return acc&msb == 0
	case n >= 4:
		return (binary.LittleEndian.Uint32(s)|binary.LittleEndian.Uint32(s[n-4:]))&0x80808080 == 0
	}
	var acc byte
	for _, c := range s {
		acc |= c
	}
	return acc < 0x80
}

// validUTF8 is utf8.Valid with a quicker start for short ASCII strings:
// the OTLP decoders call it for every key and string, most a few bytes.
func validUTF8(s []byte) bool { return ascii(s) || utf8.Valid(s) }

// keyEq reports whether two String values hold the same bytes.
func (a *Arena) keyEq(x, y Value) bool {
	return uint32(x.u) == uint32(y.u) && string(a.raw(x)) == string(a.raw(y))
}

// dedup removes duplicate keys from the map entries kv (key, value pairs),
// keeping each key's first position and last value, compacting kv in place,
// and returns the number of entries left.
func (a *Arena) dedup(kv []Value) int {
	n := len(kv) / 2
	if n < 2 {
		return n
	}
	if n > 32 {
		return a.dedupHash(kv)
	}
	// A key is compared with the keys before it only when its signature
	// (length, first and last byte) was seen before: most maps have no
	// duplicates and pay one pass.
	var seen sigSet
	w := 0
	for i := 0; i < n; i++ {
		k := kv[2*i]
		sig := k.sig() // decoded keys carry it
		if sig == 0 {
			sig = keySig(a.raw(k))
		}
		if seen.add(sig) {
			raw := a.raw(k)
			j := 0
			for ; j < w; j++ {
				if uint32(kv[2*j].u) == uint32(k.u) && string(a.raw(kv[2*j])) == string(raw) {
					break
				}
			}
			if j < w {
				kv[2*j+1] = kv[2*i+1]
				continue
			}
		}
		if w != i {
			kv[2*w], kv[2*w+1] = k, kv[2*i+1]
		}
		w++
	}
	return w
}

func (a *Arena) dedupHash(kv []Value) int {
	n := len(kv) / 2
	t := &a.dedupT
	seed := t.Seed()
	t.Reset(n)
	w := 0
	for i := 0; i < n; i++ {
		k := kv[2*i]
		for slot, j := t.Probe(maphash.Bytes(seed, a.raw(k))); ; slot, j = t.Next(slot) {
			if j < 0 {
				t.Put(slot, w)
				if w != i {
					kv[2*w], kv[2*w+1] = k, kv[2*i+1]
				}
				w++
				break
			}
			if a.keyEq(kv[2*j], k) {
				kv[2*j+1] = kv[2*i+1]
				break
			}
		}
	}
	return w
}
