package tail

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

// openFile is os.Open; tests replace it to simulate unreadable files when
// running as root, where permissions do not stop a read.
var openFile = os.Open

// statFile is os.Stat; tests replace it to rename a file between a scan's
// listing of the files and its look at one of them.
var statFile = os.Stat

// A candidate is a file found by a scan and not yet open.
type candidate struct {
	path string
	id   fileID
	size int64 // when the scan found it
}

// scan expands the patterns, opens new files and marks open files that no
// pattern reaches any more as rotated.
func (t *Tail) scan(now time.Time) {
	first := !t.scanned
	t.scanned = true
	t.nextScan = now.Add(t.cfg.RefreshInterval)
	if len(t.parked) > 0 {
		// A parked file is seen to grow only by a scan.
		t.nextScan = now.Add(min(t.cfg.RefreshInterval, parkedScan))
	}
	// The descriptors may have been freed since running out lowered the
	// limit: try again; running out again lowers it again.
	t.limit = min(t.cfg.MaxConcurrentFiles, fdRoom())

	seen := map[fileID]bool{}
	var cands []candidate
	for _, path := range t.match(first) {
		fi, err := statFile(path)
		if err != nil {
			t.openError(path, err)
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		id := idOf(fi, path)
		if seen[id] {
			continue // the same file under two names, say a symlink
		}
		seen[id] = true
		if r := t.byID[id]; r != nil {
			r.path = path
			r.rotatedAt = time.Time{} // moved, but still matched: keep reading
			continue
		}
		if e, ok := t.parked[id]; ok && e.Offset == fi.Size() {
			continue // parked at its end, and not grown since
		}
		cands = append(cands, candidate{path, id, fi.Size()})
	}
	for _, r := range t.readers {
		if !seen[r.id] && r.rotatedAt.IsZero() {
			t.rotated(r, now)
		}
	}
	t.retired = slices.DeleteFunc(t.retired, func(e retired) bool { return now.After(e.until) })
	// A parked file no pattern reaches any more is forgotten, as a
	// rotated file is closed, once two scans in a row miss it: one that
	// listed the files while it was renamed within the patterns saw it
	// under neither name, and forgotten, it would be read from its start
	// when found.
	maps.DeleteFunc(t.parked, func(id fileID, _ checkpoint.File) bool {
		gone := !seen[id] && t.missed[id]
		if seen[id] || gone {
			delete(t.missed, id)
		} else {
			t.missed[id] = true
		}
		return gone
	})
	if room := t.limit - len(t.readers); len(cands) > room {
		// Files in turn: each scan starts where the last one's opening
		// stopped, so that no file waits behind others for ever.
		k := t.turn % len(cands)
		cands = append(cands[k:], cands[:k]...)
		t.turn += max(room, 1)
	}
	t.waiting = 0
	t.openAll(cands, first && !t.resumed, now)
	if len(t.known) == 0 {
		return
	}
	// Checkpoint entries of files that wait their turn are kept for it.
	if t.waiting > 0 {
		waits := map[fileID]bool{}
		for _, c := range cands {
			waits[c.id] = t.byID[c.id] == nil
		}
		t.known = slices.DeleteFunc(t.known, func(e checkpoint.File) bool {
			id := fileID{e.Dev, e.Inode}
			if waits[id] {
				t.parked[id] = e
			}
			return waits[id]
		})
	}
	// The other entries with no file are dropped, but only by the second
	// scan, run at the next cycle. A file rotated while the first scan
	// listed the files (renamed within the patterns, its path created
	// anew) was seen under neither name, or its path opened the new file:
	// read from its start when a later scan found it, it would deliver
	// again every line the checkpoint covers. Its rename was over before
	// the first scan ended, so the second one sees its new name.
	if first {
		t.nextScan = now
	} else {
		t.known = nil
	}
}

// park closes files read to their end while others wait to be opened,
// keeping each one's state as a parked entry: a scan opens it again,
// resuming there, when it has grown. The next cycle scans, so that the
// files waiting are opened at once.
func (t *Tail) park(now time.Time) {
	if t.waiting == 0 {
		return
	}
	n := 0
	t.readers = slices.DeleteFunc(t.readers, func(r *reader) bool {
		// A file with an unfinished last line stays open until
		// flush_timeout emits it: parked, nothing would.
		if n >= t.waiting || !r.eof || len(r.partial) > 0 || !r.rotatedAt.IsZero() || !r.pendingUntil.IsZero() {
			return false
		}
		n++
		t.parked[r.id] = r.entry()
		r.file.Close()
		delete(t.byID, r.id)
		return true
	})
	t.nextScan = now
}

// match returns the paths matching the patterns and not excluded, sorted.
// It counts the patterns that match nothing (not excluded) and, on the
// first scan, warns of each: a typo in a path is otherwise silent.
func (t *Tail) match(first bool) []string {
	var paths []string
	unmatched := 0
	for _, p := range t.cfg.Paths {
		m, _ := filepath.Glob(p) // patterns were checked by New
		m = slices.DeleteFunc(m, t.excluded)
		if len(m) == 0 {
			unmatched++
			if first {
				t.cfg.Logger.Warn("tail: path pattern matches no file (yet)", "pattern", p)
			}
		}
		paths = append(paths, m...)
	}
	t.stats.unmatched.Store(int32(unmatched))
	slices.Sort(paths)
	return slices.Compact(paths)
}

func (t *Tail) excluded(p string) bool {
	for _, x := range t.cfg.ExcludePaths {
		if ok, _ := filepath.Match(x, p); ok {
			return true
		}
	}
	return false
}

// checkPaths is the cheap check run between scans: a file whose path now
// names another file (or nothing) was rotated, and a new file at the path
// of an open or rotated file is opened at once rather than at the next
// scan (move-create may leave the path empty for a moment).
func (t *Tail) checkPaths(now time.Time) {
	var cands []candidate
	for _, r := range t.readers {
		fi, err := os.Stat(r.path)
		if err != nil {
			if r.rotatedAt.IsZero() {
				t.rotated(r, now)
			}
			continue
		}
		id := idOf(fi, r.path)
		if id == r.id {
			continue
		}
		if r.rotatedAt.IsZero() {
			t.rotated(r, now)
		}
		if fi.Mode().IsRegular() && t.byID[id] == nil && !slices.ContainsFunc(cands, func(c candidate) bool { return c.id == id }) {
			cands = append(cands, candidate{r.path, id, fi.Size()})
		}
	}
	t.openAll(cands, false, now)
}

func (t *Tail) rotated(r *reader, now time.Time) {
	r.rotatedAt = now
	t.stats.rotations.Add(1)
}

// rotateWaitExpired reports whether a rotated file is due to be closed; a
// scan first makes sure that no pattern still reaches it under a new name.
func (t *Tail) rotateWaitExpired(now time.Time) bool {
	for _, r := range t.readers {
		if !r.rotatedAt.IsZero() && now.Sub(r.rotatedAt) >= t.cfg.RotateWait {
			return true
		}
	}
	return false
}

// closeRotated closes rotated files that were read to their end and whose
// rotate wait is over. Their last unfinished line is emitted: nothing more
// will be written to it.
func (t *Tail) closeRotated(now time.Time) {
	t.readers = slices.DeleteFunc(t.readers, func(r *reader) bool {
		if r.rotatedAt.IsZero() || !r.eof {
			return false
		}
		if !t.cfg.ExitOnEOF && now.Sub(r.rotatedAt) < t.cfg.RotateWait {
			return false
		}
		t.flushPartial(r)
		r.file.Close()
		delete(t.byID, r.id)
		return true
	})
}

// An opened file waiting to be given a state.
type opened struct {
	candidate
	file *os.File
	head []byte // the first FingerprintSize bytes, or fewer
	size int64
}

// openAll opens the candidates and decides where each starts: from the
// checkpoint, from a copy of an open file, from its start, or (on the first
// scan of a fresh start, without ReadFromHead) from its end.
func (t *Tail) openAll(cands []candidate, fresh bool, now time.Time) {
	var files []*opened
	var waiting []candidate
	for i, c := range cands {
		if len(t.readers)+len(files) >= t.limit {
			waiting = cands[i:]
			t.wait(waiting, fresh)
			break
		}
		o, err := t.open(c)
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			// Out of file descriptors: read the files open so far, and
			// the rest in turn, with room left for the outputs and the
			// checkpoints.
			t.limit = max(1, (len(t.readers)+len(files))*3/4)
			if !t.fdWarned {
				t.fdWarned = true
				t.cfg.Logger.Warn("tail: out of file descriptors; reading files in turn", "open", len(t.readers)+len(files), "limit", t.limit)
			}
			waiting = cands[i:]
			t.wait(waiting, fresh)
			break
		}
		if err != nil {
			t.openError(c.path, err)
			continue
		}
		delete(t.failed, c.path)
		files = append(files, o)
	}
	if len(files) == 0 {
		return
	}

	// Checkpoint entries are matched by identity and fingerprint first, so
	// that two files with the same first bytes each get their own entry,
	// then by fingerprint alone: a file copied (copy-truncate) while we were
	// not running is the file we were reading, under a new inode.
	// A parked file's entry is matched by identity alone: it was closed
	// at its end by this run.
	state := make([]*checkpoint.File, len(files))
	sameIDChanged := make([]bool, len(files))
	for i, o := range files {
		if e, ok := t.parked[o.id]; ok {
			delete(t.parked, o.id)
			delete(t.missed, o.id) // parked again, it has two scans again
			if hasPrefix(o.head, e.Fingerprint) {
				state[i] = &e
			} else {
				sameIDChanged[i] = true
			}
			continue
		}
		for k := range t.known {
			e := t.known[k]
			if (fileID{e.Dev, e.Inode}) != o.id {
				continue
			}
			if hasPrefix(o.head, e.Fingerprint) {
				state[i] = &e
				t.known = slices.Delete(t.known, k, k+1)
			} else {
				sameIDChanged[i] = true
			}
			break
		}
	}
	// An entry of a file that waits its turn is that file's, whatever
	// another's first bytes say.
	waits := map[fileID]bool{}
	for _, c := range waiting {
		waits[c.id] = true
	}
	for i, o := range files {
		if state[i] != nil {
			continue
		}
		for k := range t.known {
			if waits[fileID{t.known[k].Dev, t.known[k].Inode}] {
				continue
			}
			if hasPrefix(o.head, t.known[k].Fingerprint) {
				e := t.known[k]
				state[i] = &e
				t.known = slices.Delete(t.known, k, k+1)
				break
			}
		}
	}

	// Resumed files first, so that a copy among the others can be told
	// from them.
	for i, o := range files {
		if state[i] != nil {
			r := t.newReader(o)
			t.resume(r, state[i])
			t.stats.resumed.Add(1)
			t.add(r)
		}
	}
	for i, o := range files {
		if state[i] != nil {
			continue
		}
		r := t.newReader(o)
		at, found := t.startAt[o.id]
		delete(t.startAt, o.id)
		switch {
		case t.takeOver(r, o.head, o.size):
		case t.mayBeCopy(r, o.head):
			r.pendingUntil = now.Add(t.cfg.RotateWait)
		case fresh && !t.cfg.ReadFromHead && !sameIDChanged[i]:
			r.offset, r.lineStart = o.size, o.size
		case found && at <= o.size:
			// Found by a fresh start, opened in its turn: from where it
			// was then, as if opened then.
			r.offset, r.lineStart = at, at
		}
		t.add(r)
	}
}

