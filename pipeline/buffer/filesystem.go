package buffer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/policyrun/policyrun/internal/contentenc"
)

// A chunk file (docs/pipeline.md, "Chunk files"):
//
//	header  "PRBC" | version 2 | flags | 2 reserved | sequence (8, big-endian) | CRC-32C of the 16 bytes before
//	frames  length (4) | records (4) | flags | sequence (3) | CRC-32C of the payload, the 12 bytes before and the chunk's sequence (8) | payload
//
// Each frame is one Put's payload, as it goes on the wire (before the wire's
// compression), or compressed when the buffer's compression says so (frame
// flags 1 gzip, 2 zstd). Numbers are big-endian. A frame carries the low
// 24 bits of its chunk's sequence, and its checksum covers all 64: a file
// reused from a delivered chunk (header flag 1) still holds that chunk's
// bytes after the new frames, and they end where a frame's sequence is not
// the file's (or, 2^24 chunks on, where its checksum fails, reported as
// damage). Version 1 files (no sequence in
// the frames, the checksum over the 12 bytes and then the payload) are
// still read.
const (
	fileMagic    = "PRBC"
	fileVersion  = 2
	headerSize   = 20
	headerReused = 1
	frameHead    = 16
	frameGzip    = 1
	frameZstd    = 2
	chunkExt     = ".chunk"
	spareExt     = ".spare"
	corruptExt   = ".corrupt"
	lockName     = "LOCK"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type filesystem struct {
	cfg  Config
	full fullFlag
	dir  *os.File // synced when a chunk file is created
	lock *os.File

	mu      sync.Mutex
	synced  *sync.Cond // a chunk's sync finished
	open    *fsChunk   // takes payloads
	ready   []*fsChunk // closed to payloads, synced, waiting for a worker
	held    map[*Chunk]*fsChunk
	bytes   int64 // of chunk files on disk
	nchunks int64
	kept    int64 // chunks whose retries ran out
	seq     uint64
	noSpace bool // the disk is full: no room until a chunk is removed
	// writeFrame writes a frame (io_*.go's); a test makes the disk full.
	writeFrame func(f *os.File, head, payload []byte, off int64) error
	// zflag and zenc are the frame flag and encoding payloads are
	// compressed with (0 and nil: none), from the config's compression.
	zflag    byte
	zenc     *contentenc.Encoding
	closed   bool
	room     signal
	readySig signal

	statBytes, statChunks, statPending atomic.Int64
	corrupt, replayed                  atomic.Int64
	syncs                              atomic.Int64 // fdatasyncs made (group commits)
	zPool                              sync.Pool    // *[]byte: compressed payloads
	memFree                            [][]byte     // copies of delivered chunks, for new ones (under mu)
	spares                             []string     // delivered chunk files to write new chunks over (under mu)
}

// fsChunk is a chunk file.
type fsChunk struct {
	seq     uint64
	path    string
	f       *os.File // while it takes payloads or their syncs are pending
	size    int64    // bytes written
	synced  int64    // bytes known to be on disk
	syncing bool
	syncErr error
	dirSync bool // the directory entry is synced
	writers int  // Puts whose payload is written and not yet synced
	sealed  bool // takes no more payloads
	frames  int
	opened  time.Time // when it was created, in this run
	corrupt bool      // found damaged when read: renamed, not removed, when done
	// mem is a copy of the frames' payloads, back to back (as stored:
	// compressed when the frame is), while the chunk is small and likely
	// to be taken soon: a worker then reads it from memory, not from
	// disk, and a codec that joins payloads by concatenation sends it as
	// it is. At most memChunks chunks waiting for a worker keep one.
	mem       []byte
	memFrames []memFrame
}

// memFrame is what a frame's header says of the payload in a chunk's copy.
type memFrame struct {
	n, records uint32
	flags      byte
}

// memChunks is how many ready chunks keep their copy in memory.
const memChunks = 4

// memCap is the room of a chunk's copy in memory: the chunk's size, and a
// last payload that takes it past that (one bigger is read from disk).
// Copies are reused from chunk to chunk: a fresh one of megabytes costs
// its clearing, about what writing the chunk's file does.
func (b *filesystem) memCap() int { return int(b.cfg.ChunkSize+b.cfg.ChunkSize/4) + headerSize }

// newMem returns an empty copy for a new chunk; under mu.
func (b *filesystem) newMem() []byte {
	if n := len(b.memFree); n > 0 {
		m := b.memFree[n-1]
		b.memFree[n-1] = nil
		b.memFree = b.memFree[:n-1]
		return m[:0]
	}
	return make([]byte, 0, b.memCap())
}

// freeMem keeps a chunk's copy for another once its payloads are no longer
// read; under mu.
func (b *filesystem) freeMem(m []byte) {
	if cap(m) == b.memCap() && len(b.memFree) < memChunks+1 {
		b.memFree = append(b.memFree, m)
	}
}

// chunkLinger is how long an open chunk gathers payloads before an idle
// worker takes it. Each chunk costs a file's creation, its directory's
// fsync and its removal: under many concurrent Writes, a chunk a Write
// would cost several times what the payloads' own writes and shared
// fsyncs do. The Writes are acknowledged as soon as their payloads are
// synced, so the linger delays the delivery, not the acknowledgement.
const chunkLinger = 50 * time.Millisecond

func openFilesystem(cfg Config) (*filesystem, error) {
	if cfg.Dir == "" {
		return nil, errors.New("buffer: a filesystem buffer needs a directory (service.data_dir)")
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("buffer: %w", err)
	}
	lock, err := lockDir(filepath.Join(cfg.Dir, lockName))
	if err != nil {
		return nil, fmt.Errorf("buffer %s: %w", cfg.Dir, err)
	}
	dir, err := os.Open(cfg.Dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("buffer: %w", err)
	}
	b := &filesystem{cfg: cfg, dir: dir, lock: lock, held: map[*Chunk]*fsChunk{}, writeFrame: writeFrame}
	if b.zflag = frameFlag(cfg.Compression); b.zflag != 0 {
		b.zenc, _ = contentenc.Lookup(cfg.Compression)
	}
	b.synced = sync.NewCond(&b.mu)
	if err := b.replay(); err != nil {
		dir.Close()
		lock.Close()
		return nil, err
	}
	return b, nil
}

func (*filesystem) Durable() bool { return true }

// publish copies the counts for Stats; under mu.
func (b *filesystem) publish() {
	b.statBytes.Store(b.bytes)
	b.statChunks.Store(b.nchunks)
	b.statPending.Store(b.nchunks - b.kept)
}

func (b *filesystem) Stats() Stats {
	return Stats{Bytes: b.statBytes.Load(), Chunks: b.statChunks.Load(), Pending: b.statPending.Load(),
		Corrupt: b.corrupt.Load(), Replayed: b.replayed.Load(), Full: b.full.Load()}
}

// frameEncodings are the content encodings a frame may be compressed
// with, by their flag.
var frameEncodings = map[byte]string{frameGzip: "gzip", frameZstd: "zstd"}

// frameFlag is the frame flag of a compression ("" for none: 0).
func frameFlag(compression string) byte {
	for flag, name := range frameEncodings {
		if name == compression {
			return flag
		}
	}
	return 0
}

// stored is a payload as a frame stores it: compressed, into a buffer of
// b.zPool (put back once written, or nil), if the buffer says so.
func (b *filesystem) stored(data []byte) ([]byte, byte, *[]byte) {
	if b.zenc == nil {
		return data, 0, nil
	}
	zp, _ := b.zPool.Get().(*[]byte)
	if zp == nil {
		zp = new([]byte)
	}
	*zp = b.zenc.Append((*zp)[:0], data)
	return *zp, b.zflag, zp
}

func (b *filesystem) Put(ctx context.Context, data []byte, records int, noWait bool) (Receipt, error) {
	// Outside the lock: compression and the payload's checksum.
	data, flags, zp := b.stored(data)
	if zp != nil {
		defer b.zPool.Put(zp)
	}
	payloadCRC := crc32.Checksum(data, castagnoli)
	size := int64(frameHead + len(data))
	if size+headerSize > b.cfg.MaxSize {
		return nil, ErrTooBig
	}
	b.mu.Lock()
	for {
		if b.closed {
			b.mu.Unlock()
			return nil, ErrClosed
		}
		need := size
		if b.open == nil {
			need += headerSize
		}
		if !b.noSpace && b.bytes+need <= b.cfg.MaxSize {
			err := b.write(data, records, flags, payloadCRC)
			if err == nil {
				b.full.Store(false)
				break
			}
			if !errors.Is(err, syscall.ENOSPC) {
				b.mu.Unlock()
				return nil, err
			}
			if len(b.spares) > 0 {
				b.dropSpares() // their blocks make room
				continue
			}
			b.noSpace = true // full as full can be: until a chunk is removed
			b.cfg.Logger.Warn("buffer: the disk is full; the buffer is full until a chunk is delivered", "dir", b.cfg.Dir)
			continue
		}
		if err := noRoom(ctx, &b.mu, &b.full, &b.room, b.cfg.WhenFull, noWait); err != nil {
			return nil, err
		}
	}
	c, end := b.open, b.open.size
	c.writers++
	if c.size >= b.cfg.ChunkSize {
		b.seal(c)
	}
	if b.cfg.Sync == SyncNormal {
		end = c.synced // written is held: no sync to wait for
	}
	// Group commit: one fsync covers every payload written before it, so
	// concurrent Puts share syncs.
	for c.synced < end && c.syncErr == nil {
		if c.syncing {
			b.synced.Wait()
			continue
		}
		c.syncing = true
		target, f, dirSync := c.size, c.f, !c.dirSync
		b.mu.Unlock()
		err := syncData(f)
		b.syncs.Add(1)
		if err == nil && dirSync {
			err = b.dir.Sync()
		}
		b.mu.Lock()
		c.syncing = false
		if err != nil {
			c.syncErr = fmt.Errorf("buffer: sync %s: %w", c.path, err)
		} else {
			c.synced, c.dirSync = target, true
		}
		b.synced.Broadcast()
	}
	err := c.syncErr
	if err != nil && !c.sealed {
		b.seal(c) // nothing more goes into a file whose sync failed
	}
	c.writers--
	if c.sealed && c.writers == 0 {
		b.closeSealed(c)
	} else {
		b.readySig.notify() // an idle worker may take the open chunk
	}
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return heldReceipt{}, nil
}

// write appends a frame of data (flags, records, its checksum payloadCRC)
// to the open chunk, creating one if there is none; under mu. A failed
// write leaves the file as it was.
func (b *filesystem) write(data []byte, records int, flags byte, payloadCRC uint32) error {
	if b.open == nil {
		if err := b.create(); err != nil {
			return err
		}
	}
	c := b.open
	var h [frameHead]byte
	binary.BigEndian.PutUint32(h[0:], uint32(len(data)))
	binary.BigEndian.PutUint32(h[4:], uint32(records))
	h[8] = flags
	seq := uint32(c.seq)
	h[9], h[10], h[11] = byte(seq>>16), byte(seq>>8), byte(seq)
	binary.BigEndian.PutUint32(h[12:], frameCRCOf(payloadCRC, h[:], c.seq))
	if err := b.writeFrame(c.f, h[:], data, c.size); err != nil {
		c.f.Truncate(c.size)
		return fmt.Errorf("buffer: %w", err)
	}
	size := int64(frameHead + len(data))
	c.size += size
	c.frames++
	if c.mem != nil {
		if len(c.mem)+len(data) > cap(c.mem) {
			b.freeMem(c.mem)
			c.mem, c.memFrames = nil, nil // growing it copies it: read the file when its turn comes
		} else {
			c.mem = append(c.mem, data...)
			c.memFrames = append(c.memFrames, memFrame{uint32(len(data)), uint32(records), flags})
		}
	}
	b.bytes += size
	b.publish()
	return nil
}

type heldReceipt struct{}

func (heldReceipt) Wait(context.Context) (int64, error) { return 0, nil }

// seal closes c to new payloads; under mu.
func (b *filesystem) seal(c *fsChunk) {
	c.sealed = true
	if b.open == c {
		b.open = nil
	}
	if c.writers == 0 {
		b.closeSealed(c)
	}
}

// closeSealed closes the file of a sealed chunk whose payloads are all
// synced and queues it for delivery; under mu.
func (b *filesystem) closeSealed(c *fsChunk) {
	if c.f == nil {
		return
	}
	c.f.Close()
	c.f = nil
	if c.syncErr != nil {
		// Its payloads' Puts failed; what it holds may be delivered by a
		// later start, not this one.
		return
	}
	if len(b.ready) >= memChunks {
		b.freeMem(c.mem)
		c.mem, c.memFrames = nil, nil // a backlog: read from disk when its turn comes
	}
	b.ready = append(b.ready, c)
	b.readySig.notify()
}

func (b *filesystem) Get(ctx context.Context) (*Chunk, error) {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, ErrClosed
		}
		if len(b.ready) == 0 && b.open != nil && b.open.frames > 0 {
			// A worker is idle: the open chunk goes once it has
			// lingered (chunkLinger) rather than when it is full.
			// Chunks grow past that only while the workers are busy
			// (a slow or absent receiver).
			if wait := chunkLinger - time.Since(b.open.opened); wait > 0 && b.open.size < b.cfg.ChunkSize {
				ch := b.readySig.wait()
				b.mu.Unlock()
				t := time.NewTimer(wait)
				select {
				case <-ch:
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, ctx.Err()
				}
				t.Stop()
				continue
			}
			// With its last payloads still being synced, seal leaves it
			// to their Put to queue the chunk: then it is waited for
			// below, as any chunk is.
			b.seal(b.open)
		}
		if len(b.ready) == 0 {
			ch := b.readySig.wait()
			b.mu.Unlock()
			if err := await(ctx, ch); err != nil {
				return nil, err
			}
			continue
		}
		fc := b.ready[0]
		b.ready[0] = nil
		b.ready = b.ready[1:]
		b.mu.Unlock()
		c := b.read(fc)
		if c == nil {
			continue // nothing readable in it
		}
		b.mu.Lock()
		b.held[c] = fc
		b.mu.Unlock()
		return c, nil
	}
}

