package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
)

// writeFiles writes n files of one numbered line each, f000.log …, and
// returns the glob that matches them.
func writeFiles(t *testing.T, dir string, n int, prefix string) string {
	t.Helper()
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("f%03d.log", i))
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "%s-%06d\n", prefix, i)
		f.Close()
	}
	return filepath.Join(dir, "*.log")
}

// TestFilesInTurn: more files than MaxConcurrentFiles are read in turn,
// never more open at once, each line once: files read to their end are
// closed and opened again, resuming where they were, when they grow, and
// a restart from the checkpoint resumes the closed files too. ExitOnEOF
// waits for every file. Past the limit the rest were never read, and
// exit_on_eof ended the run with them unread.
func TestFilesInTurn(t *testing.T) {
	const n, limit = 50, 7
	dir := t.TempDir()
	cfg := fastConfig(writeFiles(t, dir, n, "a"))
	cfg.MaxConcurrentFiles = limit
	h := newHarness(t, cfg, nil)
	h.until("the first lines", func() bool {
		if f := h.tail.Stats().Files; f > limit {
			t.Fatalf("%d files open, limit %d", f, limit)
		}
		return len(h.lines) >= n
	})
	writeFiles(t, dir, n, "b")
	h.until("the appended lines", func() bool {
		if f := h.tail.Stats().Files; f > limit {
			t.Fatalf("%d files open, limit %d", f, limit)
		}
		return len(h.lines) >= 2*n
	})
	for i := range 5 {
		h.step() // nothing more comes
		_ = i
	}
	seen := h.count()
	for _, p := range []string{"a", "b"} {
		if m := missing(seen, p, n); len(m) > 0 {
			t.Errorf("missing %v", m)
		}
	}
	if len(h.lines) != 2*n {
		t.Errorf("%d lines, want %d: some read twice", len(h.lines), 2*n)
	}
	cp := h.tail.Checkpoint()
	if len(cp.Files) != n {
		t.Errorf("the checkpoint has %d files, want %d", len(cp.Files), n)
	}
	h.tail.Close()

	// A restart: only what was appended since.
	writeFiles(t, dir, n, "c")
	cfg.ExitOnEOF = true
	h2 := newHarness(t, cfg, cp)
	h2.drain()
	if seen := h2.count(); len(h2.lines) != n || len(missing(seen, "c", n)) > 0 {
		t.Errorf("after a restart: %d lines, missing %v; want the %d appended, once each", len(h2.lines), missing(seen, "c", n), n)
	}
}

// TestOutOfFileDescriptors: when opening a file fails with EMFILE the
// files open are read and the rest in turn, each line once, and ExitOnEOF
// waits for them. They were counted as open errors, retried at the next
// scan, and never read.
func TestOutOfFileDescriptors(t *testing.T) {
	const n, fds = 40, 9
	dir := t.TempDir()
	cfg := fastConfig(writeFiles(t, dir, n, "a"))
	cfg.ExitOnEOF = true
	open := 0
	openFile = func(name string) (*os.File, error) {
		if open >= fds {
			return nil, &os.PathError{Op: "open", Path: name, Err: syscall.EMFILE}
		}
		f, err := os.Open(name)
		if err == nil {
			open++
		}
		return f, err
	}
	defer func() { openFile = os.Open }()
	h := newHarness(t, cfg, nil)
	h.tail.limit = 1 << 30 // as if the descriptor limit were unknown
	for range 10000 {
		if _, err := h.poll(); err != nil {
			break
		}
		open = h.tail.Stats().Files // what park closed is closed
	}
	if m := missing(h.count(), "a", n); len(m) > 0 || len(h.lines) != n {
		t.Errorf("%d lines, missing %v; want %d once each", len(h.lines), m, n)
	}
	if e := h.tail.Stats().OpenErrors; e != 0 {
		t.Errorf("%d open errors counted", e)
	}
}

// TestParkedKeepsUnfinishedLine: a file whose last line is unfinished is
// not closed for another's turn: flush_timeout emits the line. Parked, it
// waited for the file to grow, for ever.
func TestParkedKeepsUnfinishedLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.log"), []byte("a1\nlast"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.log"), []byte("b1\n"), 0o644)
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.MaxConcurrentFiles = 1
	h := newHarness(t, cfg, nil)
	h.until("every line", func() bool {
		c := h.count()
		return c["a1"] == 1 && c["last"] == 1 && c["b1"] == 1
	})
}

// TestRestartWaitingFileKeepsItsEntry: after a restart with files waiting
// their turn, a new file that starts with the bytes of a waiting file does
// not take that file's checkpoint entry: each file's lines once. The new
// file resumed past its own first line, and the waiting one was read
// again.
func TestRestartWaitingFileKeepsItsEntry(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f001.log"), []byte("same\n"), 0o644)
	cfg := fastConfig(filepath.Join(dir, "*.log"))
	cfg.MaxConcurrentFiles = 1
	h := newHarness(t, cfg, nil)
	h.until("f001", func() bool { return len(h.lines) == 1 })
	cp := h.tail.Checkpoint()
	h.tail.Close()
	os.WriteFile(filepath.Join(dir, "f000.log"), []byte("same\nx1\n"), 0o644)
	cfg.ExitOnEOF = true
	h2 := newHarness(t, cfg, cp)
	h2.drain()
	if got := fmt.Sprint(h2.text()); got != "[f000.log:same f000.log:x1]" {
		t.Errorf("after the restart: %s", got)
	}
}

// TestParkedRenamedDuringScan: a file closed for another's turn is renamed
// within the patterns while a scan lists the files, so that the scan sees
// it under neither name. It must still resume where it was closed when a
// later scan finds it grown, rather than be read from its start.
func TestParkedRenamedDuringScan(t *testing.T) {
	dir := t.TempDir()
	cfg := fastConfig(writeFiles(t, dir, 2, "a"))
	cfg.MaxConcurrentFiles = 1
	h := newHarness(t, cfg, nil)
	h.until("both files", func() bool { return len(h.lines) == 2 && len(h.tail.parked) == 1 })
	var parked string
	for _, e := range h.tail.parked {
		parked = e.Path
	}
	moved := filepath.Join(dir, "moved.log")
	renamed := false
	statFile = func(name string) (os.FileInfo, error) {
		if name == parked && !renamed {
			renamed = true
			if err := os.Rename(parked, moved); err != nil {
				t.Error(err)
			}
		}
		return os.Stat(name)
	}
	t.Cleanup(func() { statFile = os.Stat })
	h.until("the rename", func() bool { return renamed })
	testfs.Append(t, moved, "after\n")
	h.until("the line after the rename", func() bool { return h.count()["after"] == 1 })
	for range 5 {
		h.step()
	}
	if c := h.count(); len(h.lines) != 3 || c["a-000000"] != 1 || c["a-000001"] != 1 {
		t.Errorf("lines %q, want each once", h.text())
	}
}
