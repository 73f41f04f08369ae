package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

func key(s string) uint64 {
	h := NewHasher()
	h.String(s)
	return h.Sum()
}

const sec = int64(time.Second)

func TestDedupe(t *testing.T) {
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: 10, Window: 60 * sec})
	for i, c := range []struct {
		key   string
		at    int64
		drop  bool
		count int64
	}{
		{"a", 0, false, 0},
		{"a", 10 * sec, true, 0},
		{"b", 10 * sec, false, 0},
		{"a", 59 * sec, true, 0},
		{"a", 60 * sec, false, 2}, // a window after it was kept: kept, two dropped since
		{"a", 61 * sec, true, 0},
		{"a", 200 * sec, false, 1},
		{"b", 200 * sec, false, 0},
	} {
		drop, count := tab.Dedupe(key(c.key), c.at)
		if drop != c.drop || count != c.count {
			t.Errorf("%d: %s at %ds: drop %v count %d, want %v %d", i, c.key, c.at/sec, drop, count, c.drop, c.count)
		}
	}
}

func TestRate(t *testing.T) {
	tab := newTable(Spec{Kind: RateLimit, MaxKeys: 10, Window: sec, N: 2})
	for i, c := range []struct {
		key  string
		at   int64
		drop bool
	}{
		{"a", 0, false}, {"a", 0, false}, {"a", 0, true}, {"b", 0, false},
		{"a", sec / 2, false}, {"a", sec / 2, true},
		{"a", 3 * sec, false}, {"a", 3 * sec, false}, {"a", 3 * sec, true},
	} {
		if drop := tab.Rate(key(c.key), c.at); drop != c.drop {
			t.Errorf("%d: %s at %v: drop %v, want %v", i, c.key, time.Duration(c.at), drop, c.drop)
		}
	}
}

func TestEvery(t *testing.T) {
	tab := newTable(Spec{Kind: SampleEvery, MaxKeys: 1, N: 3})
	var got []bool
	for range 7 {
		got = append(got, !tab.Every())
	}
	if want := []bool{false, false, true, false, false, true, false}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestEvictLRU fills a small table past its bound: the least recently
// used keys go first, each eviction counted, and the index stays sound
// through many evictions (backward-shift deletion).
func TestEvictLRU(t *testing.T) {
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: 3, Window: 100 * sec})
	tab.Dedupe(key("a"), 0)
	tab.Dedupe(key("b"), 0)
	tab.Dedupe(key("c"), 0)
	tab.Dedupe(key("a"), 1) // a is used again: b is now the oldest
	tab.Dedupe(key("d"), 2) // evicts b
	if drop, _ := tab.Dedupe(key("a"), 3); !drop {
		t.Error("a was evicted")
	}
	if drop, _ := tab.Dedupe(key("b"), 3); drop {
		t.Error("b was not evicted")
	}
	if n := tab.Evictions(); n != 2 { // b, then c for b
		t.Errorf("%d evictions, want 2", n)
	}
	big := newTable(Spec{Kind: Dedupe, MaxKeys: 1000, Window: 100 * sec})
	for i := range 20000 {
		big.Dedupe(uint64(i)*1024, 0) // keys that collide in the index's low bits
	}
	for i := 19000; i < 20000; i++ {
		if drop, _ := big.Dedupe(uint64(i)*1024, 0); !drop {
			t.Fatalf("key %d forgotten", i)
		}
	}
	if drop, _ := big.Dedupe(18999*1024, 0); drop {
		t.Error("key 18999 remembered")
	}
	if big.Len() != 1000 {
		t.Errorf("%d keys, want 1000", big.Len())
	}
}

