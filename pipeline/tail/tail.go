// Package tail follows log files the way a log agent must: by identity, not
// by name, through rotation and truncation, handing out lines in batches
// whose progress is recorded only when the caller commits them.
package tail

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

// Defaults for the zero values of Config, which pipeline/config reads too.
const (
	DefaultPollInterval    = 200 * time.Millisecond
	DefaultRefreshInterval = 60 * time.Second
	DefaultRotateWait      = 5 * time.Second
	DefaultFlushTimeout    = 5 * time.Second
	DefaultFingerprintSize = 1000
	DefaultMaxLineSize     = 1 << 20
	DefaultMaxBatchBytes   = 4 << 20
	DefaultMaxBatchLines   = 16 << 10
	// DefaultMaxConcurrentFiles is the Collector's fileconsumer's default.
	DefaultMaxConcurrentFiles = 1024
)

// DefaultAttributes are the attributes added to every line when
// Config.Attributes is nil.
var DefaultAttributes = []string{checkpoint.AttrFileName, checkpoint.AttrFilePath}

// Config says which files to follow and how. Zero values mean the defaults.
type Config struct {
	Paths        []string // glob patterns (filepath.Match syntax)
	ExcludePaths []string // patterns matched against the full path
	// ReadFromHead reads the files found by the first scan of a fresh start
	// (no checkpoint) from their start; otherwise they are read from their
	// end. Files in the checkpoint resume where it says; every other file
	// (found later, found when resuming from a checkpoint, truncated) is
	// read from its start, so that a line delivered but not yet
	// checkpointed before a crash is read again.
	ReadFromHead    bool
	PollInterval    time.Duration // how often files are read
	RefreshInterval time.Duration // how often the patterns are expanded again
	// RotateWait is how long a file that has left its path (rotated away or
	// deleted) is still read before it is closed.
	RotateWait time.Duration
	// FlushTimeout is how long an unfinished last line is held, without the
	// file growing, before it is emitted as a line.
	FlushTimeout time.Duration
	// FingerprintSize is how many leading bytes identify a file.
	FingerprintSize int
	// MaxLineSize bounds a line, without its newline. Longer lines are
	// truncated to it (Line.Truncated), or dropped if SkipLongLines.
	MaxLineSize   int
	SkipLongLines bool
	// ExitOnEOF makes Poll return io.EOF once every file has been read to
	// its end.
	ExitOnEOF bool
	// MaxBatchBytes bounds the line bytes of one batch, MaxBatchLines its
	// lines (a record costs far more memory than a short line).
	MaxBatchBytes int
	MaxBatchLines int
	// Attributes names the attributes added to each line: any of
	// log.file.name, log.file.path, log.file.name_resolved and
	// log.file.path_resolved. Nil means DefaultAttributes.
	Attributes []string
	// MaxConcurrentFiles bounds the files open at once. Past it — or past
	// what the process's file descriptor limit leaves — the rest are read
	// in turn: files read to their end are closed, their state (offset,
	// fingerprint, identity) kept as a checkpoint entry keeps it, and are
	// opened again, resuming there, when they grow.
	MaxConcurrentFiles int
	// Logger receives reports of files that cannot be opened or read. Nil
	// discards them.
	Logger *slog.Logger
}

