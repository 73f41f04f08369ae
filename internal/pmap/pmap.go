// Package pmap is a persistent hash map (a hash array mapped trie): Set and
// Delete return a new map and leave the old one as it was, sharing all but
// the O(log n) nodes on the way to the key. Two maps derived from one share
// every subtree neither changed, and Diff visits only the keys outside the
// shared subtrees, so comparing or merging two versions costs what they
// changed, not their size. Keys hash themselves, so that the order of All
// is the same on every run.
package pmap

import "math/bits"

// A Key is a map key that hashes itself.
type Key interface {
	comparable
	Hash() uint64
}

// Map is a persistent map from K to V. The zero Map is empty and ready to
// use; a Map is a value, copied in O(1).
type Map[K Key, V any] struct {
	root *node[K, V]
	n    int
}

const (
	bitsPerLevel = 5
	fanout       = 1 << bitsPerLevel
	maxLevel     = (64 + bitsPerLevel - 1) / bitsPerLevel
)

type entry[K Key, V any] struct {
	h   uint64
	key K
	val V
}

// A node is a leaf (ents: one entry, or several whose hashes are equal) or a
// branch (kids, one per set bit of bitmap).
type node[K Key, V any] struct {
	bitmap uint32
	kids   []*node[K, V]
	ents   []entry[K, V]
}

func (n *node[K, V]) leaf() bool { return len(n.ents) > 0 }

func slot(h uint64, level int) uint32 {
	return uint32(h>>(uint(level)*bitsPerLevel)) & (fanout - 1)
}

func (n *node[K, V]) kid(s uint32) *node[K, V] {
	bit := uint32(1) << s
	if n.bitmap&bit == 0 {
		return nil
	}
	return n.kids[bits.OnesCount32(n.bitmap&(bit-1))]
}

// Len is the number of keys in m.
func (m Map[K, V]) Len() int { return m.n }

// Get returns the value of k and whether m holds k.
func (m Map[K, V]) Get(k K) (V, bool) {
	h := k.Hash()
	n := m.root
	for level := 0; n != nil; level++ {
		if n.leaf() {
			for _, e := range n.ents {
				if e.key == k {
					return e.val, true
				}
			}
			break
		}
		n = n.kid(slot(h, level))
	}
	var zero V
	return zero, false
}

// Set returns m with k mapped to v.
func (m Map[K, V]) Set(k K, v V) Map[K, V] {
	root, added := set(m.root, entry[K, V]{h: k.Hash(), key: k, val: v}, 0)
	m.root = root
	if added {
		m.n++
	}
	return m
}

func set[K Key, V any](n *node[K, V], e entry[K, V], level int) (*node[K, V], bool) {
	if n == nil {
		return &node[K, V]{ents: []entry[K, V]{e}}, true
	}
	if n.leaf() {
		if n.ents[0].h == e.h || level >= maxLevel {
			ents := make([]entry[K, V], len(n.ents), len(n.ents)+1)
			copy(ents, n.ents)
			for i := range ents {
				if ents[i].key == e.key {
					ents[i] = e
					return &node[K, V]{ents: ents}, false
				}
			}
			return &node[K, V]{ents: append(ents, e)}, true
		}
		// Push the leaf down one level, then add e beside it.
		s := slot(n.ents[0].h, level)
		n = &node[K, V]{bitmap: 1 << s, kids: []*node[K, V]{n}}
	}
	s := slot(e.h, level)
	bit := uint32(1) << s
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	out := &node[K, V]{bitmap: n.bitmap | bit}
	if n.bitmap&bit != 0 {
		kid, added := set(n.kids[i], e, level+1)
		out.kids = make([]*node[K, V], len(n.kids))
		copy(out.kids, n.kids)
		out.kids[i] = kid
		return out, added
	}
	out.kids = make([]*node[K, V], len(n.kids)+1)
	copy(out.kids, n.kids[:i])
	out.kids[i] = &node[K, V]{ents: []entry[K, V]{e}}
	copy(out.kids[i+1:], n.kids[i:])
	return out, true
}

// Delete returns m without k.
func (m Map[K, V]) Delete(k K) Map[K, V] {
	root, removed := del(m.root, k, k.Hash(), 0)
	if removed {
		m.root = root
		m.n--
	}
	return m
}

