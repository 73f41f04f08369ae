package tail

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
)

// A rotation is what a writer does to its file every so many lines: it
// returns the file to write on, or nil to create the path anew.
type rotation func(gen int, f *os.File) *os.File

// moveCreate closes the file, renames it to path.GEN and pauses; the
// writer then creates path anew.
func moveCreate(t *testing.T, path string, pause time.Duration) rotation {
	return func(gen int, f *os.File) *os.File {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
		if err := os.Rename(path, fmt.Sprintf("%s.%d", path, gen)); err != nil {
			t.Error(err)
		}
		time.Sleep(pause)
		return nil
	}
}

// copyTruncate is logrotate's copytruncate: it copies the file to path.GEN
// and truncates it; the writer keeps its O_APPEND file.
func copyTruncate(t *testing.T, path string) rotation {
	return func(gen int, f *os.File) *os.File {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(fmt.Sprintf("%s.%d", path, gen), data, 0o644); err != nil {
			t.Error(err)
		}
		if err := f.Truncate(0); err != nil {
			t.Error(err)
		}
		return f
	}
}

// writer appends numbered lines to path from a goroutine, rotating the file
// every `every` lines with rotate, and pausing now and then so that the
// tail runs alongside.
func writer(t *testing.T, path string, n, every int, rotate rotation) (wait func()) {
	t.Helper()
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Error(err)
		}
		return f
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f := open()
		for i := range n {
			if i > 0 && i%every == 0 {
				f = rotate(i/every, f)
				if f == nil {
					f = open()
				}
			}
			// Lines are long enough that a generation passes the
			// fingerprint size.
			if _, err := fmt.Fprintf(f, "line-%06d %s\n", i, strings.Repeat("x", 40)); err != nil {
				t.Error(err)
				return
			}
			if i%100 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}()
	return wg.Wait
}

// checkAll fails unless every numbered line was seen at least once, and
// returns the number of duplicates.
func checkAll(t *testing.T, h *harness, n int) int {
	t.Helper()
	seen := map[string]int{}
	for _, l := range h.lines {
		seen[strings.Fields(string(l.Bytes))[0]]++
	}
	if m := missing(seen, "line", n); len(m) > 0 {
		t.Fatalf("%d of %d lines lost, first %s", len(m), n, m[0])
	}
	return len(h.lines) - n
}

func seenAll(h *harness, n int) func() bool {
	return func() bool {
		if len(h.lines) < n {
			return false
		}
		seen := map[string]bool{}
		for _, l := range h.lines {
			seen[strings.Fields(string(l.Bytes))[0]] = true
		}
		return len(seen) >= n
	}
}

func TestRotationUnderLoad(t *testing.T) {
	const n, every = 20000, 3000
	tests := []struct {
		name    string
		pattern string
		rotate  func(t *testing.T, path string) rotation
		noDups  bool
	}{
		{
			// The rotated files are not matched: each is drained until
			// rotate_wait expires. The pause gives the tail a poll to see
			// the new file under the old name; otherwise a generation
			// could pass unseen. (20 ms, four polls, was not enough under
			// go test -race on two busy cores: a generation was lost.)
			name: "move-create", pattern: "app.log", noDups: true,
			rotate: func(t *testing.T, path string) rotation { return moveCreate(t, path, 100*time.Millisecond) },
		},
		{
			// The rotated files are matched too, under new names.
			name: "move-create matched", pattern: "app.log*", noDups: true,
			rotate: func(t *testing.T, path string) rotation { return moveCreate(t, path, 0) },
		},
		{name: "copy-truncate", pattern: "app.log*", rotate: copyTruncate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "app.log")
			testfs.Write(t, p, "")
			cfg := fastConfig(filepath.Join(dir, tt.pattern))
			cfg.RotateWait = 300 * time.Millisecond
			h := newHarness(t, cfg, nil)
			h.step()
			wait := writer(t, p, n, every, tt.rotate(t, p))
			h.until("every line", seenAll(h, n))
			wait()
			// Let rotations and rescans settle, then count.
			deadline := time.Now().Add(cfg.RotateWait + 2*cfg.RefreshInterval)
			for time.Now().Before(deadline) {
				h.step()
			}
			dups := checkAll(t, h, n)
			t.Logf("%d lines, %d duplicates, stats %+v", len(h.lines), dups, h.tail.Stats())
			if tt.noDups && dups != 0 {
				t.Errorf("%d duplicates", dups)
			}
		})
	}
}