func (c *Config) setDefaults() error {
	if len(c.Paths) == 0 {
		return errors.New("tail: no paths")
	}
	for _, p := range append(append([]string(nil), c.Paths...), c.ExcludePaths...) {
		if _, err := filepath.Match(p, ""); err != nil {
			return fmt.Errorf("tail: pattern %q: %w", p, err)
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.PollInterval, DefaultPollInterval)
	def(&c.RefreshInterval, DefaultRefreshInterval)
	def(&c.RotateWait, DefaultRotateWait)
	def(&c.FlushTimeout, DefaultFlushTimeout)
	if c.FingerprintSize <= 0 {
		c.FingerprintSize = DefaultFingerprintSize
	}
	if c.MaxLineSize <= 0 {
		c.MaxLineSize = DefaultMaxLineSize
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	if c.MaxBatchLines <= 0 {
		c.MaxBatchLines = DefaultMaxBatchLines
	}
	if c.MaxConcurrentFiles <= 0 {
		c.MaxConcurrentFiles = DefaultMaxConcurrentFiles
	}
	if c.Attributes == nil {
		c.Attributes = DefaultAttributes
	}
	for _, a := range c.Attributes {
		switch a {
		case checkpoint.AttrFileName, checkpoint.AttrFilePath,
			checkpoint.AttrFileNameResolved, checkpoint.AttrFilePathResolved:
		default:
			return fmt.Errorf("tail: unknown attribute %q", a)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// File describes where lines come from. It is shared by all lines of one
// tracked file and must not be modified.
type File struct {
	Path       string // as matched by the pattern when the file was opened
	Name       string // the last element of Path
	Attributes []checkpoint.Attr
}

// A Line is one line of a file, without its "\n" or "\r\n".
type Line struct {
	File      *File
	Bytes     []byte // valid until the next Poll
	Offset    int64  // of the line's first byte in the file
	RecordNum int64  // 1 for the first line read from the file
	Truncated bool   // longer than MaxLineSize, cut to it
	gen       uint32 // the file's content generation (reader.gen), for Mark
}

// A Batch is what one poll cycle read.
type Batch struct {
	Lines []Line
	// Cursor is the state of every file after these lines. Pass it to
	// Commit once the lines are safely delivered.
	Cursor Cursor
}

// A Cursor is the read state after one batch.
type Cursor struct {
	seq   uint64
	files []checkpoint.File
	// from is the open file each of the first entries of files was taken
	// from (the rest are closed files'), so that Before finds a mark's.
	from []origin
}

// Stats counts what the tail did. All fields only grow, except Files.
type Stats struct {
	Files            int   // files open now
	Lines, Bytes     int64 // emitted
	TruncatedLines   int64 // over MaxLineSize, emitted cut
	SkippedLines     int64 // over MaxLineSize, dropped
	Rotations        int64 // files that left their path
	Truncations      int64 // files that shrank or were rewritten
	OpenErrors       int64
	ReadErrors       int64
	CheckpointResume int64 // files resumed from the checkpoint
	// UnmatchedPatterns is how many of Config.Paths matched no file (that
	// is not excluded) at the last scan.
	UnmatchedPatterns int
}

// Tail follows the files matched by a Config. Poll must be called from one
// goroutine; Commit, Checkpoint and Stats may be called from any.
type Tail struct {
	cfg Config

	readers []*reader
	byID    map[fileID]*reader
	known   []checkpoint.File // checkpoint entries not yet matched to a file (first two scans)
	retired []retired         // recently truncated content, for copy-truncate
	failed  map[string]string // path → last open error, to report it once

	// Files read in turn (MaxConcurrentFiles): parked are the files closed
	// at their end while others waited, as checkpoint entries; waiting is
	// how many files the last scan found and could not open; startAt is,
	// for files a fresh start found but could not open yet, the size at
	// which it found them (read from there, as if opened then); limit is
	// the most files open at once, lowered when the process runs out of
	// file descriptors.
	parked  map[fileID]checkpoint.File
	missed  map[fileID]bool // parked files the last scan did not see
	waiting int
	startAt map[fileID]int64
	limit   int
	turn    int // where the next scan starts opening, when files wait
	// fdWarned: running out of descriptors was logged (once a run).
	fdWarned bool

	scanned   bool
	resumed   bool // New was given a checkpoint
	nextScan  time.Time
	lastCycle time.Time
	more      bool // the last cycle stopped at MaxBatchBytes or MaxBatchLines
	done      bool
	rr        int // reader to start with, for fairness under MaxBatchBytes

	rbuf  []byte // read buffer
	arena []byte // the bytes of the current batch's lines
	batch Batch
	seq   uint64

	mu        sync.Mutex
	committed []checkpoint.File
	commitSeq uint64

	stats struct {
		lines, bytes, truncated, skipped, rotations, truncations,
		openErrors, readErrors, resumed atomic.Int64
		files, unmatched atomic.Int32
	}
}

// New returns a Tail for cfg that resumes from cp, or starts afresh if cp is
// nil (no checkpoint was saved, or it could not be read). The files of cp
// are matched to files on disk by the first Poll's scan and, those left,
// by the next Poll's; entries that match no file by then are dropped.
func New(cfg Config, cp *checkpoint.Checkpoint) (*Tail, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	t := &Tail{
		cfg:     cfg,
		byID:    map[fileID]*reader{},
		failed:  map[string]string{},
		startAt: map[fileID]int64{},
		parked:  map[fileID]checkpoint.File{},
		missed:  map[fileID]bool{},
		rbuf:    make([]byte, 256<<10),
		limit:   min(cfg.MaxConcurrentFiles, fdRoom()),
	}
	if cp != nil {
		t.resumed = true
		files := validEntries(cp.Files, cfg.Logger)
		t.known = slices.Clone(files) // matching deletes from it
		t.committed = files
	}
	return t, nil
}

// validEntries returns the checkpoint entries that can be matched to a
// file. An entry with no fingerprint but an offset is dropped, and reported
// once: the tail never writes one (the fingerprint grows with the file), and
// an empty fingerprint is a prefix of every file, so it would resume any
// file at that offset.
func validEntries(files []checkpoint.File, log *slog.Logger) []checkpoint.File {
	var bad []string
	out := files[:0:0]
	for _, e := range files {
		if len(e.Fingerprint) == 0 && e.Offset > 0 {
			bad = append(bad, e.Path)
			continue
		}
		out = append(out, e)
	}
	if len(bad) == 0 {
		return files
	}
	log.Warn("tail: checkpoint entries without a fingerprint but with an offset match no file; their files are read as new",
		"entries", len(bad), "paths", bad)
	return out
}

// Poll runs one poll cycle and returns the lines it read. It waits for the
// poll interval since the previous cycle unless that cycle left data
// unread. The batch and its lines are valid until the next call. With
// ExitOnEOF, once a cycle has read every file to its end, the next call
// returns io.EOF.
func (t *Tail) Poll(ctx context.Context) (*Batch, error) {
	if t.done {
		return nil, io.EOF
	}
	if !t.lastCycle.IsZero() && !t.more {
		wait := time.Until(t.lastCycle.Add(t.cfg.PollInterval))
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-timer.C:
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := time.Now()
	t.lastCycle = now
	t.cycle(now)
	if t.cfg.ExitOnEOF && !t.more && t.allRead() {
		t.done = true // this batch is the last
	}
	return &t.batch, nil
}

// Commit records that the lines of the batch with cursor c, and of every
// batch before it, were delivered. Only committed state reaches
// Checkpoint, so a checkpoint never covers a line that was not delivered.
// A cursor of the batch last committed replaces it: the batch's own after
// one that Before set back, once the lines held are delivered.
func (t *Tail) Commit(c Cursor) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c.seq >= t.commitSeq {
		t.commitSeq = c.seq
		t.committed = c.files
	}
}

// Checkpoint returns the state as of the last Commit (or the checkpoint
// given to New, before any). It must not be modified.
func (t *Tail) Checkpoint() *checkpoint.Checkpoint {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &checkpoint.Checkpoint{Files: t.committed}
}

// Stats returns the counters.
func (t *Tail) Stats() Stats {
	s := &t.stats
	return Stats{
		Files:            int(s.files.Load()),
		Lines:            s.lines.Load(),
		Bytes:            s.bytes.Load(),
		TruncatedLines:   s.truncated.Load(),
		SkippedLines:     s.skipped.Load(),
		Rotations:        s.rotations.Load(),
		Truncations:      s.truncations.Load(),
		OpenErrors:       s.openErrors.Load(),
		ReadErrors:       s.readErrors.Load(),
		CheckpointResume: s.resumed.Load(),

		UnmatchedPatterns: int(s.unmatched.Load()),
	}
}

// Close closes every file. Unfinished lines stay in the committed
// checkpoint and are read again by the next run.
func (t *Tail) Close() error {
	var errs []error
	for _, r := range t.readers {
		errs = append(errs, r.file.Close())
	}
	t.readers = nil
	t.byID = map[fileID]*reader{}
	t.stats.files.Store(0)
	return errors.Join(errs...)
}

// cycle scans if due, reads every file and fills t.batch.
func (t *Tail) cycle(now time.Time) {
	t.batch.Lines = t.batch.Lines[:0]
	if t.arena == nil {
		// Room for a full batch plus what one read can add past the budget
		// check (a read buffer of lines and a held line), so the arena
		// never grows: growing copies every line read so far.
		t.arena = make([]byte, 0, t.cfg.MaxBatchBytes+len(t.rbuf)+t.cfg.MaxLineSize+1)
	}
	t.arena = t.arena[:0]
	if !t.scanned || !now.Before(t.nextScan) || t.rotateWaitExpired(now) {
		t.scan(now)
	} else {
		t.checkPaths(now)
	}
	t.resolvePending(now)
	t.more = false
	n := len(t.readers)
	for i := range n {
		r := t.readers[(t.rr+i)%n]
		if !r.pendingUntil.IsZero() {
			continue
		}
		if t.read(r, now) {
			t.more = true
			break
		}
	}
	if n > 0 {
		t.rr = (t.rr + 1) % n
	}
	t.closeRotated(now)
	t.park(now)
	t.stats.files.Store(int32(len(t.readers)))
	t.seq++
	files, from := t.snapshot()
	t.batch.Cursor = Cursor{seq: t.seq, files: files, from: from}
}

// allRead reports whether every file has been read to its end: none
// waits to be opened, and every open one is at its end.
func (t *Tail) allRead() bool {
	if t.waiting > 0 {
		return false
	}
	for _, r := range t.readers {
		if !r.eof || len(r.partial) > 0 {
			return false
		}
	}
	return true
}

func (t *Tail) snapshot() ([]checkpoint.File, []origin) {
	files := make([]checkpoint.File, 0, len(t.readers)+len(t.known)+len(t.retired)+len(t.parked))
	from := make([]origin, 0, len(t.readers))
	for _, r := range t.readers {
		if !r.pendingUntil.IsZero() {
			continue // not read yet; found afresh after a restart
		}
		files = append(files, r.entry())
		from = append(from, origin{r.info, r.gen})
	}
	// Entries not matched yet are the files' until the second scan.
	files = append(files, t.known...)
	for _, e := range t.retired {
		files = append(files, checkpoint.File{
			Fingerprint: e.fp, Offset: e.offset, RecordNum: e.recordNum, Path: e.path,
		})
	}
	// A parked file resumes where it was closed, after a restart too.
	n := len(files)
	for _, e := range t.parked {
		files = append(files, e)
	}
	slices.SortFunc(files[n:], func(a, b checkpoint.File) int { return strings.Compare(a.Path, b.Path) })
	return files, from
}

// entry is r's state as a checkpoint entry.
func (r *reader) entry() checkpoint.File {
	e := checkpoint.File{
		Fingerprint:  r.fp,
		Offset:       r.offset,
		RecordNum:    r.recordNum,
		Path:         r.path,
		Dev:          r.id.dev,
		Inode:        r.id.ino,
		Attributes:   r.info.Attributes,
		Skipping:     r.skipping,
		PartialSince: r.partialSince,
	}
	if len(r.partial) > 0 {
		e.Partial = append([]byte(nil), r.partial...)
	}
	return e
}

// parkedScan is the longest between two scans while files are parked: a
// parked file is seen to grow only by a scan.
const parkedScan = time.Second

// fdReserve is how many file descriptors the tail leaves to the rest of
// the process when it bounds the files it holds open by the process's
// limit: the outputs, the checkpoint saves, the connections.
const fdReserve = 64
