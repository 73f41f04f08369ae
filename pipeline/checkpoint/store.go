package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
)

// compactSlack is how far past twice its last snapshot a log may grow
// before a save rewrites it: a small checkpoint is then not rewritten at
// nearly every save.
const compactSlack = 64 << 10

// A Store saves and loads checkpoints through a Storage, and reads every
// layout. It keeps the files of the last save: the next one appends a
// frame with only the files that changed (and the keys of those gone),
// and rewrites the log as one snapshot once it is more than twice the size
// of the last snapshot. It is not safe for concurrent use.
type Store struct {
	Storage Storage
	enc     Encoder

	// cur is what the storage holds, in key order, while synced. When not
	// synced (nothing loaded or saved yet, an older layout loaded, a failed
	// save, a log cut short), the next save writes a snapshot.
	cur      stored
	synced   bool
	size     int // bytes stored
	snapshot int // bytes of the last snapshot

	// Reused from one save to the next.
	next    stored
	changed []int
	kept    []bool
	removed []uint64
	index   map[ident]int
	buf     []byte
}

// stored is the files of a log, in key order, with their keys. Two
// slices rather than one of pairs: a snapshot or a load then fills files
// with one copy.
type stored struct {
	files []File
	keys  []uint64
}

func (st *stored) set(files []File, keys []uint64) {
	st.files = append(st.files[:0], files...)
	st.keys = append(st.keys[:0], keys...)
}

// ident is what makes a changed file the same entry as before, one that
// keeps its key.
type ident struct {
	path     string
	dev, ino uint64
}

func identOf(f *File) ident { return ident{f.Path, f.Dev, f.Inode} }

// NewStore returns a Store that writes protobuf.
func NewStore(s Storage) *Store {
	st := &Store{Storage: s}
	st.enc.attrs = &attrCache{}
	return st
}

// SetFormat chooses the layout of later saves. Only benchmarks and tools
// that must write the JSON layout need it; a JSON save rewrites the whole
// file every time.
func (s *Store) SetFormat(f Format) {
	s.enc.Format = f
	s.synced = false
}

// Save stores c. With nothing changed since the last save it writes
// nothing. Save keeps c's fingerprints, partial lines and attributes to
// compare the next save with: they must not be modified afterwards (the
// tail replaces them; it never writes into them).
func (s *Store) Save(c *Checkpoint) error {
	if s.enc.Format != Protobuf || !s.synced {
		return s.rewrite(c)
	}
	frame, ok := s.delta(c)
	switch {
	case !ok:
		return s.rewrite(c) // no key left between two files
	case frame == nil:
		return nil
	case s.size+len(frame) > 2*s.snapshot+compactSlack:
		return s.rewrite(c)
	}
	if err := s.Storage.Append(frame); err != nil {
		// The log may end in part of the frame now: append no more.
		s.synced = false
		return err
	}
	s.size += len(frame)
	if s.changed != nil {
		for _, i := range s.changed {
			s.cur.files[i] = c.Files[i]
		}
	} else {
		s.cur, s.next = s.next, s.cur
	}
	return nil
}

// rewrite replaces the stored bytes with a snapshot of c.
func (s *Store) rewrite(c *Checkpoint) error {
	data, err := s.enc.Encode(c)
	if err != nil {
		return err
	}
	s.synced = false
	if err := s.Storage.Store(data); err != nil {
		return err
	}
	if s.enc.Format != Protobuf {
		return nil
	}
	s.cur.files = append(s.cur.files[:0], c.Files...)
	s.cur.keys = s.cur.keys[:0]
	for i := range c.Files {
		s.cur.keys = append(s.cur.keys, snapshotKey(i))
	}
	s.size, s.snapshot, s.synced = len(data), len(data), true
	return nil
}

// delta encodes the frame that turns the stored files into c's, or returns
// nil when they are the same. ok is false when a file has to go between
// two keys with none left between them. When s.changed is not nil, the
// frame replaces those files, in place; otherwise s.next holds the new
// files.
func (s *Store) delta(c *Checkpoint) (frame []byte, ok bool) {
	buf := s.buf[:0]
	start := beginFrame(&buf)
	empty := len(buf)
	if changed, same := s.changedInPlace(c); same {
		for _, i := range changed {
			buf = s.appendPut(buf, &s.cur.files[i], &c.Files[i], s.cur.keys[i])
		}
		s.changed = changed
	} else if buf, ok = s.align(buf, c); !ok {
		s.buf = buf
		return nil, false
	}
	s.buf = buf
	if len(buf) == empty {
		return nil, true
	}
	s.buf = endFrame(buf, start)
	return s.buf, true
}

