// Package indextable is the open-addressing hash table that finds, in a
// sequence of items, the first one equal to another: record's decoders and
// builders keep a map's first key of each name with it (duplicate keys),
// record/coll's unique the first element of each value. It holds only
// indexes into the caller's items; the caller hashes, with the table's
// seed, and says which items are equal, so that the probing loop, with
// both inlined, costs what a loop written for one caller would.
package indextable

import "hash/maphash"

// Table is the table; the zero Table is ready to Reset. It is not safe
// for concurrent use.
type Table struct {
	slots  []uint32 // 1 + the index of an item kept, or 0
	mask   uint64
	seed   maphash.Seed
	seeded bool
}

// Seed returns the seed to hash items with: random, made once, so that
// crafted items cannot make every one collide.
func (t *Table) Seed() maphash.Seed {
	if !t.seeded {
		t.seed, t.seeded = maphash.MakeSeed(), true
	}
	return t.seed
}

// Reset empties the table and sizes it for n items: at least twice as
// many slots, so that probes stay short.
func (t *Table) Reset(n int) {
	size := 64
	for size < 2*n {
		size <<= 1
	}
	if cap(t.slots) < size {
		t.slots = make([]uint32, size)
	}
	t.slots = t.slots[:size]
	clear(t.slots)
	t.mask = uint64(size - 1)
}

// Probe returns the first slot of hash h and the item kept there, or -1
// when the slot is empty: then no item kept so far has the hash, and Put
// may keep one there.
func (t *Table) Probe(h uint64) (slot uint64, item int) {
	slot = h & t.mask
	return slot, int(t.slots[slot]) - 1
}

// Next returns the slot after slot, and its item as Probe does: the next
// place to look when the item in slot was not the one sought.
func (t *Table) Next(slot uint64) (uint64, int) {
	slot = (slot + 1) & t.mask
	return slot, int(t.slots[slot]) - 1
}

// Put keeps item in slot, an empty slot that Probe or Next returned.
func (t *Table) Put(slot uint64, item int) { t.slots[slot] = uint32(item + 1) }

// Reserved returns the bytes the table holds.
func (t *Table) Reserved() int { return cap(t.slots) * 4 }