// wait counts the candidates that could not be opened: they are opened in
// their turn. On a fresh start that reads from the end, where each one was
// is kept, so that it is read from there.
func (t *Tail) wait(rest []candidate, fresh bool) {
	t.waiting += len(rest)
	if fresh && !t.cfg.ReadFromHead {
		for _, c := range rest {
			if _, ok := t.startAt[c.id]; !ok {
				t.startAt[c.id] = c.size
			}
		}
	}
}

func (t *Tail) add(r *reader) {
	t.readers = append(t.readers, r)
	t.byID[r.id] = r
}

func (t *Tail) open(c candidate) (*opened, error) {
	f, err := openFile(c.path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	// The path may have changed since it was listed: trust the open file.
	o := &opened{candidate: candidate{c.path, idOf(fi, c.path), fi.Size()}, file: f, size: fi.Size()}
	if t.byID[o.id] != nil {
		f.Close()
		return nil, errors.New("already open")
	}
	head := make([]byte, min(int64(t.cfg.FingerprintSize), o.size))
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, err
	}
	o.head = head[:n]
	return o, nil
}

func (t *Tail) newReader(o *opened) *reader {
	info := &File{Path: o.path, Name: filepath.Base(o.path)}
	for _, a := range t.cfg.Attributes {
		var v string
		switch a {
		case checkpoint.AttrFileName:
			v = info.Name
		case checkpoint.AttrFilePath:
			v = o.path
		case checkpoint.AttrFileNameResolved, checkpoint.AttrFilePathResolved:
			v = o.path
			if p, err := filepath.EvalSymlinks(o.path); err == nil {
				v = p
			}
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
			if a == checkpoint.AttrFileNameResolved {
				v = filepath.Base(v)
			}
		}
		info.Attributes = append(info.Attributes, checkpoint.Attr{Key: a, Value: v})
	}
	return &reader{file: o.file, info: info, path: o.path, id: o.id, fp: o.head}
}

// resume continues a file from its checkpoint entry.
func (t *Tail) resume(r *reader, e *checkpoint.File) {
	r.offset = e.Offset
	r.recordNum = e.RecordNum
	r.partial = append([]byte(nil), e.Partial...)
	r.partialSince = e.PartialSince
	r.skipping = e.Skipping
	r.lineStart = e.Offset - int64(len(e.Partial))
}

// hasPrefix reports whether head, a file's first bytes, starts with the
// fingerprint fp.
func hasPrefix(head, fp []byte) bool {
	return bytes.HasPrefix(head, fp)
}

func (t *Tail) openError(path string, err error) {
	if errors.Is(err, fs.ErrNotExist) {
		return // gone between listing and opening: rotation, not a problem
	}
	t.stats.openErrors.Add(1)
	if t.failed[path] == err.Error() {
		return
	}
	t.failed[path] = err.Error()
	t.cfg.Logger.Warn("tail: cannot open file", "path", path, "error", err)
}
