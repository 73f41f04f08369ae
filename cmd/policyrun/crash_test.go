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

// TestCrashLosesNothing runs `policyrun run` (tail → policy → file) as a child process over files
// that a writer keeps appending to, kills it with SIGKILL at random moments
// at least 20 times, restarts it each time, and finally lets it run to the
// end of input. Every line written must be in the output at least once; the
// duplicates are what each kill re-read, at most the batch in flight.
func TestCrashLosesNothing(t *testing.T) {
	needChildProcess(t)
	const files, perFile, kills = 2, 3000, 22
	const batch = 100 // service.batch_size: the most lines a kill can re-read
	config := func(exitOnEOF bool) string {
		return fmt.Sprintf(`
service:
  batch_size: %d
pipeline:
  inputs:
    - name: tail
      path: logs/*.log*
      parser: json
      read_from_head: true
      poll_interval: 20ms
      exit_on_eof: %v
      db: tail.db
  filters:
    - name: policy
      file: mark.policy
  outputs:
    - name: file
      path: out.log
`, batch, exitOnEOF)
	}
	dir := writeFiles(t, map[string]string{
		"mark.policy": "policy \"mark\"\n\nset .seen = true\n",
		"crash.yaml":  config(false),
		"final.yaml":  config(true),
	})
	logs := filepath.Join(dir, "logs")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}

	// The writer appends lines in small bursts, with one move-and-create
	// rotation of the first file halfway through; the pattern also matches
	// the rotated name, as agents are often set up, so the rotated file is
	// followed by identity and finished even when the rotation happens
	// while the agent is down. It runs on a goroutine of its own, where a
	// failure to write the input cannot stop the test: it panics.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		must := func(err error) {
			if err != nil {
				panic(err)
			}
		}
		open := func(name string) *os.File {
			f, err := os.OpenFile(filepath.Join(logs, name), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
			must(err)
			return f
		}
		out := []*os.File{open("f0.log"), open("f1.log")}
		for n := 0; n < perFile; n++ {
			for i, f := range out {
				_, err := fmt.Fprintf(f, `{"src":%d,"n":%d,"pad":"%s"}`+"\n", i, n, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
				must(err)
			}
			if n == perFile/2 {
				must(out[0].Close())
				must(os.Rename(filepath.Join(logs, "f0.log"), filepath.Join(logs, "f0.log.1")))
				out[0] = open("f0.log")
			}
			// About 6 s of writing: the kills fall while lines arrive.
			if n%50 == 0 {
				time.Sleep(time.Duration(70+rng.IntN(60)) * time.Millisecond)
			}
		}
		for _, f := range out {
			must(f.Close())
		}
	}()

	killRuns(t, dir, "crash.yaml", logs, kills, rand.New(rand.NewPCG(3, 4)), 60*time.Millisecond)
	wg.Wait()
	runToEnd(t, dir, "final.yaml", 60*time.Second)

	times := map[[2]int]int{} // by file and line number
	for i := range files {
		for n := range perFile {
			times[[2]int{i, n}] = 0
		}
	}
	type line struct {
		Src, N int
		Seen   bool
	}
	out := testfs.ReadJSONLines[line](t, filepath.Join(dir, "out.log"))
	for _, rec := range out {
		if !rec.Seen {
			t.Fatalf("a line did not go through the policy: %+v", rec)
		}
		times[[2]int{rec.Src, rec.N}]++
	}
	missing, dups := lostAndRepeated(times)
	t.Logf("%d kills: %d lines written, %d delivered, %d duplicates (%.1f per kill)",
		kills, files*perFile, len(out), dups, float64(dups)/kills)
	if missing > 0 {
		t.Errorf("%d lines lost", missing)
	}
	// A kill re-reads at most the batch in flight, which batch_size
	// bounds: a poll cycle holds more than a burst when a run starts
	// late, after lines piled up (a loaded machine). (Saving only every
	// tenth checkpoint makes about 130 duplicates per kill; the bound
	// must stay well below the 6,000 lines written, or the check could
	// never fail.)
	if dups > kills*batch {
		t.Errorf("%d duplicates for %d kills: more than a batch (%d lines) each", dups, kills, batch)
	}
}

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
	const batch = 2 * burst // service.batch_size: the most lines a kill can re-read
	config := func(exitOnEOF bool) string {
		return fmt.Sprintf(`
service:
  batch_size: %d
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
`, batch, exitOnEOF)
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

	killRuns(t, dir, "crash.yaml", filepath.Join(dir, "app.log"), kills, rand.New(rand.NewPCG(7, 8)), 80*time.Millisecond)
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
	// A kill re-reads the batch in flight, which batch_size bounds (a
	// poll cycle holds more than a burst or two when a run starts late,
	// after lines piled up). Without the commit before held lines a kill
	// re-reads everything since the last moment nothing was held.
	if dups > kills*batch {
		t.Errorf("%d duplicates for %d kills: more than a batch (%d lines) each", dups, kills, batch)
	}
}
