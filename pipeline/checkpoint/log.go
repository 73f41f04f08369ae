package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
)

// frameHeader and frameTrailer are the bytes around a frame's message: its
// length and its checksum, each 4 bytes big-endian.
const (
	frameHeader  = 4
	frameTrailer = 4
)

// nextFrame returns the message of the frame at the start of b and the
// frame's length. ok is false when b does not start with a whole frame
// whose checksum matches: the end of a log that an interrupted save cut
// short.
func nextFrame(b []byte) (msg []byte, n int, ok bool) {
	if len(b) < frameHeader+frameTrailer {
		return nil, 0, false
	}
	size := binary.BigEndian.Uint32(b)
	if uint64(size) > uint64(len(b)-frameHeader-frameTrailer) {
		return nil, 0, false
	}
	n = frameHeader + int(size) + frameTrailer
	if crc32.Checksum(b[:n-frameTrailer], castagnoli) != binary.BigEndian.Uint32(b[n-frameTrailer:]) {
		return nil, 0, false
	}
	return b[frameHeader : n-frameTrailer], n, true
}

// loaded is a decoded version-2 log.
type loaded struct {
	c    *Checkpoint
	keys []uint64 // the key of each of c.Files
	// torn is set when the log ended in a frame cut short or failing its
	// checksum, which was ignored: a save that a crash interrupted. The
	// next save must not append after it.
	torn bool
	// snapshot is the length of the version byte and the first frame.
	snapshot int
}

// decodeLog parses a version-2 log: the version byte, then frames. The
// first frame must be whole; a bad frame after it ends the log.
func decodeLog(data []byte) (*loaded, error) {
	var st logState
	var m message
	rest := data[1:]
	l := &loaded{}
	for frame := 0; len(rest) > 0; frame++ {
		msg, n, ok := nextFrame(rest)
		if !ok && frame == 0 {
			return nil, fmt.Errorf("%w: the first frame is cut short or fails its checksum", ErrCorrupt)
		}
		if !ok {
			l.torn = true
			break
		}
		if err := decodeMessage(msg, &m); err != nil {
			return nil, fmt.Errorf("frame %d: %w", frame, err)
		}
		if err := st.apply(&m); err != nil {
			return nil, fmt.Errorf("frame %d: %w", frame, err)
		}
		rest = rest[n:]
		if frame == 0 {
			l.snapshot = 1 + n
		}
	}
	if len(data) == 1 {
		return nil, fmt.Errorf("%w: no frame", ErrCorrupt)
	}
	l.c, l.keys = st.result()
	if err := l.c.validate(); err != nil {
		return nil, err
	}
	return l, nil
}

// logState is the checkpoint as the frames read so far make it.
type logState struct {
	files []File
	keys  []uint64
	dead  []bool         // removed by a later frame
	index map[uint64]int // key → position, built at the first frame that needs it
	// unsorted is set once a frame added a key below one before it.
	unsorted bool
}

// apply adds the files of m and removes its removed keys. A file replaces
// the one with its key; same_fingerprint and same_attributes take those of
// the file it replaces.
func (st *logState) apply(m *message) error {
	if st.files == nil && len(m.removed) == 0 {
		// The first frame, the common case: adopt its files.
		st.files = m.files
		st.keys = make([]uint64, len(m.files))
		st.dead = make([]bool, len(m.files))
		for i, meta := range m.meta {
			if meta.sameFP || meta.sameAttrs {
				return fmt.Errorf("%w: file %d refers to the file it replaces, but the frame is the first", ErrCorrupt, i)
			}
			st.keys[i] = meta.key
			if i > 0 && meta.key <= st.keys[i-1] {
				st.unsorted = true
			}
		}
		if st.unsorted {
			// Repeated keys: the general path below finds them.
			st.files, st.keys, st.dead, st.unsorted = []File{}, nil, nil, false
			return st.apply(m)
		}
		return nil
	}
	if st.index == nil {
		st.index = make(map[uint64]int, len(st.keys)+len(m.files))
		for i, k := range st.keys {
			st.index[k] = i
		}
	}
	for i := range m.files {
		f, meta := m.files[i], m.meta[i]
		at, ok := st.index[meta.key]
		if ok && st.dead[at] {
			ok = false
		}
		if !ok && (meta.sameFP || meta.sameAttrs) {
			return fmt.Errorf("%w: file %d refers to key %d, which holds no file", ErrCorrupt, i, meta.key)
		}
		if meta.sameFP {
			if len(f.Fingerprint) > 0 {
				return fmt.Errorf("%w: file %d has a fingerprint and same_fingerprint", ErrCorrupt, i)
			}
			f.Fingerprint = st.files[at].Fingerprint
		}
		if meta.sameAttrs {
			if len(f.Attributes) > 0 {
				return fmt.Errorf("%w: file %d has attributes and same_attributes", ErrCorrupt, i)
			}
			f.Attributes = st.files[at].Attributes
		}
		if ok {
			st.files[at] = f
			continue
		}
		if _, known := st.index[meta.key]; known {
			st.files[at], st.dead[at] = f, false
			continue
		}
		if n := len(st.keys); n > 0 && meta.key <= st.keys[n-1] {
			st.unsorted = true
		}
		st.index[meta.key] = len(st.files)
		st.files = append(st.files, f)
		st.keys = append(st.keys, meta.key)
		st.dead = append(st.dead, false)
	}
	for _, k := range m.removed {
		at, ok := st.index[k]
		if !ok || st.dead[at] {
			return fmt.Errorf("%w: removed key %d holds no file", ErrCorrupt, k)
		}
		st.dead[at] = true
	}
	return nil
}

// result returns the live files in the order of their keys.
func (st *logState) result() (*Checkpoint, []uint64) {
	live := 0
	for _, d := range st.dead {
		if !d {
			live++
		}
	}
	if !st.unsorted && live == len(st.files) {
		return &Checkpoint{Files: st.files}, st.keys
	}
	order := make([]int, 0, live)
	for i, d := range st.dead {
		if !d {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case st.keys[a] < st.keys[b]:
			return -1
		case st.keys[a] > st.keys[b]:
			return 1
		}
		return 0
	})
	c := &Checkpoint{Files: make([]File, len(order))}
	keys := make([]uint64, len(order))
	for i, at := range order {
		c.Files[i], keys[i] = st.files[at], st.keys[at]
	}
	return c, keys
}
