package tail

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

func TestLines(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		cfg   func(*Config)
		want  []string
		trunc []bool
		stats func(Stats) bool
	}{
		{name: "plain", data: "a\nbb\n\nccc\n", want: []string{"a", "bb", "", "ccc"}},
		{name: "crlf", data: "a\r\nb\r\n\r\nc\rd\n", want: []string{"a", "b", "", "c\rd"}},
		{name: "invalid utf-8", data: "\xff\xfe\x00ok\n\xc3\x28\n", want: []string{"\xff\xfe\x00ok", "\xc3\x28"}},
		{name: "partial last line flushed at EOF", data: "a\nno newline", cfg: func(c *Config) { c.ExitOnEOF = true },
			want: []string{"a", "no newline"}},
		{name: "long line truncated", data: "short\n" + strings.Repeat("x", 25) + "\nafter\n",
			cfg:   func(c *Config) { c.MaxLineSize = 10 },
			want:  []string{"short", strings.Repeat("x", 10), "after"},
			trunc: []bool{false, true, false},
			stats: func(s Stats) bool { return s.TruncatedLines == 1 && s.SkippedLines == 0 }},
		{name: "long line skipped", data: "short\n" + strings.Repeat("x", 25) + "\nafter\n",
			cfg:   func(c *Config) { c.MaxLineSize = 10; c.SkipLongLines = true },
			want:  []string{"short", "after"},
			stats: func(s Stats) bool { return s.SkippedLines == 1 && s.TruncatedLines == 0 }},
		{name: "line of exactly max size with crlf", data: "0123456789\r\n",
			cfg: func(c *Config) { c.MaxLineSize = 10 }, want: []string{"0123456789"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testfs.Write(t, filepath.Join(dir, "a.log"), tt.data)
			cfg := fastConfig(filepath.Join(dir, "*.log"))
			cfg.ExitOnEOF = true
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			h := newHarness(t, cfg, nil)
			h.drain()
			var got []string
			for _, l := range h.lines {
				got = append(got, string(l.Bytes))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("lines = %q, want %q", got, tt.want)
			}
			for i, l := range h.lines {
				if tt.trunc != nil && l.Truncated != tt.trunc[i] {
					t.Errorf("line %d Truncated = %v", i, l.Truncated)
				}
				if l.RecordNum != int64(i+1) {
					t.Errorf("line %d RecordNum = %d", i, l.RecordNum)
				}
			}
			if tt.stats != nil && !tt.stats(h.tail.Stats()) {
				t.Errorf("stats = %+v", h.tail.Stats())
			}
		})
	}
}

func TestOffsetsAndAttributes(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, "one\ntwo\r\nthree\n")
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.ExitOnEOF = true
	cfg.Attributes = []string{checkpoint.AttrFileName, checkpoint.AttrFilePath, checkpoint.AttrFilePathResolved}
	h := newHarness(t, cfg, nil)
	h.drain()
	if len(h.lines) != 3 {
		t.Fatalf("lines = %q", h.text())
	}
	for i, off := range []int64{0, 4, 9} {
		if h.lines[i].Offset != off {
			t.Errorf("line %d offset = %d, want %d", i, h.lines[i].Offset, off)
		}
	}
	f := h.lines[0].File
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []checkpoint.Attr{
		{Key: checkpoint.AttrFileName, Value: "app.log"},
		{Key: checkpoint.AttrFilePath, Value: p},
		{Key: checkpoint.AttrFilePathResolved, Value: resolved},
	}
	if f.Name != "app.log" || f.Path != p || !slices.Equal(f.Attributes, want) {
		t.Errorf("file = %+v", f)
	}
}

func TestPartialLineFlushTimeout(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, "first\nhalf")
	h := newHarness(t, fastConfig(p), nil)
	h.until("first line", func() bool { return len(h.lines) >= 1 })
	if got := h.text(); !slices.Equal(got, []string{"a.log:first"}) {
		t.Fatalf("lines = %q", got)
	}
	// Still held: the checkpoint carries it.
	cp := h.tail.Checkpoint()
	if len(cp.Files) != 1 || string(cp.Files[0].Partial) != "half" || cp.Files[0].Offset != 10 {
		t.Fatalf("checkpoint = %+v", cp.Files)
	}
	h.until("flush of the partial line", func() bool { return len(h.lines) >= 2 })
	if got := h.text(); !slices.Equal(got, []string{"a.log:first", "a.log:half"}) {
		t.Fatalf("lines = %q", got)
	}
	testfs.Append(t, p, "more\n")
	h.until("next line", func() bool { return len(h.lines) >= 3 })
	if got := string(h.lines[2].Bytes); got != "more" {
		t.Fatalf("after flush got %q", got)
	}
}