// remove deletes a finished chunk's file (renames it, when damaged, so
// that what it held can be looked at); under mu.
func (b *filesystem) remove(fc *fsChunk) {
	if fc.corrupt {
		if err := os.Rename(fc.path, strings.TrimSuffix(fc.path, chunkExt)+corruptExt); err != nil {
			os.Remove(fc.path)
		}
	} else if !b.spare(fc) {
		if err := os.Remove(fc.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			b.cfg.Logger.Warn("buffer: cannot remove a delivered chunk; it will be delivered again at the next start", "file", fc.path, "err", err)
		}
	}
	b.bytes -= fc.size
	b.nchunks--
	b.noSpace = false
	b.full.Store(false) // room was made: the next Put finds out
	b.publish()
	b.room.notify()
}

func (b *filesystem) Done(c *Chunk, _ int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if fc, ok := b.held[c]; ok {
		delete(b.held, c)
		b.remove(fc)
	}
	b.freeMem(c.mem)
	c.Payloads, c.Joined, c.mem = nil, nil, nil
}

func (b *filesystem) Keep(c *Chunk) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.held[c]; ok {
		delete(b.held, c)
		b.kept++
		b.publish()
		b.cfg.Logger.Warn("buffer: a chunk whose retries ran out is kept for the next start", "file", c.path, "records", c.Records)
	}
	b.freeMem(c.mem)
	c.Payloads, c.Joined, c.mem = nil, nil, nil
}

func (b *filesystem) Close() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0
	}
	b.closed = true
	if c := b.open; c != nil {
		b.open = nil
		if c.f != nil && c.writers == 0 {
			c.f.Close()
			c.f = nil
		}
	}
	b.room.notify()
	b.readySig.notify()
	b.dir.Close()
	b.lock.Close() // and with it the lock
	return 0
}
