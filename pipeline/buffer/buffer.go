// Package buffer holds what an output has taken and not yet delivered:
// chunks of encoded payloads (the bytes that go on the wire), in memory or
// in files that survive a crash. Delivery workers Get chunks, send them,
// and say how it went with Done or Keep.
//
// A memory buffer holds each Put as one chunk until it is delivered: its
// Put returns a Receipt whose Wait returns once the chunk is done, which is
// when an output with a memory buffer may say it has the records. A
// filesystem buffer gathers Puts into chunk files and returns from Put once
// the payload is fsynced: the records are then held, and survive a crash.
package buffer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Types and when_full modes, as the config names them.
const (
	Memory     = "memory"
	Filesystem = "filesystem"

	Block      = "block"
	DropNewest = "drop_newest"

	// SyncFull: a filesystem Put returns once its payload is synced
	// (fdatasync), and so survives a power loss. SyncNormal: once it is
	// written (to the page cache): it survives the process's crash, not
	// the machine's. The names are Fluent Bit's storage.sync.
	SyncFull   = "full"
	SyncNormal = "normal"
)

// Defaults (docs/pipeline.md, "Buffers").
const (
	DefaultMemoryMaxSize     = 64 << 20
	DefaultFilesystemMaxSize = 1 << 30
	// DefaultChunkSize is how many bytes a filesystem chunk gathers
	// before it is closed to new payloads, while no worker waits for
	// one: small writes to an output that cannot deliver share files
	// instead of wasting a disk block each.
	DefaultChunkSize = 2 << 20
)

// Config says how a buffer behaves.
type Config struct {
	Type     string // Memory or Filesystem
	MaxSize  int64  // the most bytes held (filesystem: of chunk files on disk)
	WhenFull string // Block or DropNewest

	// Filesystem only.
	Dir         string // the chunk directory: service.data_dir/<alias>
	Compression string // "gzip", "zstd" or "" (none): how payloads are stored
	ChunkSize   int64  // DefaultChunkSize when 0
	Sync        string // SyncFull (the default, "") or SyncNormal

	Logger *slog.Logger
}

// Errors of Put.
var (
	// ErrFull: the buffer is full under when_full: block and the Put was
	// told not to wait. Nothing was taken.
	ErrFull = errors.New("buffer full")
	// ErrDropped: the buffer is full under when_full: drop_newest; the
	// payload was dropped.
	ErrDropped = errors.New("buffer full: dropped")
	// ErrTooBig: the payload is larger than the buffer's max_size and
	// can never fit.
	ErrTooBig = errors.New("payload larger than the buffer's max_size")
	// ErrClosed: the buffer is closed.
	ErrClosed = errors.New("buffer closed")
)

// Buffer is a memory or filesystem buffer; safe for concurrent use.
type Buffer interface {
	// Put stores one payload of records records. It returns once the
	// buffer holds it: in memory at once (Receipt.Wait waits for its
	// delivery), on disk once it is fsynced (Receipt.Wait returns at
	// once). A full buffer makes it wait for room (block), or return
	// ErrFull when noWait is set, or ErrDropped (drop_newest). The buffer
	// does not keep data after Put returns.
	Put(ctx context.Context, data []byte, records int, noWait bool) (Receipt, error)
	// Get returns the next chunk to deliver, waiting for one until ctx
	// is done.
	Get(ctx context.Context) (*Chunk, error)
	// Done says a chunk from Get is finished: delivered, or refused by
	// its receiver; notDelivered is how many of its records were not
	// delivered. The buffer forgets it.
	Done(c *Chunk, notDelivered int64)
	// Keep says a chunk's retries ran out: a filesystem buffer keeps its
	// file for the next start; a memory buffer forgets it (its records
	// are not delivered).
	Keep(c *Chunk)
	// Close releases the buffer: what a memory buffer still holds is
	// lost (Close returns how many records, and their receipts' Wait
	// ErrClosed), a filesystem buffer's stays on disk. Waiting Puts and
	// Gets return ErrClosed.
	Close() (lost int64)
	Stats() Stats
	// Durable reports whether Put's return means the payload survives a
	// crash (filesystem).
	Durable() bool
}