func TestReadFromHead(t *testing.T) {
	for _, head := range []bool{false, true} {
		t.Run(map[bool]string{false: "tail", true: "head"}[head], func(t *testing.T) {
			dir := t.TempDir()
			old := filepath.Join(dir, "old.log")
			testfs.Write(t, old, "before-1\nbefore-2\n")
			cfg := fastConfig(filepath.Join(dir, "*.log"))
			cfg.ReadFromHead = head
			h := newHarness(t, cfg, nil)
			h.step()
			testfs.Append(t, old, "after\n")
			testfs.Write(t, filepath.Join(dir, "new.log"), "new-1\n") // found later: from the start
			h.until("both files", func() bool { return h.count()["after"] == 1 && h.count()["new-1"] == 1 })
			c := h.count()
			if head != (c["before-1"] == 1 && c["before-2"] == 1) || len(h.lines) != map[bool]int{false: 2, true: 4}[head] {
				t.Errorf("lines = %q", h.text())
			}
		})
	}
}

// TestCommitIsDurability checks the at-least-once rule: the checkpoint
// moves only on Commit, and a tail restarted from an older checkpoint reads
// the uncommitted lines again.
func TestCommitIsDurability(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, "1\n2\n")
	cfg := fastConfig(p)
	h := newHarness(t, cfg, nil)
	h.noAuto = true
	b, err := h.tail.Poll(context.Background())
	if err != nil || len(b.Lines) != 2 {
		t.Fatalf("Poll = %v, %v", b, err)
	}
	first := b.Cursor
	h.tail.Commit(first)
	testfs.Append(t, p, "3\n")
	b, err = h.tail.Poll(context.Background())
	if err != nil || len(b.Lines) != 1 {
		t.Fatalf("Poll = %v, %v", b, err)
	}
	// Not committed: the checkpoint still ends after "2".
	cp := h.tail.Checkpoint()
	if len(cp.Files) != 1 || cp.Files[0].Offset != 4 || cp.Files[0].RecordNum != 2 {
		t.Fatalf("checkpoint = %+v", cp.Files)
	}
	// A stale commit does not move it back later.
	later := b.Cursor
	h.tail.Commit(later)
	h.tail.Commit(first)
	if got := h.tail.Checkpoint().Files[0].Offset; got != 6 {
		t.Fatalf("offset after commits = %d, want 6", got)
	}

	// Restart from the older checkpoint: "3" comes again, with its number.
	old := &checkpoint.Checkpoint{Files: first.files}
	h2 := newHarness(t, cfg, old)
	h2.until("line 3", func() bool { return len(h2.lines) >= 1 })
	if l := h2.lines[0]; string(l.Bytes) != "3" || l.RecordNum != 3 || l.Offset != 4 || len(h2.lines) != 1 {
		t.Fatalf("after restart: %+v", h2.text())
	}
}

