package pipeline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
)

// runOneStage runs log through a pipeline of one tail input (read to its
// end), one stage, proc, and the null output; service is the config's
// service section, or "".
func runOneStage(t *testing.T, service, log string, proc Processor) Summary {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "a.log", log)
	cfg := tailConfig(t, dir, testFilter+toNull+service, "a.log", "exit_on_eof: true")
	return runPipeline(t, cfg, Options{NewProcessor: every(proc)}).Summary()
}

// TestBatchSize checks that service batch_size bounds the records of a
// batch (it was accepted and ignored).
func TestBatchSize(t *testing.T) {
	var biggest int
	s := runOneStage(t, "service:\n  batch_size: 100\n", strings.Repeat("x\n", 1000),
		ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) {
			biggest = max(biggest, len(recs))
			return recs, StageCounts{}
		}))
	if s.Out != 1000 || biggest != 100 {
		t.Errorf("out %d, biggest batch %d; want 1000, 100", s.Out, biggest)
	}
}

// TestChunks checks that a batch goes through the stages in chunks of
// about chunkInput bytes, every record once and in order.
func TestChunks(t *testing.T) {
	var lines strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&lines, "%04d%s\n", i, strings.Repeat("x", 1020))
	}
	// The stage counts the records it is given and the largest chunk, and
	// checks that the lines ("0000xxx…", "0001xxx…") come in order.
	var seen, biggest int
	var disorder string
	s := runOneStage(t, "", lines.String(), ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) {
		biggest = max(biggest, len(recs))
		for _, r := range recs {
			v, _ := r.Get(record.NewPath("log"))
			if got, want := r.Arena().Str(v)[:4], fmt.Sprintf("%04d", seen); got != want && disorder == "" {
				disorder = fmt.Sprintf("record %d is line %s", seen, got)
			}
			seen++
		}
		return recs, StageCounts{}
	}))
	if s.In != 1000 || s.Out != 1000 || seen != 1000 {
		t.Errorf("in %d, out %d, stage saw %d; want 1000 each", s.In, s.Out, seen)
	}
	if want := chunkInput/1025 + 1; biggest > want || biggest < want-1 {
		t.Errorf("biggest chunk %d records, want about %d", biggest, want)
	}
	if disorder != "" {
		t.Error(disorder)
	}
}

// TestLongLinesCounted checks that a line over max_line_size is truncated
// or, with skip_long_lines, skipped, and counted either way.
func TestLongLinesCounted(t *testing.T) {
	for _, skip := range []bool{false, true} {
		dir := t.TempDir()
		long := strings.Repeat("x", 3000)
		writeFile(t, dir, "a.log", "short\n"+long+"\nend\n")
		cfg := tailConfig(t, dir, toStdout, "a.log", "exit_on_eof: true", "poll_interval: 10ms", "max_line_size: 1k",
			fmt.Sprintf("skip_long_lines: %v", skip))
		var out strings.Builder
		s := runPipeline(t, cfg, Options{Stdout: &out}).Summary()
		sum := summaryText(s)
		if skip {
			if s.In != 2 || s.SkippedLines != 1 || !strings.Contains(sum, "long lines: truncated 0, skipped 1") {
				t.Errorf("skip: summary %+v\n%s", s, sum)
			}
		} else if s.In != 3 || s.TruncatedLines != 1 || !strings.Contains(out.String(), `"log":"`+strings.Repeat("x", 1024)+`"`) {
			t.Errorf("truncate: summary %+v", s)
		}
	}
}

// TestChunksReuseArena checks that each chunk of a batch reuses the arena
// (a new generation for each, so its records and edits stay in the CPU's
// caches) and that nothing is lost by it: a CRI line split in parts
// whose join straddles two chunks comes out whole, and a policy's edits
// of every record are in the output.
func TestChunksReuseArena(t *testing.T) {
	var lines, want strings.Builder
	pad := strings.Repeat("x", 1000)
	for i := range 600 {
		if i%7 == 3 { // a line in two parts
			fmt.Fprintf(&lines, "2026-11-29T21:00:00Z stdout P %04d-%s-\n", i, pad[:400])
			fmt.Fprintf(&lines, "2026-11-29T21:00:00Z stdout F %s\n", pad[:500])
			fmt.Fprintf(&want, `{"stream":"stdout","logtag":"F","log":"%04d-%s-%s","n":%d}`+"\n", i, pad[:400], pad[:500], i)
			continue
		}
		fmt.Fprintf(&lines, "2026-11-29T21:00:00Z stdout F %04d-%s\n", i, pad)
		fmt.Fprintf(&want, `{"stream":"stdout","logtag":"F","log":"%04d-%s","n":%d}`+"\n", i, pad, i)
	}
	dir := t.TempDir()
	writeFile(t, dir, "c.log", lines.String())
	cfg := tailConfig(t, dir, testFilter+toFile, "c.log", "parser: cri", "exit_on_eof: true")
	gens := map[uint64]bool{}
	chunks, n := 0, 0
	proc := ProcessorFunc(func(recs []*record.Record) ([]*record.Record, StageCounts) {
		chunks++
		for _, r := range recs {
			gens[r.Arena().Generation()] = true
			if err := r.Set(record.NewPath("n"), record.IntValue(int64(n))); err != nil {
				t.Error(err)
			}
			n++
		}
		return recs, StageCounts{}
	})
	s := runPipeline(t, cfg, Options{NewProcessor: every(proc)}).Summary()
	if s.In != 600 || s.Out != 600 {
		t.Errorf("in %d, out %d; want 600 each", s.In, s.Out)
	}
	if chunks < 3 || len(gens) != chunks {
		t.Errorf("%d chunks in %d arena generations; want 3 or more chunks, each its own generation", chunks, len(gens))
	}
	if got := readFile(t, dir, "out.log"); got != want.String() {
		t.Errorf("out.log differs from the lines joined and numbered (%d bytes, want %d)", len(got), want.Len())
	}
}
