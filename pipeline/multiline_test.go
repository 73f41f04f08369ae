package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
)

// A trace and the lines around it, as each parser's runtime writes them.
var (
	traceLines = []string{
		"java.lang.IllegalStateException: payment declined",
		"\tat com.example.shop.PaymentService.charge(PaymentService.java:87)",
		"\tat com.example.shop.OrderService.submit(OrderService.java:142)",
		"Caused by: java.io.IOException: gateway timed out",
		"\tat com.example.shop.GatewayClient.post(GatewayClient.java:211)",
		"\t... 2 more",
	}
	traceLog = strings.Join(traceLines, "\n")
)

// writeAs writes lines as parser's runtime does, on stream.
func writeAs(parser, stream string, lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		switch parser {
		case "cri":
			b.WriteString("2026-11-29T21:00:00Z " + stream + " F " + l + "\n")
		case "docker":
			js, _ := json.Marshal(map[string]string{"log": l + "\n", "stream": stream})
			b.Write(js)
			b.WriteByte('\n')
		default:
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// outLogs reads the logs of the records in dir/out.log, with their stream
// before them when they have one ("stderr: ").
func outLogs(t *testing.T, dir string) []string {
	t.Helper()
	var logs []string
	for _, l := range strings.Split(strings.TrimSuffix(readFile(t, dir, "out.log"), "\n"), "\n") {
		if l == "" {
			continue
		}
		var r struct{ Log, Stream string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("out.log: %q: %v", l, err)
		}
		log := strings.TrimSuffix(strings.ReplaceAll(r.Log, "\n", "|"), "|")
		if r.Stream == "stderr" {
			log = "stderr: " + log
		}
		logs = append(logs, log)
	}
	return logs
}

// bar is a record's log as outLogs gives it.
func bar(log string) string { return strings.ReplaceAll(log, "\n", "|") }

// TestMultiline runs a trace among ordinary lines through a pipeline
// with the built-in rules, as each parser reads it, to the end of input.
func TestMultiline(t *testing.T) {
	for _, parser := range []string{"raw", "cri", "docker"} {
		t.Run(parser, func(t *testing.T) {
			dir := t.TempDir()
			lines := append(append([]string{"started"}, traceLines...), "order 81724 submitted")
			writeFile(t, dir, "app.log", writeAs(parser, "stdout", lines...))
			cfg := tailConfig(t, dir, toFile, "app.log", "parser: "+parser, "exit_on_eof: true",
				"poll_interval: 10ms", "multiline: {parsers: [java, python, go]}")
			p := runPipeline(t, cfg, Options{})
			want := []string{"started", bar(traceLog), "order 81724 submitted"}
			if got := outLogs(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if s := p.Summary(); s.In != 3 {
				t.Errorf("records in = %d, want 3", s.In)
			}
		})
	}
}

// TestMultilineFlush checks that a trace that gets no more lines is
// emitted after multiline.flush, while the pipeline runs, and that the
// checkpoint then covers it: a second run reads nothing again.
func TestMultilineFlush(t *testing.T) {
	for _, parser := range []string{"raw", "cri", "docker"} {
		t.Run(parser, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "app.log", writeAs(parser, "stdout", append([]string{"started"}, traceLines...)...))
			cfg := tailConfig(t, dir, toFile, "app.log", "parser: "+parser, "poll_interval: 10ms", "db: tail.db",
				"multiline: {parsers: [java], flush: 100ms}")
			for run := 0; run < 2; run++ {
				stop := startPipeline(t, cfg, Options{})
				if run == 0 && !eventually(10*time.Second, func() bool { return len(outLogs(t, dir)) == 2 }) {
					t.Fatal("the trace was not flushed")
				}
				time.Sleep(100 * time.Millisecond) // the second run has time to read again, if it would
				stop()
			}
			want := []string{"started", bar(traceLog)}
			if got := outLogs(t, dir); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("after two runs, records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestMultilineCrash stops a pipeline while a trace is held (a stop does
// not flush: the held lines are lost as in a crash), appends the rest of
// the trace and runs again from the saved checkpoint. The checkpoint must
// stand just before the trace's first line: every record arrives, the
// trace whole, and only the records after the trace's first line on the
// other stream (which share the file's one offset) arrive twice.
func TestMultilineCrash(t *testing.T) {
	tests := []struct {
		name   string
		parser string
		before string // written before the stop
		after  string // written after it
		want   []string
		twice  []string // records that arrive twice
	}{
		{
			name:   "raw",
			parser: "raw",
			before: writeAs("raw", "", "one", "two", traceLines[0], traceLines[1]),
			after:  writeAs("raw", "", append(traceLines[2:], "three")...),
			want:   []string{"one", "two", bar(traceLog), "three"},
		},
		{
			name:   "cri, stopped inside a line's parts",
			parser: "cri",
			before: writeAs("cri", "stdout", "one", traceLines[0]) +
				"2026-11-29T21:00:00Z stdout P \tat com.example.shop.Payment\n",
			after: "2026-11-29T21:00:00Z stdout F Service.charge(PaymentService.java:87)\n" +
				writeAs("cri", "stdout", append(traceLines[2:], "three")...),
			want: []string{"one", bar(traceLog), "three"},
		},
		{
			name:   "cri, the other stream",
			parser: "cri",
			before: writeAs("cri", "stdout", "one", traceLines[0]) + writeAs("cri", "stderr", "err one", "err two") +
				writeAs("cri", "stdout", traceLines[1]),
			after: writeAs("cri", "stdout", append(traceLines[2:], "three")...),
			want:  []string{"one", "stderr: err one", "stderr: err two", bar(traceLog), "three"},
			twice: []string{"stderr: err one", "stderr: err two"},
		},
		{
			name:   "docker",
			parser: "docker",
			before: writeAs("docker", "stdout", "one", traceLines[0], traceLines[1]),
			after:  writeAs("docker", "stdout", append(traceLines[2:], "three")...),
			want:   []string{"one", bar(traceLog), "three"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "app.log", tt.before)
			// The trace's first line starts where the last line before it ends.
			held := strings.Index(tt.before, traceLines[0])
			held = strings.LastIndexByte(tt.before[:held], '\n') + 1
			settings := []string{"parser: " + tt.parser, "poll_interval: 10ms", "db: tail.db",
				"multiline: {parsers: [java], flush: 1h}"}
			stop := startPipeline(t, tailConfig(t, dir, toFile, "app.log", settings...), Options{})
			saved := eventually(10*time.Second, func() bool {
				cp, _, err := checkpoint.Decode([]byte(readFile(t, dir, "tail.db")))
				return err == nil && cp != nil && len(cp.Files) == 1 && cp.Files[0].Offset == int64(held)
			})
			stop()
			if !saved {
				t.Fatalf("the checkpoint never stood at the trace's first line (offset %d): %q", held, readFile(t, dir, "tail.db"))
			}
			appendFile(t, dir, "app.log", tt.after)
			runPipeline(t, tailConfig(t, dir, toFile, "app.log", append(settings, "exit_on_eof: true")...), Options{})
			count := map[string]int{}
			for _, l := range outLogs(t, dir) {
				count[l]++
			}
			for _, w := range tt.want {
				n := 1
				for _, d := range tt.twice {
					if d == w {
						n = 2
					}
				}
				if count[w] != n {
					t.Errorf("%q arrived %d times, want %d", w, count[w], n)
				}
				delete(count, w)
			}
			for l, n := range count {
				t.Errorf("%q arrived %d times, want none", l, n)
			}
			if t.Failed() {
				t.Logf("records:\n%s", strings.Join(outLogs(t, dir), "\n"))
			}
		})
	}
}

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

// TestMultilineExample runs examples/multiline: its 40 CRI lines (a P
// part inside the Java trace, a Python traceback on stderr among stdout's
// lines) are 9 records, each trace and the report one record.
func TestMultilineExample(t *testing.T) {
	cfg := loadExample(t, "multiline")
	var out bytes.Buffer
	runPipeline(t, cfg, Options{Stdout: &out})
	want := []struct {
		stream, first string
		lines         int
	}{
		{"stdout", "2026-11-29 21:00:00.101  INFO 1 --- [main] c.e.shop.ShopApplication : Started ShopApplication in 4.212 seconds", 1},
		{"stdout", "2026-11-29 21:00:01.456 ERROR 1 --- [nio-8080-exec-3] c.e.shop.order.OrderController : order 81723 failed", 1},
		{"stderr", "2026-11-29 21:00:01,460 WARNING shop.worker: queue is 80% full", 1},
		{"stdout", "java.lang.IllegalStateException: payment declined for order 81723", 7},
		{"stdout", "2026-11-29 21:00:01.470  WARN 1 --- [nio-8080-exec-3] c.e.shop.order.OrderController : order 81723 left pending", 1},
		{"stderr", "Traceback (most recent call last):", 13},
		{"stderr", "2026-11-29 21:00:03,131 INFO shop.worker: picked job 5522", 1},
		{"stdout", "=== report 2026-11-29T21:00:04Z", 3},
		{"stdout", "panic: runtime error: index out of range [5] with length 3", 11},
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var r struct{ Stream, Log string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(r.Log, "\n")
		if w := want[i]; r.Stream != w.stream || first != w.first || strings.Count(r.Log, "\n")+1 != w.lines {
			t.Errorf("record %d: %s, %d lines, %q; want %s, %d lines, %q", i, r.Stream, strings.Count(r.Log, "\n")+1, first, w.stream, w.lines, w.first)
		}
	}
	if !strings.Contains(out.String(), `processRequest(FrameworkServlet.java:1014)`) {
		t.Error("the P parts of the long frame were not joined")
	}
}