// TestRestartThroughStore saves checkpoints as the pipeline does and checks
// that a restart neither loses nor repeats lines, including a partial line
// and a fingerprint that grew past the file's first size.
func TestRestartThroughStore(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, "tiny\n") // shorter than the fingerprint
	store := checkpoint.NewStore(checkpoint.FileStorage{Path: filepath.Join(dir, "tail.db")})
	cfg := fastConfig(p)
	cfg.FlushTimeout = time.Hour

	h := newHarness(t, cfg, nil)
	h.until("tiny", func() bool { return len(h.lines) == 1 })
	testfs.Append(t, p, strings.Repeat("grow\n", 300)+"hal")
	h.until("growth", func() bool { return len(h.lines) == 301 })
	h.step()
	if err := store.Save(h.tail.Checkpoint()); err != nil {
		t.Fatal(err)
	}
	h.tail.Close()

	cp, format, err := store.Load()
	if err != nil || format != checkpoint.Protobuf {
		t.Fatalf("Load = %v, %v", format, err)
	}
	if f := cp.Files[0]; len(f.Fingerprint) != cfg.withDefaults(t).FingerprintSize || string(f.Partial) != "hal" {
		t.Fatalf("saved state: fingerprint %d bytes, partial %q", len(f.Fingerprint), f.Partial)
	}
	testfs.Append(t, p, "f\nnext\n")
	h2 := newHarness(t, cfg, cp)
	h2.until("resumed lines", func() bool { return len(h2.lines) >= 2 })
	h2.step()
	if got := h2.text(); !slices.Equal(got, []string{"a.log:half", "a.log:next"}) {
		t.Fatalf("after restart: %q", got)
	}
	if h2.lines[0].RecordNum != 302 || h2.lines[0].Offset != int64(5+300*5) {
		t.Errorf("resumed line: %+v", h2.lines[0])
	}
	if h2.tail.Stats().CheckpointResume != 1 {
		t.Errorf("stats = %+v", h2.tail.Stats())
	}
}

// TestCorruptCheckpoint: a truncated checkpoint is reported and the input
// starts as read_from_head says, reading everything.
func TestCorruptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, "1\n2\n")
	db := filepath.Join(dir, "tail.db")
	store := checkpoint.NewStore(checkpoint.FileStorage{Path: db})
	cfg := fastConfig(p)
	cfg.ExitOnEOF = true
	h := newHarness(t, cfg, nil)
	h.drain()
	if err := store.Save(h.tail.Checkpoint()); err != nil {
		t.Fatal(err)
	}
	raw := testfs.Read(t, db)
	testfs.Write(t, db, raw[:len(raw)/2])

	cp, _, err := store.Load()
	if !errors.Is(err, checkpoint.ErrCorrupt) || cp != nil {
		t.Fatalf("Load of a truncated checkpoint = %v, %v", cp, err)
	}
	h2 := newHarness(t, cfg, cp)
	h2.drain()
	if got := h2.text(); !slices.Equal(got, []string{"a.log:1", "a.log:2"}) {
		t.Fatalf("lines = %q", got)
	}
}

func TestExitOnEOF(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		testfs.Write(t, filepath.Join(dir, n+".log"), numbered(n, 0, 5000))
	}
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.ExitOnEOF = true
	cfg.MaxBatchBytes = 10 << 10 // many batches
	h := newHarness(t, cfg, nil)
	h.drain()
	seen := h.count()
	for _, n := range []string{"a", "b", "c"} {
		if m := missing(seen, n, 5000); len(m) > 0 {
			t.Fatalf("%d lines of %s missing, first %s", len(m), n, m[0])
		}
	}
	if len(h.lines) != 15000 {
		t.Errorf("%d lines, want 15000", len(h.lines))
	}
	if _, err := h.tail.Poll(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Poll after EOF = %v", err)
	}
}

func TestNoFilesExitOnEOF(t *testing.T) {
	cfg := fastConfig(filepath.Join(t.TempDir(), "*.log"))
	cfg.ExitOnEOF = true
	h := newHarness(t, cfg, nil)
	h.drain()
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Paths: []string{"[bad"}},
		{Paths: []string{"x"}, Attributes: []string{"log.file.size"}},
	} {
		if _, err := New(cfg, nil); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}

func TestUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.log"), filepath.Join(dir, "bad.log")
	testfs.Write(t, good, "g\n")
	testfs.Write(t, bad, "b\n")
	// Root reads files whatever their mode, so the refusal is injected.
	denied := true
	openFile = func(name string) (*os.File, error) {
		if name == bad && denied {
			return nil, &fs.PathError{Op: "open", Path: name, Err: syscall.EACCES}
		}
		return os.Open(name)
	}
	t.Cleanup(func() { openFile = os.Open })
	h := newHarness(t, fastConfig(filepath.Join(dir, "*.log")), nil)
	h.until("the readable file", func() bool { return len(h.lines) >= 1 })
	if got := h.text(); !slices.Equal(got, []string{"good.log:g"}) || h.tail.Stats().OpenErrors == 0 {
		t.Fatalf("lines %q, stats %+v", got, h.tail.Stats())
	}
	// Once it can be read, it is read in full.
	denied = false
	h.until("the file once readable", func() bool { return h.count()["b"] == 1 })
}

