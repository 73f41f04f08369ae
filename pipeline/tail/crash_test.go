package tail

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

// TestSimulatedCrashes runs the pipeline's loop (poll, deliver, commit,
// save) against a writer that rotates its file, and "crashes" it 25 times:
// the tail is abandoned after delivering a batch it never committed, and a
// new one starts from the saved checkpoint. Every line must be delivered,
// whole, and delivered again only as often as batches that held it were
// not committed: never after a committed delivery.
func TestSimulatedCrashes(t *testing.T) {
	for _, rotation := range []string{"move-create", "copy-truncate"} {
		t.Run(rotation, func(t *testing.T) { simulateCrashes(t, rotation) })
	}
}

func simulateCrashes(t *testing.T, rotation string) {
	const n, every, kills = 20000, 4000, 25
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, "")
	rotate := moveCreate(t, p, 0)
	if rotation == "copy-truncate" {
		rotate = copyTruncate(t, p)
	}
	wait := writer(t, p, n, every, rotate)
	writerDone := make(chan struct{})
	go func() { wait(); close(writerDone) }()

	store := checkpoint.NewStore(checkpoint.FileStorage{Path: filepath.Join(dir, "tail.db")})
	cfg := fastConfig(filepath.Join(dir, "app.log*"))
	// The writer writes whole lines, but the kernel may show one that
	// spans two pages in two steps, and on a loaded machine the writer may
	// stop in between for longer than the 60 ms of fastConfig: the tail
	// then rightly emits the start as a line. No line is unfinished for an
	// hour, so a piece delivered is a defect.
	cfg.FlushTimeout = time.Hour
	rng := rand.New(rand.NewPCG(1, 2))
	// Every delivery of every line, so that a failure says which lines
	// came again, from which file and offset, in which life.
	type delivery struct {
		life      int
		file      string
		offset    int64
		committed bool
	}
	got := map[string][]delivery{}
	seen := map[string]int{}
	// history has a line per batch: its runs of lines from one file,
	// printed when the test fails.
	var history []string
	delivered, uncommitted := 0, 0
	deliver := func(b *Batch, life int, committed bool) {
		h := fmt.Sprintf("life %d committed=%v:", life, committed)
		for i, l := range b.Lines {
			text := string(l.Bytes)
			key, _, _ := strings.Cut(text, " ")
			if text != key+" "+strings.Repeat("x", 40) {
				key = text // not a whole line: reported as such
			}
			got[key] = append(got[key], delivery{life, l.File.Name, l.Offset, committed})
			seen[key]++
			if i == 0 || l.File != b.Lines[i-1].File {
				h += fmt.Sprintf(" %s %s@%d", l.File.Name, key, l.Offset)
			}
			if i == len(b.Lines)-1 || l.File != b.Lines[i+1].File {
				h += fmt.Sprintf("-%s@%d", key, l.Offset)
			}
		}
		history = append(history, h)
		delivered += len(b.Lines)
		if !committed {
			uncommitted += len(b.Lines)
		}
	}
	done := func() bool {
		select {
		case <-writerDone:
			return len(missing(seen, "line", n)) == 0
		default:
			return false
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for life := 0; life < kills || !done(); life++ {
		if time.Now().After(deadline) {
			m := missing(seen, "line", n)
			t.Errorf("after %d lives, %d lines still missing, first %s", life, len(m), m[0])
			break
		}
		cp, _, err := store.Load()
		if err != nil {
			t.Fatal(err)
		}
		tl, err := New(cfg, cp)
		if err != nil {
			t.Fatal(err)
		}
		polls := 1 + rng.IntN(8)
		for i := range polls {
			b, err := tl.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			crash := i == polls-1 && life < kills // the batch is never committed
			deliver(b, life, !crash)
			if crash {
				break
			}
			tl.Commit(b.Cursor)
			if err := store.Save(tl.Checkpoint()); err != nil {
				t.Fatal(err)
			}
		}
		tl.Close()
	}
	t.Logf("%d lines delivered, %d duplicates, %d lines in uncommitted batches", delivered, delivered-n, uncommitted)
	// A line may come again once for each uncommitted batch that held it,
	// and no more: one that comes again after a committed delivery was
	// read again from before the checkpoint.
	var again, pieces []string
	for key, ds := range got {
		if !strings.HasPrefix(key, "line-") || len(key) != len("line-000000") {
			pieces = append(pieces, fmt.Sprintf("%q %+v", key, ds))
			continue
		}
		if c := slices.IndexFunc(ds, func(d delivery) bool { return d.committed }); c >= 0 && c < len(ds)-1 {
			again = append(again, fmt.Sprintf("%s %+v", key, ds))
		}
	}
	slices.Sort(again)
	if len(again) > 0 {
		t.Errorf("%d lines read again after a committed delivery, first %s", len(again), again[0])
	}
	slices.Sort(pieces)
	if len(pieces) > 0 {
		t.Errorf("%d pieces of lines delivered: %s", len(pieces), strings.Join(pieces[:min(len(pieces), 4)], "; "))
	}
	if t.Failed() {
		t.Logf("batches:\n%s", strings.Join(history, "\n"))
	}
}

// TestRotatedDuringFirstScan: the file of a checkpoint entry is rotated
// while the first scan after a restart lists the files, before it looks
// at app.log (stat) or opens it, so that the scan sees the rotated content
// under no name: moved within the patterns (its path created anew), the
// path names the new file; copied and truncated, the copy was not there
// yet when listed. That content must still resume
// where the checkpoint says, whether it is found by the next scan or after
// another crash, rather than be read from its start as a file the
// checkpoint does not know. TestSimulatedCrashes/move-create hit this now
// and then.
func TestRotatedDuringFirstScan(t *testing.T) {
	rotations := []struct {
		name   string
		rotate func(t *testing.T, p string) // app.log to app.log.1
	}{
		{"move-create", func(t *testing.T, p string) {
			if err := os.Rename(p, p+".1"); err != nil {
				t.Error(err)
			}
		}},
		{"copy-truncate", func(t *testing.T, p string) {
			testfs.Write(t, p+".1", testfs.Read(t, p))
		}},
	}
	for _, rot := range rotations {
		for _, at := range []string{"stat", "open"} {
			for _, crash := range []bool{false, true} { // after the first cycle, which committed
				t.Run(fmt.Sprintf("%s/%s/crash=%v", rot.name, at, crash), func(t *testing.T) {
					rotatedDuringFirstScan(t, rot.rotate, at, crash)
				})
			}
		}
	}
}

func rotatedDuringFirstScan(t *testing.T, rotate func(*testing.T, string), at string, crash bool) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	testfs.Write(t, p, numbered("line", 0, 100))
	cfg := fastConfig(p + "*")
	h := newHarness(t, cfg, nil)
	h.until("the first lines", func() bool { return len(h.lines) == 100 })
	cp := h.tail.Checkpoint()
	h.tail.Close()
	testfs.Append(t, p, numbered("line", 100, 110)) // unread at the crash

	// The rotation lands between the listing of app.log and the look at
	// it, which finds the new content.
	rotated := false
	rotateOnce := func(name string) {
		if name == p && !rotated {
			rotated = true
			rotate(t, p)
			testfs.Write(t, p, numbered("line", 110, 120))
		}
	}
	if at == "stat" {
		statFile = func(name string) (os.FileInfo, error) { rotateOnce(name); return os.Stat(name) }
	} else {
		openFile = func(name string) (*os.File, error) { rotateOnce(name); return os.Open(name) }
	}
	t.Cleanup(func() { statFile, openFile = os.Stat, os.Open })
	h2 := newHarness(t, cfg, cp)
	h2.step()
	if !rotated {
		t.Fatal("the first scan did not look at app.log")
	}
	var seen map[string]int // lines read before the crash
	if crash {
		seen = h2.count()
		h2.tail.Close()
		h2 = newHarness(t, cfg, h2.tail.Checkpoint())
	}
	h2.until("lines 100-119", func() bool {
		c := mergeCounts(seen, h2.count())
		return !slices.ContainsFunc(missing(c, "line", 120), func(k string) bool { return k >= "line-000100" })
	})
	for deadline := time.Now().Add(3 * cfg.RefreshInterval); time.Now().Before(deadline); {
		h2.step()
	}
	c := mergeCounts(seen, h2.count())
	for i := range 120 {
		want := 0
		if i >= 100 {
			want = 1
		}
		if k := fmt.Sprintf("line-%06d", i); c[k] != want {
			t.Fatalf("%s read %d times, want %d", k, c[k], want)
		}
	}
}

// mergeCounts returns the sums of the counts of a and b.
func mergeCounts(a, b map[string]int) map[string]int {
	m := map[string]int{}
	for _, c := range []map[string]int{a, b} {
		for k, n := range c {
			m[k] += n
		}
	}
	return m
}
