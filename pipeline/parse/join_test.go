package parse

import (
	"regexp"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
)

// userRule makes a rule of start and continue patterns ("" for none).
func testRule(t testing.TB, start, cont string) *Rule {
	t.Helper()
	var s, c *regexp.Regexp
	if start != "" {
		s = regexp.MustCompile(start)
	}
	if cont != "" {
		c = regexp.MustCompile(cont)
	}
	r, err := NewRule("test", s, c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestMultilineRules feeds raw lines to rules and checks the records' logs,
// those emitted as lines come (lines) and those Flush emits (flushed).
func TestMultilineRules(t *testing.T) {
	tests := []struct {
		name        string
		start, cont string // a user rule; the built-in ones when both ""
		maxLines    int
		maxJoined   int
		lines       []string
		want        []string // records, lines joined with "\n"
		flushed     []string
	}{
		{
			name:  "start alone: every other line joins",
			start: `^\d`,
			lines: []string{"orphan", "1 a", " b", "c", "2 d", "3 e"},
			want:  []string{"orphan", "1 a\n b\nc", "2 d"},
			// The last record waits for a line that is not its own.
			flushed: []string{"3 e"},
		},
		{
			name:    "continue alone: every other line begins",
			cont:    `^\s`,
			lines:   []string{" orphan", "a", " b", "c", " d", " e"},
			want:    []string{" orphan", "a\n b"},
			flushed: []string{"c\n d\n e"},
		},
		{
			name:  "start and continue: other lines stand alone",
			start: `^BEGIN`, cont: `^\s`,
			lines:   []string{"BEGIN 1", " a", "other", " orphan", "BEGIN 2", "BEGIN 3", " b"},
			want:    []string{"BEGIN 1\n a", "other", " orphan", "BEGIN 2"},
			flushed: []string{"BEGIN 3\n b"},
		},
		{
			name:  "a start line begins a record even if it continues one",
			start: `^S`, cont: `.`,
			lines:   []string{"S1", "x", "S2", "y"},
			want:    []string{"S1\nx"},
			flushed: []string{"S2\ny"},
		},
		{
			name:     "max_lines: the trace goes on in the next record",
			maxLines: 3,
			lines:    []string{"java.lang.Error: e", "\tat a", "\tat b", "\tat c", "\tat d", "\tat e", "\tat f", "done"},
			want:     []string{"java.lang.Error: e\n\tat a\n\tat b", "\tat c\n\tat d\n\tat e", "\tat f", "done"},
		},
		{
			name:      "the byte bound",
			maxJoined: 20,
			lines:     []string{"Exception: x", "\tat a", "\tat b", "done"},
			want:      []string{"Exception: x\n\tat a", "\tat b", "done"},
		},
		{
			// The blank line after an exception is tried: no chained
			// traceback follows, so it stands alone again.
			name:    "a trial line given back at flush",
			lines:   []string{"Traceback (most recent call last):", `  File "a.py", line 1, in <module>`, "E: x", ""},
			flushed: []string{"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nE: x", ""},
		},
		{
			name:    "a trial line given back before a new start",
			lines:   []string{"panic: x", "", "panic: y"},
			want:    []string{"panic: x", ""},
			flushed: []string{"panic: y"},
		},
		{
			name:    "two blank lines: the first given back, the second alone",
			lines:   []string{"panic: x", "", "", "goroutine 1 [running]:", "main.main()", "\t/a.go:3 +0x1d"},
			want:    []string{"panic: x", "", ""},
			flushed: []string{"goroutine 1 [running]:\nmain.main()\n\t/a.go:3 +0x1d"},
		},
		{
			name:  "a trial line confirmed joins with its follower",
			lines: []string{"panic: x", "", "goroutine 1 [running]:", "main.main()", "", "goroutine 2 [select]:", "main.wait()", "exit status 2"},
			want:  []string{"panic: x\n\ngoroutine 1 [running]:\nmain.main()\n\ngoroutine 2 [select]:\nmain.wait()", "exit status 2"},
		},
		{
			name: "java: Node.js, and logback's reversed traces",
			lines: []string{
				"TypeError: Cannot read properties of undefined (reading 'id')",
				"    at Object.handler (/app/src/orders.js:42:17)",
				"    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
				"java.io.IOException: disk",
				"\tat com.example.Disk.read(Disk.java:9)",
				"Wrapped by: java.lang.IllegalStateException: read failed",
				"\tat com.example.Store.load(Store.java:30)",
				"\t... 3 common frames omitted",
				"done",
			},
			want: []string{
				"TypeError: Cannot read properties of undefined (reading 'id')\n    at Object.handler (/app/src/orders.js:42:17)\n    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
				"java.io.IOException: disk\n\tat com.example.Disk.read(Disk.java:9)\nWrapped by: java.lang.IllegalStateException: read failed\n\tat com.example.Store.load(Store.java:30)\n\t... 3 common frames omitted",
				"done",
			},
		},
		{
			name:  "rules in order: the first start wins, and owns the record",
			lines: []string{"Traceback (most recent call last):", "  File x", "ValueError: y", "\tat z", "done"},
			want:  []string{"Traceback (most recent call last):\n  File x\nValueError: y", "\tat z", "done"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules := builtins
			if tt.start != "" || tt.cont != "" {
				rules = []*Rule{testRule(t, tt.start, tt.cont)}
			}
			p, err := NewMultiline("raw", tt.maxJoined, Multiline{Rules: rules, MaxLines: tt.maxLines})
			if err != nil {
				t.Fatal(err)
			}
			a := record.NewArena()
			var got []*record.Record
			for _, l := range tt.lines {
				if got, err = p.Parse(a, got, "s", []byte(l), tail.Mark{}); err != nil {
					t.Fatal(err)
				}
			}
			flushed := p.Flush(a, nil, "s")
			if g, w := logs(t, got), strings.Join(tt.want, "\x00"); g != w {
				t.Errorf("records:\n%q\nwant\n%q", strings.Split(g, "\x00"), tt.want)
			}
			if g, w := logs(t, flushed), strings.Join(tt.flushed, "\x00"); g != w {
				t.Errorf("flushed:\n%q\nwant\n%q", strings.Split(g, "\x00"), tt.flushed)
			}
		})
	}
}

// logs is the records' logs, separated by NUL.
func logs(t *testing.T, recs []*record.Record) string {
	t.Helper()
	var out []string
	for _, r := range recs {
		v, ok := r.Get(pathLog)
		if !ok {
			t.Fatalf("record without a log: %s", r.AppendJSON(nil))
		}
		out = append(out, string(r.Arena().Bytes(v)))
	}
	return strings.Join(out, "\x00")
}

// TestHeld checks what Held reports after each line: the mark of the
// oldest line held on either stream, CRI parts and multiline records
// alike, and a wait that changes when a line joins the hold that has
// waited longest, and not for lines of the other stream.
func TestHeld(t *testing.T) {
	type step struct {
		line  string
		first int  // the line whose mark Held reports, -1: nothing held
		waits bool // Wait is the one after the step before
	}
	tests := []struct {
		name   string
		parser string
		steps  []step
	}{
		{
			name:   "a raw trace",
			parser: "raw",
			steps: []step{
				{line: "plain", first: -1},
				{line: "java.lang.IllegalStateException: x", first: 1},
				{line: "\tat a", first: 1},
				{line: "\tat b", first: 1},
				{line: "plain", first: -1},
			},
		},
		{
			name:   "a CRI part is older than a trace on the other stream",
			parser: "cri",
			steps: []step{
				{line: "2026-11-29T21:00:00Z stdout P long line, ", first: 0},
				{line: "2026-11-29T21:00:00Z stderr F java.lang.Error: x", first: 0, waits: true},
				{line: "2026-11-29T21:00:00Z stderr F \tat a", first: 0, waits: true},
				// The stdout line ends and is not a trace: the stderr
				// trace is what is held now.
				{line: "2026-11-29T21:00:00Z stdout F ended", first: 1},
				{line: "2026-11-29T21:00:00Z stdout F other", first: 1, waits: true},
				{line: "2026-11-29T21:00:00Z stderr F done", first: -1},
			},
		},
		{
			name:   "CRI parts inside a trace",
			parser: "cri",
			steps: []step{
				{line: "2026-11-29T21:00:00Z stdout F java.lang.Error: x", first: 0},
				{line: "2026-11-29T21:00:00Z stdout P \tat com.example.", first: 0},
				{line: "2026-11-29T21:00:00Z stdout F Long.frame(Long.java:1)", first: 0},
				{line: "2026-11-29T21:00:00Z stdout F done", first: -1},
			},
		},
		{
			name:   "a trace whose first line came in parts",
			parser: "cri",
			steps: []step{
				{line: "2026-11-29T21:00:00Z stdout P java.lang.", first: 0},
				{line: "2026-11-29T21:00:00Z stdout F Error: x", first: 0},
				{line: "2026-11-29T21:00:00Z stdout F \tat a", first: 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewMultiline(tt.parser, 0, Multiline{Rules: builtins})
			if err != nil {
				t.Fatal(err)
			}
			a := record.NewArena()
			file := &tail.File{Path: "s"}
			var marks []tail.Mark
			var wait uint64
			for i, s := range tt.steps {
				l := tail.Line{File: file, Bytes: []byte(s.line), Offset: int64(100 * i), RecordNum: int64(i + 1)}
				marks = append(marks, l.Mark())
				if _, err := p.Parse(a, nil, "s", l.Bytes, l.Mark()); err != nil {
					t.Fatal(err)
				}
				h, ok := p.Held("s")
				switch {
				case ok != (s.first >= 0):
					t.Fatalf("after line %d: held %v", i, ok)
				case ok && h.First != marks[s.first]:
					t.Errorf("after line %d: First is not line %d's mark", i, s.first)
				case ok && i > 0 && (h.Wait == wait) != s.waits:
					t.Errorf("after line %d: Wait %d, before %d; want unchanged %v", i, h.Wait, wait, s.waits)
				}
				wait = h.Wait
			}
		})
	}
}

func TestNewMultilineRefuses(t *testing.T) {
	for _, name := range []string{"json", "logfmt"} {
		if _, err := NewMultiline(name, 0, Multiline{Rules: builtins}); err == nil || !strings.Contains(err.Error(), "raw, cri or docker") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := NewMultiline("raw", 0, Multiline{}); err == nil {
		t.Error("no rules: no error")
	}
	if _, err := NewRule("none", nil, nil); err == nil {
		t.Error("a rule with neither regular expression: no error")
	}
}