func TestFileShrinks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, "old-1\nold-2\nold-3\n")
	h := newHarness(t, fastConfig(p), nil)
	h.until("old lines", func() bool { return len(h.lines) == 3 })
	testfs.Write(t, p, "new\n") // truncates, shorter
	h.until("new line", func() bool { return h.count()["new"] == 1 })
	// Truncated and rewritten longer than before between two polls.
	testfs.Write(t, p, "rewritten-1\nrewritten-2\nrewritten-3\n")
	h.until("rewritten lines", func() bool { return h.count()["rewritten-3"] == 1 })
	if got := h.count(); got["rewritten-1"] != 1 || got["old-1"] != 1 || h.tail.Stats().Truncations < 2 {
		t.Fatalf("lines %q stats %+v", h.text(), h.tail.Stats())
	}
}

// TestHugeLine reads a 10 MiB line between ordinary lines, written in one
// go and in pieces over several polls.
func TestHugeLine(t *testing.T) {
	huge := bytes.Repeat([]byte("0123456789abcdef"), 10<<20/16)
	for _, skip := range []bool{false, true} {
		for _, pieces := range []int{1, 7} {
			name := map[bool]string{false: "truncate", true: "skip"}[skip] + "/pieces=" + string(rune('0'+pieces))
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "a.log")
				testfs.Write(t, p, "before\n")
				cfg := fastConfig(p)
				cfg.SkipLongLines = skip
				cfg.FlushTimeout = time.Hour
				h := newHarness(t, cfg, nil)
				h.until("first line", func() bool { return len(h.lines) == 1 })
				step := len(huge) / pieces
				for i := 0; i < len(huge); i += step {
					testfs.Append(t, p, string(huge[i:min(i+step, len(huge))]))
					h.step()
				}
				testfs.Append(t, p, "\nafter\n")
				h.until("last line", func() bool { return h.count()["after"] == 1 })
				want := []string{"before", "after"}
				if !skip {
					want = []string{"before", string(huge[:DefaultMaxLineSize]), "after"}
				}
				var got []string
				for _, l := range h.lines {
					got = append(got, string(l.Bytes))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("got %d lines (lengths %v)", len(got), lens(got))
				}
				if !skip && (!h.lines[1].Truncated || h.lines[1].Offset != 7) {
					t.Errorf("huge line: truncated %v offset %d", h.lines[1].Truncated, h.lines[1].Offset)
				}
				s := h.tail.Stats()
				if skip && s.SkippedLines != 1 || !skip && s.TruncatedLines != 1 {
					t.Errorf("stats = %+v", s)
				}
			})
		}
	}
}

func lens(s []string) []int {
	var n []int
	for _, x := range s {
		n = append(n, len(x))
	}
	return n
}

// TestResumeReadsNewFilesFromStart: a file that appeared after the last
// saved checkpoint may have had lines delivered before a crash. Resuming,
// it is read from its start even without ReadFromHead.
func TestResumeReadsNewFilesFromStart(t *testing.T) {
	dir := t.TempDir()
	testfs.Write(t, filepath.Join(dir, "a.log"), "a-old\n")
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.ReadFromHead = false
	h := newHarness(t, cfg, nil)
	h.step()
	cp := h.tail.Checkpoint() // a.log, at its end
	if len(cp.Files) != 1 || cp.Files[0].Offset != 6 || len(h.lines) != 0 {
		t.Fatalf("fresh start: lines %q, checkpoint %+v", h.text(), cp.Files)
	}
	h.noAuto = true // the crash: what follows is never committed
	testfs.Write(t, filepath.Join(dir, "b.log"), "b-1\n")
	testfs.Append(t, filepath.Join(dir, "a.log"), "a-1\n")
	h.until("delivery before the crash", func() bool { return len(h.lines) == 2 })
	h.tail.Close()

	h2 := newHarness(t, cfg, h.tail.Checkpoint())
	h2.until("both lines again", func() bool { return len(h2.lines) == 2 })
	h2.step()
	if c := h2.count(); len(h2.lines) != 2 || c["a-1"] != 1 || c["b-1"] != 1 {
		t.Fatalf("after restart: %q", h2.text())
	}
}