// Receipt is a Put's: Wait returns once the payload is finished, with how
// many of its records were not delivered (memory), or at once with 0
// (filesystem: held is enough).
type Receipt interface {
	Wait(ctx context.Context) (notDelivered int64, err error)
}

// Chunk is what a delivery worker sends: one or more payloads, which the
// output joins into one request (their bytes are valid until Done or
// Keep).
type Chunk struct {
	Seq      uint64
	Records  int64
	Payloads [][]byte
	// Joined is the payloads back to back in one slice, when the buffer
	// holds them so (nil otherwise): a codec that joins payloads by
	// concatenation sends it as it is.
	Joined []byte
	size   int64 // what it counts against max_size

	// memory
	done         chan struct{}
	notDelivered int64
	lost         bool      // still held when the buffer closed
	one          [1][]byte // Payloads' array: a memory chunk has one
	copy         *[]byte   // the pooled copy its payload lies in
	// filesystem
	path string
	mem  []byte // the in-memory copy its payloads lie in, reused once it is done
}

// Bytes is the total length of the chunk's payloads.
func (c *Chunk) Bytes() int64 {
	var n int64
	for _, p := range c.Payloads {
		n += int64(len(p))
	}
	return n
}

// Stats is what a buffer holds and what it found.
type Stats struct {
	Bytes, Chunks int64 // held now (filesystem: including chunks kept after their retries ran out)
	// Pending counts the chunks still to deliver: queued, or taken by a
	// worker and not yet done.
	Pending int64
	// Corrupt counts the chunk files found damaged (a bad checksum, a
	// cut frame): what could not be read of them is skipped and logged.
	Corrupt int64
	// Replayed counts the chunks found at start.
	Replayed int64
	// Full is set while the buffer has no room: the last Put found none
	// (it waited, or was refused or dropped), and neither has a Put found
	// room since nor a chunk been finished (which makes room). A
	// readiness probe reads it.
	Full bool
}

// fullFlag is a buffer's Stats.Full, set by its Puts.
type fullFlag struct{ atomic.Bool }

// New opens the buffer cfg describes; a filesystem buffer finds the chunks
// a previous run left and queues them, oldest first.
func New(cfg Config) (Buffer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.WhenFull == "" {
		cfg.WhenFull = Block
	}
	switch cfg.Type {
	case Memory, "":
		if cfg.MaxSize <= 0 {
			cfg.MaxSize = DefaultMemoryMaxSize
		}
		return newMemory(cfg), nil
	case Filesystem:
		if cfg.MaxSize <= 0 {
			cfg.MaxSize = DefaultFilesystemMaxSize
		}
		if cfg.ChunkSize <= 0 {
			cfg.ChunkSize = DefaultChunkSize
		}
		return openFilesystem(cfg)
	}
	return nil, fmt.Errorf("buffer: unknown type %q", cfg.Type)
}

// signal is a broadcast that can be waited on with a context: wait returns
// the current channel, which notify closes and replaces.
type signal struct{ ch chan struct{} }

func (s *signal) wait() chan struct{} {
	if s.ch == nil {
		s.ch = make(chan struct{})
	}
	return s.ch
}