func del[K Key, V any](n *node[K, V], k K, h uint64, level int) (*node[K, V], bool) {
	if n == nil {
		return nil, false
	}
	if n.leaf() {
		for i, e := range n.ents {
			if e.key != k {
				continue
			}
			if len(n.ents) == 1 {
				return nil, true
			}
			ents := make([]entry[K, V], 0, len(n.ents)-1)
			ents = append(append(ents, n.ents[:i]...), n.ents[i+1:]...)
			return &node[K, V]{ents: ents}, true
		}
		return n, false
	}
	s := slot(h, level)
	bit := uint32(1) << s
	if n.bitmap&bit == 0 {
		return n, false
	}
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	kid, removed := del(n.kids[i], k, h, level+1)
	if !removed {
		return n, false
	}
	if kid == nil {
		if len(n.kids) == 1 {
			return nil, true
		}
		if len(n.kids) == 2 && n.kids[1-i].leaf() {
			return n.kids[1-i], true // a branch over one leaf is that leaf
		}
		out := &node[K, V]{bitmap: n.bitmap &^ bit, kids: make([]*node[K, V], 0, len(n.kids)-1)}
		out.kids = append(append(out.kids, n.kids[:i]...), n.kids[i+1:]...)
		return out, true
	}
	if len(n.kids) == 1 && kid.leaf() {
		return kid, true
	}
	out := &node[K, V]{bitmap: n.bitmap, kids: make([]*node[K, V], len(n.kids))}
	copy(out.kids, n.kids)
	out.kids[i] = kid
	return out, true
}

// All calls yield for each key and value of m, in an order fixed by the
// keys' hashes, until yield returns false.
func (m Map[K, V]) All(yield func(K, V) bool) {
	m.root.all(yield)
}

func (n *node[K, V]) all(yield func(K, V) bool) bool {
	if n == nil {
		return true
	}
	for _, e := range n.ents {
		if !yield(e.key, e.val) {
			return false
		}
	}
	for _, k := range n.kids {
		if !k.all(yield) {
			return false
		}
	}
	return true
}

// Diff calls f for every key of a or b that is not in a subtree the two
// maps share: each key that one map lacks (with ok false on that side) and
// each key both hold outside the shared subtrees, whose values may or may
// not be equal. Keys of a shared subtree map to the same value in both, so
// a caller comparing or merging a and b can skip them. The order is fixed
// by the keys' hashes.
func Diff[K Key, V any](a, b Map[K, V], f func(k K, av V, aok bool, bv V, bok bool)) {
	diff(a.root, b.root, 0, f)
}

func diff[K Key, V any](a, b *node[K, V], level int, f func(K, V, bool, V, bool)) {
	var zero V
	switch {
	case a == b:
		return
	case a == nil:
		b.all(func(k K, v V) bool { f(k, zero, false, v, true); return true })
		return
	case b == nil:
		a.all(func(k K, v V) bool { f(k, v, true, zero, false); return true })
		return
	case !a.leaf() && !b.leaf():
		for s := uint32(0); s < fanout; s++ {
			if ka, kb := a.kid(s), b.kid(s); ka != nil || kb != nil {
				diff(ka, kb, level+1, f)
			}
		}
		return
	}
	// A leaf on one side: it holds few entries; match them with the other
	// side's, whatever its shape.
	leafA := a.leaf()
	l, o := a, b
	if !leafA {
		l, o = b, a
	}
	seen := make([]bool, len(l.ents))
	o.all(func(k K, v V) bool {
		for i, e := range l.ents {
			if e.key == k {
				seen[i] = true
				if leafA {
					f(k, e.val, true, v, true)
				} else {
					f(k, v, true, e.val, true)
				}
				return true
			}
		}
		if leafA {
			f(k, zero, false, v, true)
		} else {
			f(k, v, true, zero, false)
		}
		return true
	})
	for i, e := range l.ents {
		if !seen[i] {
			if leafA {
				f(e.key, e.val, true, zero, false)
			} else {
				f(e.key, zero, false, e.val, true)
			}
		}
	}
}

// MixID spreads the bits of a small sequential id over all 64 (splitmix64's
// finalizer), for keys whose Hash is an interned id.
func MixID(id uint64) uint64 {
	id ^= id >> 30
	id *= 0xbf58476d1ce4e5b9
	id ^= id >> 27
	id *= 0x94d049bb133111eb
	return id ^ id>>31
}
