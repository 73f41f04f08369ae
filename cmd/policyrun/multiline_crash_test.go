package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
)

// TestMultilineCrashLosesNothing runs `policyrun run` (tail with the java
// multiline rule → file) as a child process over a file that a writer
// keeps appending to, in bursts that each end with a Java stack trace: a
// trace is held (waiting for the line after it) most of the time, so the
// kills, SIGKILL at random moments, fall mostly in the middle of a
// multiline record. It restarts the run after each kill, and finally lets
// it run to the end of input. Every record must arrive whole (each trace
// one record, exactly as written) at least once; the duplicates are what
// each kill re-read, at most the batch in flight: a held trace is read
// again from its first line, and was never emitted.
func TestMultilineCrashLosesNothing(t *testing.T) {
	needChildProcess(t)
	const events, burst, kills = 1500, 10, 15
	config := func(exitOnEOF bool) string {
		return fmt.Sprintf(`
pipeline:
  inputs:
    - name: tail
      path: app.log
      read_from_head: true
      poll_interval: 20ms
      exit_on_eof: %v
      db: tail.db
      multiline: {parsers: [java]}
  outputs:
    - name: file
      path: out.log
`, exitOnEOF)
	}
	dir := writeFiles(t, map[string]string{"crash.yaml": config(false), "final.yaml": config(true), "app.log": ""})

	// Event i is a line, or, at the end of each burst, a trace.
	event := func(i int) string {
		if i%burst != burst-1 {
			return fmt.Sprintf("event %d: order submitted", i)
		}
		return fmt.Sprintf("java.lang.IllegalStateException: event %d failed\n"+
			"\tat com.example.shop.Worker.run(Worker.java:%d)\n"+
			"\tat java.base/java.lang.Thread.run(Thread.java:1583)\n"+
			"Caused by: java.io.IOException: disk %d\n"+
			"\t... 1 more", i, i, i)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(5, 6))
		f, err := os.OpenFile(filepath.Join(dir, "app.log"), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		for i := 0; i < events; i += burst {
			var b strings.Builder
			for k := i; k < i+burst; k++ {
				b.WriteString(event(k) + "\n")
			}
			if _, err := f.WriteString(b.String()); err != nil {
				panic(err)
			}
			time.Sleep(time.Duration(40+rng.IntN(40)) * time.Millisecond)
		}
	}()

	killRuns(t, dir, "crash.yaml", kills, rand.New(rand.NewPCG(7, 8)), 80*time.Millisecond)
	wg.Wait()
	runToEnd(t, dir, "final.yaml", 60*time.Second)

	want := map[string]int{}
	for i := range events {
		want[event(i)] = 0
	}
	out := testfs.ReadJSONLines[struct{ Log string }](t, filepath.Join(dir, "out.log"))
	for _, rec := range out {
		if _, ok := want[rec.Log]; !ok {
			t.Fatalf("a record that was not written whole: %q", rec.Log)
		}
		want[rec.Log]++
	}
	missing, dups := lostAndRepeated(want)
	t.Logf("%d kills: %d records written, %d delivered, %d duplicates (%.1f per kill)",
		kills, events, len(out), dups, float64(dups)/kills)
	if missing > 0 {
		t.Errorf("%d records lost", missing)
	}
	// A 20 ms poll cycle holds one burst (10 records) or two; a kill
	// re-reads the batch in flight. Without the commit before held lines
	// a kill re-reads everything since the last moment nothing was held.
	if dups > kills*2*burst {
		t.Errorf("%d duplicates for %d kills: more than a poll cycle's each", dups, kills)
	}
}