func (s *signal) notify() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// await waits on ch (taken under the lock, which the caller released).
func await(ctx context.Context, ch chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// memory is a memory buffer: a queue of chunks, one per Put.
type memory struct {
	cfg  Config
	full fullFlag

	mu     sync.Mutex
	queue  []*Chunk
	held   map[*Chunk]struct{} // taken by Get, not yet Done
	bytes  int64
	seq    uint64
	closed bool
	room   signal // bytes went down
	ready  signal // a chunk was queued
	chunks atomic.Int64
	nbytes atomic.Int64
}

func newMemory(cfg Config) *memory {
	return &memory{cfg: cfg, held: map[*Chunk]struct{}{}}
}

func (*memory) Durable() bool { return false }

func (m *memory) Put(ctx context.Context, data []byte, records int, noWait bool) (Receipt, error) {
	size := int64(len(data))
	if size > m.cfg.MaxSize {
		return nil, ErrTooBig
	}
	m.mu.Lock()
	for {
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		if m.bytes+size <= m.cfg.MaxSize {
			m.full.Store(false)
			break
		}
		if err := noRoom(ctx, &m.mu, &m.full, &m.room, m.cfg.WhenFull, noWait); err != nil {
			return nil, err
		}
	}
	m.seq++
	c := &Chunk{Seq: m.seq, Records: int64(records), size: size, done: make(chan struct{})}
	c.copy = copyOf(data)
	c.one[0] = *c.copy
	c.Payloads = c.one[:]
	m.queue = append(m.queue, c)
	m.bytes += size
	m.chunks.Add(1)
	m.nbytes.Add(size)
	m.ready.notify()
	m.mu.Unlock()
	return (*memReceipt)(c), nil
}

// noRoom is what a Put that found the buffer full does, with mu held:
// under drop_newest it returns ErrDropped, with noWait ErrFull, else it
// waits for room and returns nil with mu held again, to look once more.
// It returns an error with mu released.
func noRoom(ctx context.Context, mu *sync.Mutex, full *fullFlag, room *signal, whenFull string, noWait bool) error {
	full.Store(true)
	if whenFull == DropNewest {
		mu.Unlock()
		return ErrDropped
	}
	if noWait {
		mu.Unlock()
		return ErrFull
	}
	ch := room.wait()
	mu.Unlock()
	if err := await(ctx, ch); err != nil {
		return err
	}
	mu.Lock()
	return nil
}

type memReceipt Chunk

func (r *memReceipt) Wait(ctx context.Context) (int64, error) {
	select {
	case <-r.done:
		if r.lost {
			return r.notDelivered, ErrClosed
		}
		return r.notDelivered, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (m *memory) Get(ctx context.Context) (*Chunk, error) {
	m.mu.Lock()
	for len(m.queue) == 0 {
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		ch := m.ready.wait()
		m.mu.Unlock()
		if err := await(ctx, ch); err != nil {
			return nil, err
		}
		m.mu.Lock()
	}
	c := m.queue[0]
	m.queue[0] = nil
	m.queue = m.queue[1:]
	m.held[c] = struct{}{}
	m.mu.Unlock()
	return c, nil
}

func (m *memory) Done(c *Chunk, notDelivered int64) { m.finish(c, notDelivered) }

func (m *memory) Keep(c *Chunk) { m.finish(c, c.Records) }

func (m *memory) finish(c *Chunk, notDelivered int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.held[c]; !ok {
		return
	}
	delete(m.held, c)
	m.release(c)
	m.full.Store(false) // room was made: the next Put finds out
	copies.Put(c.copy)  // its worker is done with it
	c.copy, c.one[0] = nil, nil
	c.notDelivered = notDelivered
	close(c.done)
}

// copies holds the memory chunks' copies of their payloads for reuse: a
// copy a Put, each about a request's size, would be most of what a busy
// output allocates, and the collector's work. A copy goes back once its
// chunk is done (Done or Keep), not when the buffer closes: a worker may
// still be sending it then. A payload takes a copy at most about twice its
// size (plus a page), so that what the buffer holds stays within about
// twice max_size: a small payload waiting in a copy a large one left
// would hold memory max_size does not count.
var copies = sync.Pool{New: func() any { return new([]byte) }}

func copyOf(data []byte) *[]byte {
	p := copies.Get().(*[]byte)
	if c := cap(*p); c < len(data) || c > 2*len(data)+4096 {
		*p = make([]byte, len(data), len(data)+len(data)/4)
	}
	*p = (*p)[:len(data)]
	copy(*p, data)
	return p
}

func (m *memory) release(c *Chunk) {
	m.bytes -= c.size
	m.chunks.Add(-1)
	m.nbytes.Add(-c.size)
	c.Payloads = nil
	m.room.notify()
}

func (m *memory) Close() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0
	}
	m.closed = true
	var lost int64
	for _, c := range m.queue {
		m.held[c] = struct{}{}
	}
	for c := range m.held {
		lost += c.Records
		m.release(c)
		c.notDelivered, c.lost = c.Records, true
		close(c.done)
	}
	m.queue, m.held = nil, map[*Chunk]struct{}{}
	m.room.notify()
	m.ready.notify()
	return lost
}

func (m *memory) Stats() Stats {
	n := m.chunks.Load()
	return Stats{Bytes: m.nbytes.Load(), Chunks: n, Pending: n, Full: m.full.Load()}
}
