package tail

import (
	"slices"
	"time"
)

// A Mark is where a line starts in the file it was read from. A caller
// that holds lines back (the parts of a long line, a multiline record)
// sets its cursor back to the first one it holds (Cursor.Before): the
// checkpoint then covers every line before it and none of those held, so
// a restart reads the held lines again, and only them, from that file.
type Mark struct {
	file      *File
	gen       uint32
	offset    int64
	recordNum int64
}

// Mark returns where l starts.
func (l *Line) Mark() Mark {
	return Mark{file: l.File, gen: l.gen, offset: l.Offset, recordNum: l.RecordNum}
}

// origin is the open file a cursor entry was taken from, and its content
// generation then.
type origin struct {
	file *File
	gen  uint32
}

// Before returns c with the file of each mark set back to just before the
// mark's line: as if it had been read up to there, with no unfinished
// line held. Several marks in one file set it back to the earliest. It
// returns false when a mark's file is not in c as the mark knew it: it was
// closed (rotated away and done, or closed while files are read in turn)
// or its content started again (truncated, or taken over by its copy), so
// no entry of c stands before the line; the caller keeps its older cursor.
func (c Cursor) Before(marks ...Mark) (Cursor, bool) {
	if len(marks) == 0 {
		return c, true
	}
	files := slices.Clone(c.files)
	for _, m := range marks {
		i := slices.Index(c.from, origin{m.file, m.gen})
		if m.file == nil || i < 0 {
			return Cursor{}, false
		}
		if m.offset > c.files[i].Offset {
			return Cursor{}, false // cannot be: the line was read
		}
		e := &files[i]
		if m.offset > e.Offset {
			continue // another mark set it further back
		}
		e.Offset, e.RecordNum = m.offset, m.recordNum-1
		e.Partial, e.PartialSince, e.Skipping = nil, time.Time{}, false
	}
	return Cursor{seq: c.seq, files: files, from: c.from}, true
}