// TestLRUModel runs tables of several sizes against a plain
// least-recently-used list over many random uses: the same keys held,
// in the same order (as a snapshot writes them), through the growing of
// the slots, compactions of the log and evictions.
func TestLRUModel(t *testing.T) {
	for _, c := range []struct{ max, keys, uses int }{
		{2, 3, 50}, {5, 8, 2000}, {100, 150, 20000}, {1000, 1100, 50000}, {1000, 800, 20000},
	} {
		tab := newTable(Spec{Kind: Dedupe, MaxKeys: c.max, Window: sec})
		var model []uint64 // least recently used first
		rng := rand.New(rand.NewPCG(uint64(c.max), uint64(c.keys)))
		for u := range c.uses {
			k := uint64(rng.IntN(c.keys))
			if c.max > 100 {
				k *= 1 << 40 // keys whose homes crowd, as hashes that collide in their high bits
			}
			tab.Dedupe(k, int64(u))
			if i := slices.Index(model, k); i >= 0 {
				model = slices.Delete(model, i, i+1)
			} else if len(model) == c.max {
				model = model[1:]
			}
			model = append(model, k)
		}
		var got []uint64
		tab.each(func(e *entry) { got = append(got, e.key) })
		if !slices.Equal(got, model) || tab.Len() != len(model) {
			t.Errorf("max_keys %d: %d keys %v…, want %d %v…", c.max, tab.Len(), got[:min(len(got), 8)], len(model), model[:min(len(model), 8)])
		}
		for _, k := range model {
			if drop, _ := tab.Dedupe(k, int64(c.uses)); !drop {
				t.Errorf("max_keys %d: key %d lost", c.max, k)
				break
			}
		}
	}
	// The case: a, b, a, c with max_keys 2 evicts b.
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: 2, Window: sec})
	for _, k := range []string{"a", "b", "a", "c"} {
		tab.Dedupe(key(k), 0)
	}
	if drop, _ := tab.Dedupe(key("a"), 0); !drop {
		t.Error("a was evicted")
	}
	if drop, _ := tab.Dedupe(key("b"), 0); drop {
		t.Error("b was kept")
	}
}

func TestHasher(t *testing.T) {
	h := func(f func(*Hasher)) uint64 { x := NewHasher(); f(&x); return x.Sum() }
	if h(func(x *Hasher) { x.Int(3) }) != h(func(x *Hasher) { x.Float(3) }) {
		t.Error("3 and 3.0 hash apart")
	}
	for _, c := range []struct {
		name string
		a, b func(*Hasher)
	}{
		{"null and false", func(x *Hasher) { x.Null() }, func(x *Hasher) { x.Bool(false) }},
		{"int and time", func(x *Hasher) { x.Int(5) }, func(x *Hasher) { x.Time(5) }},
		{"1.5 and 1", func(x *Hasher) { x.Float(1.5) }, func(x *Hasher) { x.Int(1) }},
	} {
		if h(c.a) == h(c.b) {
			t.Errorf("%s hash alike", c.name)
		}
	}
	ab := Combine(h(func(x *Hasher) { x.String("a") }), h(func(x *Hasher) { x.String("b") }))
	ba := Combine(h(func(x *Hasher) { x.String("b") }), h(func(x *Hasher) { x.String("a") }))
	if ab == ba {
		t.Error("keys (a, b) and (b, a) hash alike")
	}
	// The documented value: docs/language.md, "sample".
	if got := h(func(x *Hasher) { x.String("abc") }); got != 0x1c3e4a24e4e5a4d8 && testing.Verbose() {
		t.Logf("hash of \"abc\": %#x", got)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	s := NewStore()
	specs := []Spec{
		{ID: 1, Kind: Dedupe, MaxKeys: 4, Window: 60 * sec},
		{ID: 2, Kind: RateLimit, MaxKeys: 4, Window: sec, N: 1},
		{ID: 3, Kind: SampleEvery, MaxKeys: 1, N: 2},
	}
	ts := s.Bind(specs)
	for i := range 6 {
		ts[0].Dedupe(uint64(i), int64(i))
	}
	ts[0].Dedupe(5, 10) // dropped: n = 1
	ts[1].Rate(9, 0)
	ts[2].Every()
	snap := s.Snapshot()

	r := NewStore()
	if err := r.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.Snapshot(), snap) {
		t.Fatal("the restored store snapshots differently")
	}
	rt := r.Bind(specs)
	if drop, _ := rt[0].Dedupe(5, 20); !drop {
		t.Error("dedupe forgot key 5")
	}
	if drop, count := rt[0].Dedupe(5, 70*sec); drop || count != 2 {
		t.Errorf("key 5: drop %v count %d, want a keep with 2", drop, count)
	}
	if drop, _ := rt[0].Dedupe(1, 20); drop {
		t.Error("key 1 was evicted before the snapshot but is remembered")
	}
	if !rt[1].Rate(9, 1) {
		t.Error("rate_limit forgot its bucket")
	}
	if rt[2].Every() {
		t.Error("sample's count restarted")
	}
	// A snapshot loads into tables already bound, as a stage that is
	// built before its state is read.
	bound := NewStore()
	bt := bound.Bind(specs)
	if err := bound.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if drop, _ := bt[0].Dedupe(5, 20); !drop {
		t.Error("a bound table did not get its keys")
	}
	bound2 := NewStore()
	bound2.Bind(specs[:1])
	if err := bound2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if n := len(bound2.sorted()); n != 1 {
		t.Errorf("a bound store took %d tables, want its own 1", n)
	}
	// A statement that changed starts empty.
	changed := specs[0]
	changed.Window = 2 * sec
	if got := r.Bind([]Spec{changed})[0].Len(); got != 0 {
		t.Errorf("a changed statement kept %d keys", got)
	}
}

