package pipeline

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHeldParts checks what happens to parts of a line whose end does not
// come, CRI P parts and Docker's json-file partial entries (a log without
// its final newline): joined with what follows; after flush_timeout they
// are delivered (CRI: logtag P) and the checkpoint moves past them; at the
// end of input they are delivered and the checkpoint covers them, so that
// a second run reads nothing again.
func TestHeldParts(t *testing.T) {
	for _, tt := range []struct {
		parser, lines, want string
	}{
		{
			parser: "cri",
			lines:  "2026-11-29T21:00:00Z stdout F one\n2026-11-29T21:00:00Z stdout P never-ended\n",
			want: `{"stream":"stdout","logtag":"F","log":"one"}` + "\n" +
				`{"stream":"stdout","logtag":"P","log":"never-ended"}` + "\n",
		},
		{
			parser: "docker",
			lines: `{"log":"one-","stream":"stdout"}` + "\n" + `{"log":"two\n","stream":"stdout"}` + "\n" +
				`{"log":"never-ended","stream":"stdout"}` + "\n",
			want: `{"log":"one-two\n","stream":"stdout"}` + "\n" + `{"log":"never-ended","stream":"stdout"}` + "\n",
		},
	} {
		for _, exitOnEOF := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/exit_on_eof=%v", tt.parser, exitOnEOF), func(t *testing.T) {
				dir := t.TempDir()
				writeFile(t, dir, "c.log", tt.lines)
				cfg := tailConfig(t, dir, toFile, "c.log", "parser: "+tt.parser, fmt.Sprintf("exit_on_eof: %v", exitOnEOF),
					"poll_interval: 10ms", "flush_timeout: 50ms", "db: tail.db")
				run := func() {
					if exitOnEOF {
						runPipeline(t, cfg, Options{})
						return
					}
					stop := startPipeline(t, cfg, Options{})
					eventually(10*time.Second, func() bool { return strings.Contains(readFile(t, dir, "out.log"), "never-ended") })
					// The checkpoint is saved after the batch is delivered.
					time.Sleep(100 * time.Millisecond)
					stop()
				}
				run()
				run()
				if got := readFile(t, dir, "out.log"); got != tt.want {
					t.Errorf("after two runs, out.log =\n%s\nwant\n%s", got, tt.want)
				}
			})
		}
	}
}

// TestCRIHeldPartsOtherStreamBusy checks that a stdout join that never
// ends is delivered after flush_timeout even while stderr lines keep
// coming: lines that do not end the join must not restart its wait.
func TestCRIHeldPartsOtherStreamBusy(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "c.log", "2026-11-29T21:00:00Z stdout P never-ended\n")
	cfg := tailConfig(t, dir, toFile, "c.log", "parser: cri", "poll_interval: 10ms", "flush_timeout: 100ms")
	stop := startPipeline(t, cfg, Options{})
	flushed := false
	for i := 0; i < 100 && !flushed; i++ {
		appendFile(t, dir, "c.log", fmt.Sprintf("2026-11-29T21:00:00Z stderr F busy %d\n", i))
		time.Sleep(20 * time.Millisecond)
		flushed = strings.Contains(readFile(t, dir, "out.log"), "never-ended")
	}
	stop()
	if !flushed {
		t.Error("the stdout join was held for 2 s with flush_timeout 100ms while stderr lines came")
	}
}
