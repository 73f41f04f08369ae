package tail

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"time"
)

// Copy-truncate (logrotate's copytruncate) copies app.log to app.log.1 and
// then truncates app.log. When the patterns match the copy, the lines of
// the old content that were not read yet are in the copy, after the offset
// reached in app.log. A new file is taken for such a copy when it starts
// with the old content's fingerprint and holds, just before that offset,
// the last bytes read there (reader.last); it is then read from the offset.
//
// The copy may be seen before the truncation (or while it is being
// written). A new file that looks like the start of a copy of an intact
// open file is therefore held, unread, until the open file is truncated
// (it is a copy: take over) or for rotate_wait (it is another file that
// starts the same way, like Debian's messages and syslog: read it in full).

// A retired state is where reading of a file's old content stopped when
// the file was truncated. Checkpoints keep it too (without device and
// inode: no file holds that content now), so that a copy found after a
// restart also resumes.
type retired struct {
	path              string
	fp, last          []byte
	offset, recordNum int64
	until             time.Time
}

// takeOver continues r, a new file with the given first bytes and size,
// where a truncated file's old content was read to, if r is its copy.
func (t *Tail) takeOver(r *reader, head []byte, size int64) bool {
	fresh := false
	for _, old := range t.readers {
		if old == r || !old.pendingUntil.IsZero() || len(old.fp) == 0 || !startsAlike(head, old.fp) || t.intact(old) {
			continue
		}
		// old was truncated, so its copy was finished before: what was
		// read of r may be the copy half written (the truncation came
		// between r's open and now), too short to be recognised.
		if !fresh {
			if h, n, err := t.firstBytes(r.file); err == nil {
				head, size = h, n
			}
			fresh = true
		}
		if !isCopy(r.file, head, size, old.fp, old.last, old.offset) {
			continue
		}
		r.offset, r.lineStart, r.recordNum = old.offset, old.lineStart, old.recordNum
		r.partial, old.partial = old.partial, nil
		r.partialSince, r.skipping, r.last = old.partialSince, old.skipping, old.last
		t.stats.truncations.Add(1)
		old.offset, old.lineStart, old.recordNum = 0, 0, 0
		old.gen++
		old.partialSince, old.skipping, old.fp, old.last = time.Time{}, false, nil, nil
		return true
	}
	for i, e := range t.retired {
		if isCopy(r.file, head, size, e.fp, e.last, e.offset) {
			r.offset, r.lineStart, r.recordNum, r.last = e.offset, e.offset, e.recordNum, e.last
			t.retired = slices.Delete(t.retired, i, i+1)
			return true
		}
	}
	return false
}

// intact reports whether r's file still holds what r has read.
func (t *Tail) intact(r *reader) bool {
	fi, err := r.file.Stat()
	return err == nil && fi.Size() >= r.offset && t.sameStart(r)
}

// mayBeCopy reports whether r, a new file with the given first bytes,
// could be (the beginning of) a copy of an intact open file. An open file
// not read yet counts: the scan that opened it may find its copy too (a
// restart during copy-truncate), and both would be read in full.
func (t *Tail) mayBeCopy(r *reader, head []byte) bool {
	if t.cfg.ExitOnEOF {
		return false // nothing rotates under a batch job
	}
	for _, old := range t.readers {
		if old == r || !old.pendingUntil.IsZero() || len(old.fp) == 0 {
			continue
		}
		if startsAlike(head, old.fp) && t.intact(old) {
			return true
		}
	}
	return false
}

// resolvePending decides about held files: a copy is taken over once its
// original is truncated; a file that stops looking like a copy, or is held
// for rotate_wait, is read from its start.
func (t *Tail) resolvePending(now time.Time) {
	for _, r := range t.readers {
		if r.pendingUntil.IsZero() {
			continue
		}
		head, size, err := t.firstBytes(r.file)
		if err != nil {
			continue
		}
		switch {
		case t.takeOver(r, head, size):
		case !r.rotatedAt.IsZero() || !now.Before(r.pendingUntil) || !t.mayBeCopy(r, head):
		default:
			continue
		}
		r.pendingUntil = time.Time{}
		r.fp = head
	}
}

// firstBytes returns f's first FingerprintSize bytes (or fewer) and size.
func (t *Tail) firstBytes(f *os.File) ([]byte, int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	head := make([]byte, min(int64(t.cfg.FingerprintSize), fi.Size()))
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return head[:n], fi.Size(), nil
}

// startsAlike reports whether head, a file's first bytes, and fp, another
// file's fingerprint, are the same as far as the shorter goes.
func startsAlike(head, fp []byte) bool {
	return bytes.HasPrefix(head, fp) || bytes.HasPrefix(fp, head)
}

// isCopy reports whether the file f, whose first bytes are head and size
// is size, starts with fp and holds last just before offset.
func isCopy(f *os.File, head []byte, size int64, fp, last []byte, offset int64) bool {
	if len(fp) == 0 || !bytes.HasPrefix(head, fp) || size < offset {
		return false
	}
	buf := make([]byte, len(last))
	n, err := f.ReadAt(buf, offset-int64(len(last)))
	return (err == nil || errors.Is(err, io.EOF)) && bytes.Equal(buf[:n], last)
}
