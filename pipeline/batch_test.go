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
