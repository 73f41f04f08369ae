package tail

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"
)

// A reader is one open, tracked file.
type reader struct {
	file *os.File
	info *File
	path string // where the file was last seen
	id   fileID

	// fp holds the file's first bytes, up to FingerprintSize. It grows
	// while the file is shorter; it is replaced, never written in place,
	// because snapshots share it.
	fp []byte

	offset    int64 // next byte to read
	lineStart int64 // offset of the first byte of the current line
	recordNum int64 // lines emitted
	// gen counts the times the file's content started again (truncated,
	// or taken over by its copy): a Mark of older content is not where
	// the file's lines are now.
	gen uint32

	partial      []byte // the current line's bytes so far
	partialSince time.Time
	skipping     bool // discarding the rest of an over-long line

	rotatedAt time.Time // when the file was found gone from its path
	eof       bool      // the last read reached the end

	// last holds up to lastSize bytes before offset. A copy of the file
	// (copy-truncate) is recognised by its first bytes and by these.
	last []byte

	// pendingUntil is set while the file may be a copy of another that is
	// about to be truncated; it is not read meanwhile (see copy.go).
	pendingUntil time.Time
	// seekCopy: the file was found truncated while it held part of a
	// line, and its content starts again only after a scan.
	seekCopy bool
}

const lastSize = 64

// readAt is (*os.File).ReadAt, for the reads of a file's lines; tests
// replace it to change the file just after a read.
var readAt = (*os.File).ReadAt

// read reads what r has, up to the batch budget, and reports whether it
// stopped for the budget.
func (t *Tail) read(r *reader, now time.Time) (budgetHit bool) {
	fi, err := r.file.Stat()
	if err != nil {
		t.readError(r, err)
		return false
	}
	size := fi.Size()
	if size < r.offset || (size > r.offset && !t.sameStart(r)) {
		if len(r.partial) > 0 && !r.seekCopy {
			// The rest of the line held may be in a copy of the old
			// content (copy-truncate), which the file's reader takes
			// over with the line: scan for it before emitting the line
			// as it is, or it comes in two pieces.
			r.seekCopy = true
			t.nextScan = now
			return false
		}
		t.restart(r, now)
	}
	r.seekCopy = false
	for r.offset < size {
		if len(t.arena) >= t.cfg.MaxBatchBytes {
			t.growFingerprint(r, size)
			r.eof = false
			return true
		}
		n := int64(len(t.rbuf))
		if left := size - r.offset; left < n {
			n = left
		}
		at := r.offset
		k, err := readAt(r.file, t.rbuf[:n], at)
		c := t.consume(r, t.rbuf[:k], now)
		r.remember(t.rbuf[:c])
		t.fingerprintFrom(r, at, t.rbuf[:c])
		if c < k {
			// MaxBatchLines; the rest is read next cycle. The fingerprint
			// is taken on every way out: a checkpoint entry without one
			// would match any file on restart.
			t.growFingerprint(r, size)
			r.eof = false
			return true
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.readError(r, err)
			}
			break // io.EOF: the file shrank under us; the next cycle sees it
		}
	}
	t.growFingerprint(r, size)
	r.eof = r.offset >= size
	if r.eof && len(r.partial) > 0 && (t.cfg.ExitOnEOF || now.Sub(r.partialSince) >= t.cfg.FlushTimeout) {
		t.flushPartial(r)
	}
	return false
}

// sameStart reports whether the file still begins with r's fingerprint. A
// file truncated and written past the old offset between two polls is
// caught here rather than by its size.
func (t *Tail) sameStart(r *reader) bool {
	if len(r.fp) == 0 {
		return true
	}
	buf := t.rbuf[:len(r.fp)]
	n, err := r.file.ReadAt(buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return true // cannot tell; a read error is reported by the read
	}
	return bytes.Equal(buf[:n], r.fp)
}

// remember keeps the last bytes read, which end at r.offset.
func (r *reader) remember(data []byte) {
	if len(data) >= lastSize {
		r.last = append(r.last[:0], data[len(data)-lastSize:]...)
		return
	}
	r.last = append(r.last, data...)
	if over := len(r.last) - lastSize; over > 0 {
		r.last = append(r.last[:0], r.last[over:]...)
	}
}

// restart handles a truncated or rewritten file: what was held of the old
// content is emitted, and the new content is read from its start. Where
// the old content had been read to is remembered for a while, in case a
// copy of it shows up (copy-truncate).
func (t *Tail) restart(r *reader, now time.Time) {
	t.stats.truncations.Add(1)
	t.flushPartial(r)
	if len(r.fp) > 0 && r.offset > 0 {
		t.retired = append(t.retired, retired{
			path: r.path, fp: r.fp, last: r.last, offset: r.offset, recordNum: r.recordNum,
			until: now.Add(2*t.cfg.RefreshInterval + t.cfg.RotateWait),
		})
	}
	r.offset, r.lineStart, r.recordNum = 0, 0, 0
	r.gen++
	r.skipping = false
	r.fp, r.last = nil, nil
}