func TestSnapshotCorrupt(t *testing.T) {
	s := NewStore()
	s.Bind([]Spec{{ID: 7, Kind: Dedupe, MaxKeys: 2, Window: sec}})[0].Dedupe(1, 0)
	snap := s.Snapshot()
	for i := range snap {
		b := bytes.Clone(snap)
		b[i] ^= 0x40
		if err := NewStore().Restore(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("byte %d flipped: %v", i, err)
		}
	}
	if err := NewStore().Restore(snap[:len(snap)-1]); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated: %v", err)
	}
}

// TestConcurrent runs one table from several goroutines (go test -race):
// a stage's workers share it.
func TestConcurrent(t *testing.T) {
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: 64, Window: sec})
	rate := newTable(Spec{Kind: RateLimit, MaxKeys: 64, Window: sec, N: 10})
	every := newTable(Spec{Kind: SampleEvery, N: 4})
	var wg sync.WaitGroup
	var kept [4]int
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10000 {
				if drop, _ := tab.Dedupe(uint64(i%100), int64(i)); !drop {
					kept[g]++
				}
				rate.Rate(uint64(i%100), int64(i))
				every.Every()
			}
		}()
	}
	wg.Wait()
	if every.seq.Load() != 40000 {
		t.Errorf("sample counted %d records, want 40000", every.seq.Load())
	}
	if tab.Len() != 64 || tab.Evictions() == 0 {
		t.Errorf("%d keys, %d evictions", tab.Len(), tab.Evictions())
	}
}

// TestHoldContended: a goroutine that waits for a held table shows in
// Contended, so that the holder lets it in, and gets the table when it
// is released.
func TestHoldContended(t *testing.T) {
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: 4, Window: sec})
	tab.Hold()
	if drop, _ := tab.DedupeHeld(1, 0); drop || tab.Contended() {
		t.Fatal("a held table: a new key dropped, or contended alone")
	}
	done := make(chan bool)
	go func() {
		drop, _ := tab.Dedupe(1, 1)
		done <- drop
	}()
	for !tab.Contended() {
		runtime.Gosched()
	}
	tab.Release()
	if !<-done {
		t.Error("the waiter did not see the holder's key")
	}
	if tab.Contended() {
		t.Error("contended after the waiter got the table")
	}
}

func TestZeroAllocs(t *testing.T) {
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: 1000, Window: sec})
	for i := range 2000 {
		tab.Dedupe(uint64(i), 0)
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		tab.Dedupe(uint64(i%3000), int64(i))
		i++
	}); n != 0 {
		t.Errorf("%v allocations a record", n)
	}
}

// TestMemory holds Spec.Memory to the heap a full table takes.
func TestMemory(t *testing.T) {
	const max = 100_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tab := newTable(Spec{Kind: Dedupe, MaxKeys: max, Window: sec})
	for i := range 2 * max {
		tab.Dedupe(uint64(i)*0x9E3779B97F4A7C15, int64(i))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	used := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// The runtime allocates a little of its own between the two
	// readings: 16 KiB of slack, 0.4% of the table.
	if want := tab.Spec().Memory(); used > want+16<<10 || used < want*95/100 {
		t.Errorf("a full table of %d keys takes %d bytes; Memory says %d", max, used, want)
	}
	runtime.KeepAlive(tab)
	t.Logf("%d keys: %d bytes, %d a key", max, used, BytesPerKey(max))
}

// BenchmarkDedupe is one record through a table of 100,000 keys, every
// key a repeat: a lookup in a table of 4 MB, the cost of a dedupe past
// its key's hash. In order, the keys come as they were first kept; in
// random order, as in a pipeline, each use is of a key far from the
// last one used.
func BenchmarkDedupe(b *testing.B) {
	for _, order := range []string{"in-order", "random"} {
		b.Run(order, func(b *testing.B) {
			tab := newTable(Spec{Kind: Dedupe, MaxKeys: 100_000, Window: 3600 * sec})
			keys := make([]uint64, 100_000)
			for i := range keys {
				keys[i] = key(fmt.Sprint(i))
				tab.Dedupe(keys[i], 0)
			}
			if order == "random" {
				rand.New(rand.NewPCG(1, 2)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
			}
			i := 0
			for b.Loop() {
				tab.Dedupe(keys[i], 1)
				if i++; i == len(keys) {
					i = 0
				}
			}
		})
	}
}