// TestInvalidUTF8Path: Linux paths need not be UTF-8; the checkpoint keeps
// them exactly, so the file resumes after a restart.
func TestInvalidUTF8Path(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad-\xff\xfe.log")
	testfs.Write(t, p, "1\n")
	store := checkpoint.NewStore(checkpoint.FileStorage{Path: filepath.Join(dir, "tail.db")})
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	h := newHarness(t, cfg, nil)
	h.until("line 1", func() bool { return len(h.lines) == 1 })
	if err := store.Save(h.tail.Checkpoint()); err != nil {
		t.Fatal(err)
	}
	h.tail.Close()
	cp, _, err := store.Load()
	if err != nil || len(cp.Files) != 1 || cp.Files[0].Path != p || cp.Files[0].Attributes[0].Value != "bad-\xff\xfe.log" {
		t.Fatalf("Load = %+v, %v", cp, err)
	}
	testfs.Append(t, p, "2\n")
	h2 := newHarness(t, cfg, cp)
	h2.until("line 2", func() bool { return len(h2.lines) == 1 })
	if got := h2.text(); !slices.Equal(got, []string{"bad-\xff\xfe.log:2"}) {
		t.Fatalf("after restart: %q", got)
	}
}

func TestFingerprintSize(t *testing.T) {
	dir := t.TempDir()
	testfs.Write(t, filepath.Join(dir, "a.log"), "0123456789abcdef\n")
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.FingerprintSize = 10
	h := newHarness(t, cfg, nil)
	h.until("the line", func() bool { return len(h.lines) == 1 })
	if fp := h.tail.Checkpoint().Files[0].Fingerprint; string(fp) != "0123456789" {
		t.Fatalf("fingerprint = %q", fp)
	}
}

// TestMaxBatchLines checks that short lines cannot make a huge batch: a
// few megabytes of empty lines would otherwise be millions of records in
// one batch. Every line still arrives, once, with its offset and number.
func TestMaxBatchLines(t *testing.T) {
	dir := t.TempDir()
	const n = 100000
	testfs.Write(t, filepath.Join(dir, "e.log"), strings.Repeat("\n", n-1)+"last\n")
	cfg := fastConfig(filepath.Join(dir, "e.log"))
	cfg.ExitOnEOF = true
	cfg.MaxBatchLines = 1000
	h := newHarness(t, cfg, nil)
	biggest := 0
	for {
		k, err := h.poll()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		biggest = max(biggest, k)
	}
	if biggest > 1000 {
		t.Errorf("a batch had %d lines, want at most 1000", biggest)
	}
	if len(h.lines) != n {
		t.Fatalf("%d lines, want %d", len(h.lines), n)
	}
	for i, l := range h.lines {
		if l.Offset != int64(i) || l.RecordNum != int64(i+1) {
			t.Fatalf("line %d: offset %d, record %d", i, l.Offset, l.RecordNum)
		}
	}
	if got := string(h.lines[n-1].Bytes); got != "last" {
		t.Errorf("last line = %q", got)
	}
}

// TestFingerprintWhenBatchFull checks that a file that was empty when
// opened (or was truncated) gets its fingerprint even when its first read
// stops at the batch bound: a checkpoint entry without one matches any
// file on restart (a rotated copy, say), which the simulated crash test
// showed as a line delivered twice.
func TestFingerprintWhenBatchFull(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, "")
	cfg := fastConfig(p)
	cfg.MaxBatchLines = 10
	h := newHarness(t, cfg, nil)
	h.step()
	testfs.Append(t, p, numbered("line", 0, 1000))
	if n, err := h.poll(); err != nil || n != 10 {
		t.Fatalf("poll: %d lines, %v; want 10", n, err)
	}
	cp := h.tail.Checkpoint()
	if len(cp.Files) != 1 || len(cp.Files[0].Fingerprint) != DefaultFingerprintSize {
		t.Fatalf("checkpoint %+v: want one file with a %d-byte fingerprint", cp.Files, DefaultFingerprintSize)
	}
}