// TestSameFirstBytes is the Collector bug: two different files whose first
// 1,000 bytes are equal (Debian's messages and syslog) must both be read,
// also across a restart.
func TestSameFirstBytes(t *testing.T) {
	dir := t.TempDir()
	header := strings.Repeat("Nov 29 21:00:00 host kernel: boot message\n", 30) // > 1,000 bytes
	testfs.Write(t, filepath.Join(dir, "messages"), header+"messages-1\n")
	cfg := fastConfig(filepath.Join(dir, "*"))
	h := newHarness(t, cfg, nil)
	h.until("messages", func() bool { return h.count()["messages-1"] == 1 })
	// syslog appears later, with the same first bytes.
	testfs.Write(t, filepath.Join(dir, "syslog"), header+"syslog-1\n")
	h.until("syslog", func() bool { return h.count()["syslog-1"] == 1 })
	if c := h.count(); c["Nov 29 21:00:00 host kernel: boot message"] != 60 {
		t.Fatalf("header lines seen %d times, want 60", c["Nov 29 21:00:00 host kernel: boot message"])
	}
	cp := h.tail.Checkpoint()
	if len(cp.Files) != 2 {
		t.Fatalf("checkpoint tracks %d files", len(cp.Files))
	}
	h.tail.Close()

	// Restart: each file resumes from its own entry.
	testfs.Append(t, filepath.Join(dir, "messages"), "messages-2\n")
	testfs.Append(t, filepath.Join(dir, "syslog"), "syslog-2\n")
	h2 := newHarness(t, cfg, cp)
	h2.until("both", func() bool { return len(h2.lines) >= 2 })
	h2.step()
	c := h2.count()
	if len(h2.lines) != 2 || c["messages-2"] != 1 || c["syslog-2"] != 1 {
		t.Fatalf("after restart: %q", h2.text())
	}
	for _, l := range h2.lines {
		if want := strings.TrimSuffix(string(l.Bytes), "-2"); l.File.Name != want {
			t.Errorf("line %q attributed to %s", l.Bytes, l.File.Name)
		}
	}
}

// TestDeletedWhileReading deletes a file that is half read: the open
// descriptor is read to the end.
func TestDeletedWhileReading(t *testing.T) {
	const n = 50000
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, numbered("line", 0, n))
	cfg := fastConfig(p)
	cfg.MaxBatchBytes = 32 << 10 // many polls
	h := newHarness(t, cfg, nil)
	h.step()
	if len(h.lines) == 0 || len(h.lines) >= n {
		t.Fatalf("first poll read %d lines", len(h.lines))
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	h.until("the rest of the deleted file", func() bool { return len(h.lines) >= n })
	h.until("the file to be closed", func() bool { return h.tail.Stats().Files == 0 })
	if m := missing(h.count(), "line", n); len(m) > 0 || len(h.lines) != n {
		t.Fatalf("%d lines, %d missing", len(h.lines), len(m))
	}
	if got := len(h.tail.Checkpoint().Files); got != 0 {
		t.Errorf("checkpoint still tracks %d files", got)
	}
}

// copiedLog writes lines 0 to n-1 to app.log in a new directory and
// returns its path and a fast config that tails it and its copies
// (app.log*), for the copy-truncate tests.
func copiedLog(t *testing.T, n int) (string, Config) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, numbered("line", 0, n))
	return p, fastConfig(filepath.Join(dir, "app.log*"))
}

// TestCopyTruncateWhileStopped: the file was copied and truncated while no
// tail ran. The copy (new inode, same first bytes) resumes at the saved
// offset; the truncated original is read from its start.
func TestCopyTruncateWhileStopped(t *testing.T) {
	p, cfg := copiedLog(t, 100)
	cfg.ReadFromHead = false
	h := newHarness(t, cfg, nil)
	h.step()
	testfs.Append(t, p, numbered("line", 100, 200))
	h.until("lines 100-199", func() bool { return len(h.lines) == 100 })
	cp := h.tail.Checkpoint()
	h.tail.Close()

	testfs.Append(t, p, numbered("line", 200, 300)) // unread when stopped
	testfs.Write(t, p+".1", testfs.Read(t, p))
	testfs.Write(t, p, numbered("line", 300, 310)) // truncated, new content

	h2 := newHarness(t, cfg, cp)
	h2.until("lines 200-309", func() bool { return len(h2.lines) >= 110 })
	h2.step()
	c := h2.count()
	if len(h2.lines) != 110 || len(missing(c, "line", 310)) != 200 {
		t.Fatalf("after restart read %d lines: %q…", len(h2.lines), h2.text()[:3])
	}
}

