package buffer

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The chunk files on disk: their names, creating one (over a spare when
// there is one), keeping delivered ones as spares, and what a start finds.

// spareChunks is how many delivered chunk files are kept to be written over
// by new chunks rather than removed. Writing over a file's blocks, whose
// pages are still cached, costs the kernel about half of what a new file
// does (allocating pages and blocks, then freeing them at the removal),
// and its sync has no size or blocks to record: fdatasync writes the data
// alone.
const spareChunks = 2

// replay queues the chunk files a previous run left, oldest first.
func (b *filesystem) replay() error {
	ents, err := os.ReadDir(b.cfg.Dir)
	if err != nil {
		return fmt.Errorf("buffer: %w", err)
	}
	var found []*fsChunk
	for _, e := range ents {
		name := e.Name()
		if seq, ok := parseSeqName(name, spareExt); ok && e.Type().IsRegular() {
			// New chunks number on from it and from the chunk its
			// header names (a power loss can undo a spare's rename
			// for a chunk whose header and frames it kept): frames of
			// an old chunk must not carry a new chunk's sequence.
			path := filepath.Join(b.cfg.Dir, name)
			b.seq = max(b.seq, seq, headerSeq(path))
			if len(b.spares) < spareChunks {
				b.spares = append(b.spares, path)
			} else {
				os.Remove(path)
			}
			continue
		}
		seq, ok := parseSeqName(name, chunkExt)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return fmt.Errorf("buffer: %w", err)
		}
		path := filepath.Join(b.cfg.Dir, name)
		found = append(found, &fsChunk{seq: seq, path: path, size: fi.Size(), sealed: true})
		b.seq = max(b.seq, seq, headerSeq(path))
	}
	slices.SortFunc(found, func(x, y *fsChunk) int { return cmpUint(x.seq, y.seq) })
	for _, c := range found {
		c.synced = c.size
		b.ready = append(b.ready, c)
		b.bytes += c.size
		b.nchunks++
	}
	b.replayed.Store(int64(len(found)))
	b.publish()
	if len(found) > 0 {
		b.cfg.Logger.Info("buffer: replaying chunks left by the last run", "dir", b.cfg.Dir, "chunks", len(found), "bytes", b.bytes)
	}
	return nil
}

// headerSeq reads the sequence a chunk file's header names, 0 when it has
// no good header.
func headerSeq(path string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	var h [headerSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != fileMagic ||
		crc32.Checksum(h[:16], castagnoli) != binary.BigEndian.Uint32(h[16:]) {
		return 0
	}
	return binary.BigEndian.Uint64(h[8:])
}

func cmpUint(x, y uint64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func chunkName(seq uint64) string { return fmt.Sprintf("%020d%s", seq, chunkExt) }

// parseSeqName reads the sequence of a chunk file or a spare (ext).
func parseSeqName(name, ext string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, ext)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	return seq, err == nil
}

// create opens the next chunk file, written over a spare when there is
// one; under mu. Its directory entry is synced with its first payloads.
func (b *filesystem) create() error {
	seq := b.seq + 1
	path := filepath.Join(b.cfg.Dir, chunkName(seq))
	var h [headerSize]byte
	var f *os.File
	var err error
	for len(b.spares) > 0 && f == nil {
		spare := b.spares[0]
		b.spares = b.spares[1:]
		if err = os.Rename(spare, path); err == nil {
			if f, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
				os.Remove(path)
			}
		}
		if err != nil {
			os.Remove(spare)
			b.cfg.Logger.Warn("buffer: cannot reuse a spare chunk file", "file", spare, "err", err)
		}
		h[5] = headerReused
	}
	if f == nil {
		h[5] = 0
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err != nil {
			return fmt.Errorf("buffer: %w", err)
		}
	}
	copy(h[:], fileMagic)
	h[4] = fileVersion
	binary.BigEndian.PutUint64(h[8:], seq)
	binary.BigEndian.PutUint32(h[16:], crc32.Checksum(h[:16], castagnoli))
	if _, err := f.WriteAt(h[:], 0); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("buffer: %w", err)
	}
	b.seq = seq
	b.open = &fsChunk{seq: seq, path: path, f: f, size: headerSize, opened: time.Now(), mem: b.newMem()}
	b.bytes += headerSize
	b.nchunks++
	return nil
}

// spare keeps a delivered chunk's file, renamed, for a new chunk to be
// written over (spareChunks), unless there are enough or it grew well
// past the chunk size; under mu.
func (b *filesystem) spare(fc *fsChunk) bool {
	if b.noSpace || len(b.spares) >= spareChunks || fc.size > 2*b.cfg.ChunkSize {
		return false // a full disk wants the room back
	}
	path := strings.TrimSuffix(fc.path, chunkExt) + spareExt
	if os.Rename(fc.path, path) != nil {
		return false
	}
	b.spares = append(b.spares, path)
	return true
}

// dropSpares removes the spares; under mu.
func (b *filesystem) dropSpares() {
	for _, path := range b.spares {
		os.Remove(path)
	}
	b.spares = nil
}
