package state

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A Table's keys live in its slots themselves, open addressing with
// linear probing, so that a lookup touches one place in memory: in a
// pipeline the table is out of the cache by the time a key comes again
// (decoding a batch streams megabytes through it), and each dependent
// read of another place (an index, then the entry, then its neighbours in
// a linked recency list) was one more trip to memory.
//
// Recency is a log of slot numbers in the order the keys were last used,
// the least recently used first: a key used again is appended anew, and
// its older item goes stale (the entry's at no longer names it) and is
// skipped by eviction, which takes the first item that is live, and by
// compaction, which squeezes the stale ones out when the log is full.
// Using a key writes its own slot and the log's tail, and reads no
// neighbour: exact least-recently-used order, without a linked list.

// entry is one slot of a Table.
type entry struct {
	key uint64
	// t is, for dedupe, when the key was last kept; for rate_limit, its
	// bucket's theoretical arrival time (GCRA: the bucket is full when
	// t <= now).
	t int64
	// n is, for dedupe, how many records of the key were dropped since it
	// was last kept, up to MaxUint32, where it stays: 24 bytes a slot
	// rather than 32 keep more keys to a cache line.
	n uint32
	// at is 1 + the place of the key's live item in the log; 0 marks an
	// empty slot.
	at uint32
}

const entrySize = int64(unsafe.Sizeof(entry{}))

// slotsFor is how many slots a table of at most c keys has: at most
// three quarters full, so that probes stay short (2.5 slots on average
// to find a key, 8.5 to find it absent).
func slotsFor(c int) int { return c + c/3 + 1 }

// logFor is the length of the log of a table of at most c keys: twice c,
// so that a compaction, which reads the whole log, comes at most once
// every c uses.
func logFor(c int) int { return 2 * c }

// Table is the memory of one statement: at most MaxKeys keys, the least
// recently used evicted first. It is safe for concurrent use: a stage
// that runs batches on several goroutines shares it. One mutex guards
// it, held for a lookup and an update, or by a holder across the records
// of a batch (Hold) until another goroutine waits for it.
type Table struct {
	spec Spec

	mu      sync.Mutex
	waiting atomic.Int32 // goroutines blocked on mu, whom a holder lets in
	slots   []entry
	log     []uint32 // slots, least recently used first, from head to len(log)
	head    int      // the log's items before it are all stale
	n       int      // keys held
	c       int      // keys the slots are sized for: n reaching it grows them, or evicts past MaxKeys

	evictions atomic.Uint64
	seq       atomic.Uint64 // records seen by sample keep 1 in N
}

func newTable(s Spec) *Table { return &Table{spec: s} }

// Spec is the statement the table serves.
func (t *Table) Spec() Spec { return t.spec }

// Len is how many keys the table holds.
func (t *Table) Len() int {
	t.lock()
	defer t.mu.Unlock()
	return t.n
}

// Evictions is how many keys were evicted to make room for others.
func (t *Table) Evictions() uint64 { return t.evictions.Load() }

// lock takes the mutex, counted in waiting while it blocks.
func (t *Table) lock() {
	if !t.mu.TryLock() {
		t.waiting.Add(1)
		t.mu.Lock()
		t.waiting.Add(-1)
	}
}

// Hold locks the table for a run of records on one goroutine (a VM's
// batch), until Release; DedupeHeld and RateHeld then run without a lock
// of their own. An uncontended lock and unlock a record cost a fifth of a
// lookup, and unlocking waits for the lookup's writes to reach the cache.
// Between its records a holder asks Contended, and releases the table
// when another goroutine waits for it: holding never makes one wait for
// more than a record. A goroutine that holds several tables takes them in
// one order (HoldAll).
func (t *Table) Hold() { t.lock() }

// Release gives back a table held with Hold.
func (t *Table) Release() { t.mu.Unlock() }

// Contended reports whether a goroutine waits for the table.
func (t *Table) Contended() bool { return t.waiting.Load() != 0 }

// HoldAll holds every table of ts, in order of ID: every holder takes
// them in that one order, so that no two wait for each other. ts must
// be sorted by ID (SortByID).
func HoldAll(ts []*Table) {
	for _, t := range ts {
		t.Hold()
	}
}

// SortByID sorts ts as HoldAll takes them.
func SortByID(ts []*Table) {
	slices.SortFunc(ts, func(a, b *Table) int { return cmp.Compare(a.spec.ID, b.spec.ID) })
}

// Dedupe runs dedupe for a record of key at now (unix nanoseconds): drop
// when the key was kept less than the window ago; otherwise the key is
// kept now, and count is how many of its records were dropped since it
// was last kept.
func (t *Table) Dedupe(key uint64, now int64) (drop bool, count int64) {
	t.lock()
	drop, count = t.DedupeHeld(key, now)
	t.mu.Unlock()
	return drop, count
}

// DedupeHeld is Dedupe for the holder of the table (Hold).
func (t *Table) DedupeHeld(key uint64, now int64) (drop bool, count int64) {
	e, found := t.find(key, now)
	if found && now-e.t < t.spec.Window {
		// A clock that went back (now < e.t) drops too: the key was
		// kept "less than D ago" as far as the table can tell.
		if e.n < math.MaxUint32 {
			e.n++
		}
		return true, 0
	}
	count = int64(e.n)
	e.t, e.n = now, 0
	return false, count
}