// TestMoveCreateBetweenScans: with scans far apart, a rotation is still
// followed at once, even when the path was empty for a moment.
func TestMoveCreateBetweenScans(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, "gen-0\n")
	cfg := fastConfig(p)
	cfg.RefreshInterval = time.Hour
	cfg.RotateWait = time.Hour
	h := newHarness(t, cfg, nil)
	h.until("first file", func() bool { return len(h.lines) == 1 })
	for gen := 1; gen <= 3; gen++ {
		if err := os.Rename(p, fmt.Sprintf("%s.%d", p, gen)); err != nil {
			t.Fatal(err)
		}
		h.step() // sees the path empty
		h.step()
		testfs.Write(t, p, fmt.Sprintf("gen-%d\n", gen))
		h.until(fmt.Sprintf("generation %d", gen), func() bool { return len(h.lines) == gen+1 })
	}
	if s := h.tail.Stats(); s.Files != 4 || s.Rotations != 3 {
		t.Errorf("stats = %+v", s)
	}
}

// TestCopySeenBeforeTruncate: a scan that lands between the copy and the
// truncation must not read the copy from its start.
func TestCopySeenBeforeTruncate(t *testing.T) {
	p, cfg := copiedLog(t, 100)
	cfg.RotateWait = time.Hour // only the truncation may decide
	h := newHarness(t, cfg, nil)
	h.until("first lines", func() bool { return len(h.lines) == 100 })
	testfs.Append(t, p, numbered("line", 100, 120)) // not read before the copy
	testfs.Write(t, p+".1", testfs.Read(t, p))
	deadline := time.Now().Add(3 * cfg.RefreshInterval)
	for time.Now().Before(deadline) {
		h.step()
	}
	if h.tail.Stats().Files != 2 {
		t.Fatalf("the copy was not found: %+v", h.tail.Stats())
	}
	testfs.Write(t, p, numbered("line", 120, 130)) // the truncation, and new lines
	h.until("all lines", func() bool { return len(missing(h.count(), "line", 130)) == 0 })
	h.step()
	if len(h.lines) != 130 {
		t.Fatalf("%d lines for 130: the copy was read twice", len(h.lines))
	}
}

// TestCopyTruncateHeldLine: the file is copied and truncated while the
// tail holds the start of a line whose rest was written just before the
// copy. With the copy matched, the line comes once, whole, from the copy;
// it came in two pieces, the start emitted at the truncation and the rest
// read from the copy as a line of its own. Without the copy, the start is
// emitted as it is, as before.
func TestCopyTruncateHeldLine(t *testing.T) {
	for _, tt := range []struct {
		name    string
		pattern string
		want    []string
	}{
		{"copy matched", "app.log*", []string{"app.log.1:line-000100 half"}},
		{"copy not matched", "app.log", []string{"app.log:line-000100 hal"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, cfg := copiedLog(t, 100)
			cfg.Paths = []string{filepath.Join(filepath.Dir(p), tt.pattern)}
			cfg.FlushTimeout = time.Hour // only the truncation may emit the start
			testfs.Append(t, p, "line-000100 hal")
			h := newHarness(t, cfg, nil)
			h.until("the first lines", func() bool { return len(h.lines) == 100 })
			h.step()
			testfs.Append(t, p, "f\n")
			testfs.Write(t, p+".1", testfs.Read(t, p))
			testfs.Write(t, p, numbered("line", 200, 210))
			h.until("the new content", func() bool { return h.count()["line-000209"] == 1 })
			for range 3 * int(cfg.RefreshInterval/cfg.PollInterval) {
				h.step()
			}
			var got []string
			for _, l := range h.text()[100:] {
				if !strings.HasPrefix(l, "app.log:line-0002") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tt.want) || len(h.lines) != 111 {
				t.Errorf("%d lines, besides lines 0-99 and the new content %q; want %q", len(h.lines), got, tt.want)
			}
		})
	}
}