// fingerprintFrom extends r.fp with data, bytes read at offset at, while
// they continue it. The fingerprint is taken from the bytes read, not
// read again: a file truncated and rewritten in between would give the
// new content's first bytes, and the new content would look like the old
// one, read on from the old offset.
func (t *Tail) fingerprintFrom(r *reader, at int64, data []byte) {
	have, want := int64(len(r.fp)), min(int64(t.cfg.FingerprintSize), at+int64(len(data)))
	if have >= want || at > have || !bytes.Equal(r.fp[at:], data[:have-at]) {
		return
	}
	fp := make([]byte, want) // replaced, not written in place: snapshots share it
	copy(fp, r.fp)
	copy(fp[have:], data[have-at:want-at])
	r.fp = fp
}

// growFingerprint extends r.fp while the file is shorter than the
// fingerprint size, with bytes not read yet: bytes that do not start with
// r.fp are another content (the file was rewritten), and are left out.
func (t *Tail) growFingerprint(r *reader, size int64) {
	want := int64(t.cfg.FingerprintSize)
	if size < want {
		want = size
	}
	if int64(len(r.fp)) >= want {
		return
	}
	fp := make([]byte, want)
	n, err := r.file.ReadAt(fp, 0)
	if (err != nil && !errors.Is(err, io.EOF)) || !bytes.HasPrefix(fp[:n], r.fp) {
		return
	}
	r.fp = fp[:n]
}

// consume splits data, which starts at r.offset, into lines, and returns
// how many bytes it used: it stops early when the batch has MaxBatchLines
// lines, since short lines would otherwise make a batch of millions of
// records from a few megabytes.
func (t *Tail) consume(r *reader, data []byte, now time.Time) int {
	used := 0
	for used < len(data) {
		if len(t.batch.Lines) >= t.cfg.MaxBatchLines {
			return used
		}
		rest := data[used:]
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			t.hold(r, rest, now)
			r.offset += int64(len(rest))
			return len(data)
		}
		t.endLine(r, rest[:i])
		r.offset += int64(i) + 1
		r.lineStart = r.offset
		used += i + 1
	}
	return used
}

// endLine finishes the current line with seg, the bytes before its newline.
func (t *Tail) endLine(r *reader, seg []byte) {
	if r.skipping {
		r.skipping = false
		return
	}
	line := seg
	if len(r.partial) > 0 {
		r.partial = append(r.partial, seg...)
		line = r.partial
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > t.cfg.MaxLineSize {
		t.longLine(r, line)
	} else {
		t.emit(r, line, false)
	}
	r.partial = r.partial[:0]
	r.partialSince = time.Time{}
}

// hold keeps the bytes of an unfinished line. A line that already passes
// MaxLineSize is dealt with now, and the rest of it discarded as it comes.
func (t *Tail) hold(r *reader, data []byte, now time.Time) {
	if r.skipping {
		return
	}
	// One byte of slack: a trailing '\r' may yet be stripped.
	if len(r.partial)+len(data) > t.cfg.MaxLineSize+1 {
		line := r.partial
		if k := t.cfg.MaxLineSize - len(line); k > 0 {
			line = append(line, data[:min(k, len(data))]...)
		}
		t.longLine(r, line)
		r.partial = r.partial[:0]
		r.partialSince = time.Time{}
		r.skipping = true
		return
	}
	r.partial = append(r.partial, data...)
	r.partialSince = now
}

func (t *Tail) longLine(r *reader, line []byte) {
	if t.cfg.SkipLongLines {
		t.stats.skipped.Add(1)
		return
	}
	t.stats.truncated.Add(1)
	t.emit(r, line[:t.cfg.MaxLineSize], true)
}

// flushPartial emits the unfinished line as it is.
func (t *Tail) flushPartial(r *reader) {
	if len(r.partial) > 0 {
		t.emit(r, r.partial, false)
	}
	r.partial = r.partial[:0]
	r.partialSince = time.Time{}
	r.lineStart = r.offset
}

func (t *Tail) emit(r *reader, line []byte, truncated bool) {
	start := len(t.arena)
	t.arena = append(t.arena, line...)
	r.recordNum++
	t.batch.Lines = append(t.batch.Lines, Line{
		File:      r.info,
		Bytes:     t.arena[start:len(t.arena):len(t.arena)],
		Offset:    r.lineStart,
		RecordNum: r.recordNum,
		Truncated: truncated,
		gen:       r.gen,
	})
	t.stats.lines.Add(1)
	t.stats.bytes.Add(int64(len(line)))
}

func (t *Tail) readError(r *reader, err error) {
	t.stats.readErrors.Add(1)
	t.cfg.Logger.Warn("tail: cannot read file", "path", r.path, "error", err)
}
