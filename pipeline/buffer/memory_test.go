package buffer

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
)

func TestMemoryDeliveryAndWait(t *testing.T) {
	b := mustNew(t, Config{Type: Memory, MaxSize: 1 << 20})
	data := []byte("abc")
	r := put(t, b, data, 3)
	data[0] = 'X' // the buffer keeps its own copy
	c := get(t, b)
	if joined(c) != "abc" || c.Records != 3 {
		t.Fatalf("chunk = %q, %d records", joined(c), c.Records)
	}
	if s := b.Stats(); s.Bytes != 3 || s.Chunks != 1 {
		t.Errorf("stats = %+v", s)
	}
	waited := make(chan int64)
	go func() {
		n, err := r.Wait(context.Background())
		if err != nil {
			t.Error(err)
		}
		waited <- n
	}()
	select {
	case <-waited:
		t.Fatal("Wait returned before the chunk was done")
	case <-time.After(20 * time.Millisecond):
	}
	b.Done(c, 1)
	if n := <-waited; n != 1 {
		t.Errorf("not delivered = %d, want 1", n)
	}
	if s := b.Stats(); s.Bytes != 0 || s.Chunks != 0 {
		t.Errorf("stats after Done = %+v", s)
	}
	// Keep: a memory buffer forgets the chunk, none of it delivered.
	r = put(t, b, data, 3)
	b.Keep(get(t, b))
	if n, _ := r.Wait(context.Background()); n != 3 {
		t.Errorf("after Keep: not delivered = %d, want 3", n)
	}
}

func TestMemoryCloseLoses(t *testing.T) {
	b := mustNew(t, Config{Type: Memory})
	r1 := put(t, b, []byte("a"), 2)
	r2 := put(t, b, []byte("b"), 5)
	get(t, b) // in a worker's hands
	if lost := b.Close(); lost != 7 {
		t.Errorf("lost = %d, want 7", lost)
	}
	for _, r := range []Receipt{r1, r2} {
		if n, err := r.Wait(context.Background()); !errors.Is(err, ErrClosed) || n == 0 {
			t.Errorf("Wait after Close = %d, %v", n, err)
		}
	}
	if _, err := b.Put(context.Background(), []byte("c"), 1, false); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v", err)
	}
	if _, err := b.Get(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
}

// A memory chunk's copy of its payload is reused once the chunk is done,
// and only then: a chunk a worker still holds when the buffer closes keeps
// its bytes.
func TestMemoryCopies(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 52<<10/16) // B5's request
	b := mustNew(t, Config{Type: Memory, MaxSize: 1 << 20})
	ctx := context.Background()
	cycle := func(b Buffer, data []byte) {
		r, err := b.Put(ctx, data, 100, false)
		if err != nil {
			t.Fatal(err)
		}
		c, err := b.Get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.Payloads[0], data) {
			t.Fatalf("payload differs from what was put")
		}
		b.Done(c, 0)
		if _, err := r.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle(b, payload)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 100
	for range n {
		cycle(b, payload)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 1<<10 && !racedetect.Enabled {
		t.Errorf("a Put, Get and Done of %d bytes allocate %d bytes; the payload's copy should be reused", len(payload), per)
	}

	held := mustNew(t, Config{Type: Memory, MaxSize: 1 << 20})
	put(t, held, payload, 100)
	c := get(t, held)
	held.Close()
	body := c.one[0]
	other := bytes.Repeat([]byte("x"), len(payload))
	for range 50 {
		cycle(b, other)
	}
	if !bytes.Equal(body, payload) {
		t.Error("a chunk held when its buffer closed had its bytes reused")
	}
}

// TestMemoryCopiesBounded: a small payload does not take a large copy a
// large payload left, so what the buffer's chunks hold stays near what
// max_size counts (here 20 one-byte chunks waiting, after 4 MiB payloads
// went through, hold at most a page each).
func TestMemoryCopiesBounded(t *testing.T) {
	ctx := context.Background()
	b := mustNew(t, Config{Type: Memory, MaxSize: 8 << 20})
	big := make([]byte, 4<<20)
	var held int
	for range 20 {
		r := put(t, b, big, 1)
		b.Done(get(t, b), 0) // its copy goes back for reuse
		r.Wait(ctx)
		put(t, b, []byte("x"), 1)
		c := get(t, b) // taken, not done: a worker still sending it
		held += cap(c.Payloads[0])
	}
	if held > 20*(2+4096) {
		t.Errorf("20 chunks of 1 byte hold %d bytes of copies", held)
	}
}