// TestCopyInProgressAtStart: a restart finds the original truncated since
// the checkpoint and being copied again (copy-truncate), before its
// truncation. The first scan opens both, and the copy must be held until
// the original is truncated, then read on from where the original got
// to. The original, not read yet, did not count as a file that a copy
// could be of, and both were read in full: a generation twice.
func TestCopyInProgressAtStart(t *testing.T) {
	p, cfg := copiedLog(t, 100)
	h := newHarness(t, cfg, nil)
	h.until("the first generation", func() bool { return len(h.lines) == 100 })
	cp := h.tail.Checkpoint()
	h.tail.Close()
	// While stopped: rotated, written, and copied for the next rotation.
	testfs.Write(t, p+".1", testfs.Read(t, p))
	testfs.Write(t, p, numbered("line", 100, 200))
	testfs.Write(t, p+".2", testfs.Read(t, p))

	h2 := newHarness(t, cfg, cp)
	h2.step()
	testfs.Write(t, p, numbered("line", 200, 210)) // the truncation
	h2.until("the third generation", func() bool { return h2.count()["line-000209"] == 1 })
	for range 3 * int(cfg.RotateWait/cfg.PollInterval) {
		h2.step()
	}
	c := h2.count()
	if len(h2.lines) != 110 || len(missing(c, "line", 210)) != 100 {
		t.Errorf("%d lines, %d of lines 100-209 missing; want lines 100-209 once", len(h2.lines), len(missing(c, "line", 210))-100)
	}
}

// TestCopyCompletedWhileOpening: a scan opens the copy while logrotate is
// still writing it (copy-truncate), and the copy is finished and the
// original truncated before the scan decides where the copy starts. What
// the open saw (a copy shorter than the original's offset) must not make
// it a new file: it was read from its start, every line of it again.
func TestCopyCompletedWhileOpening(t *testing.T) {
	p, cfg := copiedLog(t, 100) // 1,200 bytes
	cfg.RotateWait = time.Hour  // only the truncation may decide
	h := newHarness(t, cfg, nil)
	h.until("the first lines", func() bool { return len(h.lines) == 100 })
	old := testfs.Read(t, p)
	testfs.Write(t, p+".1", old[:1100]) // past the fingerprint, short of the offset
	testfs.Write(t, p+".z", "z-1\n")    // opened after the copy by the same scan
	openFile = func(name string) (*os.File, error) {
		if name == p+".z" {
			testfs.Write(t, p+".1", old)
			testfs.Write(t, p, numbered("line", 200, 210)) // the truncation
		}
		return os.Open(name)
	}
	t.Cleanup(func() { openFile = os.Open })
	h.until("the new content", func() bool { c := h.count(); return c["line-000209"] == 1 && c["z-1"] == 1 })
	for range 3 * int(cfg.RefreshInterval/cfg.PollInterval) {
		h.step()
	}
	if c := h.count(); len(h.lines) != 111 || c["line-000000"] != 1 {
		t.Errorf("%d lines for 111, line-000000 %d times", len(h.lines), c["line-000000"])
	}
}

// TestRewrittenAfterRead: the file is truncated and written past the old
// offset just after the tail read it, before the tail took the
// fingerprint of what it read. The fingerprint must be the first bytes of
// the content read, or the new content looks like the old one read on:
// it was taken from the new content, which was then read from the old
// offset, the lines before it lost.
func TestRewrittenAfterRead(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, "")
	h := newHarness(t, fastConfig(p), nil)
	h.step() // open while empty: no fingerprint yet
	testfs.Write(t, p, numbered("line", 0, 100))
	rewritten := false
	readAt = func(f *os.File, b []byte, off int64) (int, error) {
		n, err := f.ReadAt(b, off)
		if !rewritten {
			rewritten = true
			testfs.Write(t, p, numbered("line", 100, 300)) // longer
		}
		return n, err
	}
	t.Cleanup(func() { readAt = (*os.File).ReadAt })
	h.until("the new content", func() bool { return h.count()["line-000299"] == 1 })
	h.step()
	if m := missing(h.count(), "line", 300); len(m) > 0 || len(h.lines) != 300 {
		t.Errorf("%d lines for 300, %d missing, first %v", len(h.lines), len(m), m[:min(len(m), 1)])
	}
}
