package state

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// entry is one key of a Table, in its recency list.
type entry struct {
	key uint64
	// t is, for dedupe, when the key was last kept; for rate_limit, its
	// bucket's theoretical arrival time (GCRA: the bucket is full when
	// t <= now).
	t int64
	// n is, for dedupe, how many records of the key were dropped since it
	// was last kept.
	n          int64
	prev, next int32 // towards the most and the least recently used; -1 at the ends
}

const entrySize = int64(unsafe.Sizeof(entry{}))

// indexLen is the length of the index of a table of n keys: a power of
// two at least twice n, so that probes stay short.
func indexLen(n int) int {
	l := 16
	for l < 2*n {
		l <<= 1
	}
	return l
}

// Table is the memory of one statement: at most MaxKeys keys, the least
// recently used evicted first. It is safe for concurrent use: a stage
// that runs batches on several goroutines shares it. One mutex guards
// it, held for a lookup and an update and nothing else; a stage's workers
// are few, and the lock is not contended for longer than that.
type Table struct {
	spec Spec

	mu         sync.Mutex
	ents       []entry
	idx        []int32 // open addressing, linear probing: an entry's index + 1, 0 empty
	head, tail int32   // the most and the least recently used entry; -1 when empty

	evictions atomic.Uint64
	seq       atomic.Uint64 // records seen by sample keep 1 in N
}

func newTable(s Spec) *Table { return &Table{spec: s, head: -1, tail: -1} }

// Spec is the statement the table serves.
func (t *Table) Spec() Spec { return t.spec }

// Len is how many keys the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ents)
}

// Evictions is how many keys were evicted to make room for others.
func (t *Table) Evictions() uint64 { return t.evictions.Load() }

// Dedupe runs dedupe for a record of key at now (unix nanoseconds): drop
// when the key was kept less than the window ago; otherwise the key is
// kept now, and count is how many of its records were dropped since it
// was last kept.
func (t *Table) Dedupe(key uint64, now int64) (drop bool, count int64) {
	t.mu.Lock()
	i, found := t.find(key, now)
	e := &t.ents[i]
	if found && now-e.t < t.spec.Window {
		// A clock that went back (now < e.t) drops too: the key was
		// kept "less than D ago" as far as the table can tell.
		e.n++
		t.mu.Unlock()
		return true, 0
	}
	count = e.n
	e.t, e.n = now, 0
	t.mu.Unlock()
	return false, count
}

// Rate runs rate_limit for a record of key at now: a bucket of N tokens
// refilled at N per window (as GCRA, in integers, so that every backend
// agrees to the nanosecond); drop when it is empty.
func (t *Table) Rate(key uint64, now int64) (drop bool) {
	step := max(t.spec.Window/max(t.spec.N, 1), 1)
	t.mu.Lock()
	i, found := t.find(key, now)
	e := &t.ents[i]
	tat := max(e.t, now)
	if !found {
		tat = now
	}
	if tat-now > t.spec.Window-step {
		t.mu.Unlock()
		return true
	}
	e.t = tat + step
	t.mu.Unlock()
	return false
}

// Every runs sample keep 1 in N: it keeps the N-th record, the 2N-th, and
// so on.
func (t *Table) Every() (drop bool) {
	return t.seq.Add(1)%uint64(max(t.spec.N, 1)) != 0
}

// find returns the entry of key, made the most recently used; a new key
// gets an entry (t = now, n = 0), evicting the least recently used when
// the table is full.
func (t *Table) find(key uint64, now int64) (int32, bool) {
	mask := len(t.idx) - 1
	if mask > 0 {
		for j := int(key) & mask; ; j = (j + 1) & mask {
			x := t.idx[j]
			if x == 0 {
				break
			}
			if t.ents[x-1].key == key {
				t.touch(x - 1)
				return x - 1, true
			}
		}
	}
	var i int32
	if len(t.ents) < t.spec.MaxKeys {
		t.grow()
		i = int32(len(t.ents))
		t.ents = append(t.ents, entry{})
	} else {
		i = t.tail
		t.unlink(i)
		t.remove(t.ents[i].key)
		t.evictions.Add(1)
	}
	t.ents[i] = entry{key: key, t: now, prev: -1, next: -1}
	t.insert(key, i)
	t.pushFront(i)
	return i, false
}

// grow makes room for one more entry: the index at most half full, and
// the entries' capacity doubled up to MaxKeys, never past it.
func (t *Table) grow() {
	n := len(t.ents) + 1
	if 2*n > len(t.idx) {
		old := t.idx
		t.idx = make([]int32, indexLen(n))
		for _, x := range old {
			if x != 0 {
				t.insert(t.ents[x-1].key, x-1)
			}
		}
	}
	if n > cap(t.ents) {
		c := min(max(2*cap(t.ents), 16), t.spec.MaxKeys)
		ents := make([]entry, len(t.ents), c)
		copy(ents, t.ents)
		t.ents = ents
	}
}

func (t *Table) insert(key uint64, i int32) {
	mask := len(t.idx) - 1
	j := int(key) & mask
	for t.idx[j] != 0 {
		j = (j + 1) & mask
	}
	t.idx[j] = i + 1
}

// remove deletes key from the index, shifting back the entries after it
// so that no probe sequence is broken (no tombstones).
func (t *Table) remove(key uint64) {
	mask := len(t.idx) - 1
	j := int(key) & mask
	for t.ents[t.idx[j]-1].key != key {
		j = (j + 1) & mask
	}
	for {
		t.idx[j] = 0
		k := j
		for {
			k = (k + 1) & mask
			x := t.idx[k]
			if x == 0 {
				return
			}
			home := int(t.ents[x-1].key) & mask
			// The entry at k may move to j when its home is not
			// cyclically within (j, k].
			if (k > j && (home <= j || home > k)) || (k < j && home <= j && home > k) {
				t.idx[j] = x
				j = k
				break
			}
		}
	}
}

func (t *Table) unlink(i int32) {
	e := &t.ents[i]
	if e.prev >= 0 {
		t.ents[e.prev].next = e.next
	} else {
		t.head = e.next
	}
	if e.next >= 0 {
		t.ents[e.next].prev = e.prev
	} else {
		t.tail = e.prev
	}
	e.prev, e.next = -1, -1
}

func (t *Table) pushFront(i int32) {
	e := &t.ents[i]
	e.prev, e.next = -1, t.head
	if t.head >= 0 {
		t.ents[t.head].prev = i
	}
	t.head = i
	if t.tail < 0 {
		t.tail = i
	}
}

func (t *Table) touch(i int32) {
	if t.head == i {
		return
	}
	t.unlink(i)
	t.pushFront(i)
}
