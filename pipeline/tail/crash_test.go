package tail

import (
	"context"
	"math/rand/v2"
	"path/filepath"
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
// and the duplicates must be no more than the lines of the batches that
// were delivered and not committed.
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
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]int{}
	delivered, uncommitted := 0, 0
	deliver := func(b *Batch) {
		for _, l := range b.Lines {
			seen[strings.Fields(string(l.Bytes))[0]]++
		}
		delivered += len(b.Lines)
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
			t.Fatalf("after %d lives, %d lines still missing", life, len(missing(seen, "line", n)))
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
			deliver(b)
			if i == polls-1 && life < kills {
				uncommitted += len(b.Lines) // the crash: never committed
				break
			}
			tl.Commit(b.Cursor)
			if err := store.Save(tl.Checkpoint()); err != nil {
				t.Fatal(err)
			}
		}
		tl.Close()
	}
	dups := delivered - n
	t.Logf("%d lines delivered, %d duplicates, %d lines in uncommitted batches", delivered, dups, uncommitted)
	if dups > uncommitted {
		t.Errorf("%d duplicates, more than the %d lines of uncommitted batches", dups, uncommitted)
	}
}