// changedInPlace returns the positions of the files of c that differ from
// the stored ones, when c holds the same entries in the same places: the
// common save, where files were read further and none came or went.
func (s *Store) changedInPlace(c *Checkpoint) ([]int, bool) {
	if len(c.Files) != len(s.cur.files) {
		return nil, false
	}
	changed := s.changed[:0]
	for i := range c.Files {
		old, f := &s.cur.files[i], &c.Files[i]
		if sameFile(old, f) {
			continue
		}
		if identOf(old) != identOf(f) {
			return nil, false
		}
		changed = append(changed, i)
	}
	if changed == nil {
		changed = []int{} // not nil: Save tells the two kinds of frame apart by it
	}
	return changed, true
}

// align matches the files of c to the stored ones, in order: a stored
// file with the same path, device and inode keeps its key (and is written
// when it changed), any other file gets a key between its neighbours', and
// the stored files that match none are removed. It fills s.next.
func (s *Store) align(buf []byte, c *Checkpoint) ([]byte, bool) {
	s.changed = nil
	cur := &s.cur
	s.next.files, s.next.keys = s.next.files[:0], s.next.keys[:0]
	s.kept = append(s.kept[:0], make([]bool, len(cur.files))...)
	indexed := false
	last := -1 // the last stored file kept
	var lo uint64
	haveLo := false
	for i := range c.Files {
		f := &c.Files[i]
		at := -1
		if g := last + 1; g < len(cur.files) && identOf(&cur.files[g]) == identOf(f) {
			at = g
		} else {
			if !indexed {
				s.buildIndex()
				indexed = true
			}
			if p, ok := s.index[identOf(f)]; ok && p > last {
				at = p
			}
		}
		var key uint64
		if at >= 0 {
			key = cur.keys[at]
			if !sameFile(&cur.files[at], f) {
				buf = s.appendPut(buf, &cur.files[at], f, key)
			}
			s.kept[at], last = true, at
		} else {
			var ok bool
			if key, ok = between(lo, haveLo, cur.keys, last+1); !ok {
				return buf, false
			}
			buf = appendFile(buf, f, key, false, false)
		}
		lo, haveLo = key, true
		s.next.files = append(s.next.files, *f)
		s.next.keys = append(s.next.keys, key)
	}
	s.removed = s.removed[:0]
	for i, k := range s.kept {
		if !k {
			s.removed = append(s.removed, cur.keys[i])
		}
	}
	return appendRemoved(buf, s.removed), true
}

// buildIndex maps each stored identity to its first position.
func (s *Store) buildIndex() {
	if s.index == nil {
		s.index = make(map[ident]int, len(s.cur.files))
	}
	clear(s.index)
	for i := len(s.cur.files) - 1; i >= 0; i-- {
		s.index[identOf(&s.cur.files[i])] = i
	}
}

// between returns a key above lo (any key, without haveLo) and below the
// key keys[hi], or, when hi is past the end, a snapshot's gap above lo.
func between(lo uint64, haveLo bool, keys []uint64, hi int) (uint64, bool) {
	gap := snapshotKey(0)
	switch {
	case hi >= len(keys) && !haveLo:
		return gap, true
	case hi >= len(keys):
		if lo > math.MaxUint64-gap {
			return 0, false
		}
		return lo + gap, true
	}
	h := keys[hi] // above lo: keys ascend, and lo is below keys[hi]
	switch {
	case !haveLo && h == 0:
		return 0, false
	case !haveLo:
		return h / 2, true
	case h-lo < 2:
		return 0, false
	}
	return lo + (h-lo)/2, true
}

// appendPut appends f, which replaces old under key, leaving out the
// fingerprint and attributes when they did not change.
func (s *Store) appendPut(buf []byte, old, f *File, key uint64) []byte {
	sameFP := len(f.Fingerprint) > 0 && bytes.Equal(old.Fingerprint, f.Fingerprint)
	sameAt := len(f.Attributes) > 0 && sameAttrs(old.Attributes, f.Attributes)
	return appendFile(buf, f, key, sameFP, sameAt)
}

// Load reads the stored checkpoint. With nothing stored it returns nil and
// no error: a fresh start, which is not the same as a checkpoint of no
// files. A checkpoint that cannot be decoded gives nil and an error
// wrapping ErrCorrupt; the caller reports it and starts afresh. The Format
// says which layout was read: one other than Protobuf is rewritten by the
// next Save, and so is a log whose last frame a crash cut short (that
// frame, the last poll cycle's, is ignored).
func (s *Store) Load() (*Checkpoint, Format, error) {
	s.synced = false
	data, err := s.Storage.Load()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, s.enc.Format, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("checkpoint: %w", err)
	}
	c, format, l, err := decode(data)
	if err != nil {
		return nil, format, err
	}
	if l != nil && !l.torn && s.enc.Format == Protobuf {
		s.cur.set(c.Files, l.keys)
		s.size, s.snapshot, s.synced = len(data), l.snapshot, true
	}
	return c, format, nil
}