// Rate runs rate_limit for a record of key at now: a bucket of N tokens
// refilled at N per window (as GCRA, in integers, so that every backend
// agrees to the nanosecond); drop when it is empty.
func (t *Table) Rate(key uint64, now int64) (drop bool) {
	t.lock()
	drop = t.RateHeld(key, now)
	t.mu.Unlock()
	return drop
}

// RateHeld is Rate for the holder of the table (Hold).
func (t *Table) RateHeld(key uint64, now int64) (drop bool) {
	step := max(t.spec.Window/max(t.spec.N, 1), 1)
	e, found := t.find(key, now)
	tat := max(e.t, now)
	if !found {
		tat = now
	}
	if tat-now > t.spec.Window-step {
		return true
	}
	e.t = tat + step
	return false
}

// Every runs sample keep 1 in N: it keeps the N-th record, the 2N-th, and
// so on.
func (t *Table) Every() (drop bool) {
	return t.seq.Add(1)%uint64(max(t.spec.N, 1)) != 0
}

// home is key's first slot: the high bits of the key scaled to the
// slots, as the slots are not a power of two (that would waste up to
// half of them).
func (t *Table) home(key uint64) int {
	hi, _ := bits.Mul64(key, uint64(len(t.slots)))
	return int(hi)
}

// find returns the entry of key, made the most recently used; a new key
// gets an entry (t = now, n = 0), evicting the least recently used when
// the table is full. The pointer is good until the next find.
func (t *Table) find(key uint64, now int64) (*entry, bool) {
	if len(t.slots) > 0 {
		for j := t.home(key); ; {
			e := &t.slots[j]
			if e.at == 0 {
				break
			}
			if e.key == key {
				if int(e.at) != len(t.log) {
					t.use(j) // not the most recently used already
				}
				return e, true
			}
			if j++; j == len(t.slots) {
				j = 0
			}
		}
	}
	if t.n == t.c {
		if t.c < t.spec.MaxKeys {
			t.grow(min(max(2*t.c, 16), t.spec.MaxKeys))
		} else {
			t.evict()
		}
	}
	j := t.free(key)
	t.slots[j] = entry{key: key, t: now}
	t.n++
	t.use(j)
	return &t.slots[j], false
}

// free is the empty slot where key goes: the first on its probe
// sequence.
func (t *Table) free(key uint64) int {
	j := t.home(key)
	for t.slots[j].at != 0 {
		if j++; j == len(t.slots) {
			j = 0
		}
	}
	return j
}

// use appends slot j to the log, making its key the most recently used;
// its older item, if any, is stale from then on.
func (t *Table) use(j int) {
	if len(t.log) == cap(t.log) {
		t.compact()
	}
	t.log = append(t.log, uint32(j))
	t.slots[j].at = uint32(len(t.log))
}

// live reports whether the log's item i is its slot's live one.
func (t *Table) live(i int) bool { return int(t.slots[t.log[i]].at) == i+1 }

// compact drops the log's stale items, keeping the live ones in order.
// The log holds at most c live items of 2c, so that the next compaction
// is at least c uses away.
func (t *Table) compact() {
	w := 0
	for i := t.head; i < len(t.log); i++ {
		if t.live(i) {
			s := t.log[i]
			t.log[w] = s
			w++
			t.slots[s].at = uint32(w)
		}
	}
	t.log, t.head = t.log[:w], 0
}

// evict removes the least recently used key.
func (t *Table) evict() {
	for !t.live(t.head) {
		t.head++
	}
	j := int(t.log[t.head])
	t.head++
	t.remove(j)
	t.n--
	t.evictions.Add(1)
}

// remove empties slot j, shifting back the entries after it so that no
// probe sequence is broken (no tombstones); an entry that moves takes its
// live log item along.
func (t *Table) remove(j int) {
	n := len(t.slots)
	for {
		t.slots[j] = entry{}
		k := j
		for {
			if k++; k == n {
				k = 0
			}
			e := t.slots[k]
			if e.at == 0 {
				return
			}
			// The entry at k may move to j when its home is not
			// cyclically within (j, k].
			h := t.home(e.key)
			if (j < k && (h <= j || h > k)) || (j > k && h <= j && h > k) {
				t.slots[j] = e
				t.log[e.at-1] = uint32(j)
				j = k
				break
			}
		}
	}
}

// grow resizes the slots and the log for c keys, keeping every key and
// its recency.
func (t *Table) grow(c int) {
	old, oldLog := t.slots, t.log
	t.slots, t.log, t.head, t.c = make([]entry, slotsFor(c)), make([]uint32, 0, logFor(c)), 0, c
	for i := range oldLog {
		if e := old[oldLog[i]]; int(e.at) == i+1 {
			j := t.free(e.key)
			t.slots[j] = e
			t.use(j)
		}
	}
}

// each calls f with every key's entry, the least recently used first.
func (t *Table) each(f func(e *entry)) {
	for i := t.head; i < len(t.log); i++ {
		if t.live(i) {
			f(&t.slots[t.log[i]])
		}
	}
}
