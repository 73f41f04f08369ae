package tail

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
)

// TestCursorBefore checks that a cursor set back to marks is committed as
// the state before their lines: a tail resumed from it reads each marked
// file again from its earliest marked line, with that line's number, and
// the other files from where the batch left them.
func TestCursorBefore(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		marks []string // the lines marked, "file:text"
		want  []string // the lines read after a restart, "file:text:number"
	}{
		{
			name:  "one mark",
			files: map[string]string{"a.log": "one\ntwo\nthree\n"},
			marks: []string{"a.log:two"},
			want:  []string{"a.log:two:2", "a.log:three:3"},
		},
		{
			name:  "the earliest of two",
			files: map[string]string{"a.log": "one\ntwo\nthree\n"},
			marks: []string{"a.log:three", "a.log:two"},
			want:  []string{"a.log:two:2", "a.log:three:3"},
		},
		{
			// The unfinished line is in the file after the mark: it is
			// read from there, not kept in the checkpoint.
			name:  "unfinished line after it",
			files: map[string]string{"a.log": "one\ntwo\nthr"},
			marks: []string{"a.log:two"},
			want:  []string{"a.log:two:2", "a.log:thr:3"},
		},
		{
			name:  "one file of two",
			files: map[string]string{"a.log": "a1\na2\n", "b.log": "b1\nb2\n"},
			marks: []string{"b.log:b2"},
			want:  []string{"b.log:b2:2"},
		},
		{
			name:  "no marks",
			files: map[string]string{"a.log": "one\n"},
			want:  nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				testfs.Write(t, filepath.Join(dir, name), data)
			}
			// Without exit_on_eof, the unfinished line is held in the
			// cursor; the restart reads to the end.
			cfg := fastConfig(filepath.Join(dir, "*.log"))
			h := newHarness(t, cfg, nil)
			h.noAuto = true
			b, err := h.tail.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(strings.Join(mapValues(tt.files), ""), "\n"); len(b.Lines) < n {
				t.Fatalf("one poll read %d lines", len(b.Lines))
			}
			var marks []Mark
			for _, m := range tt.marks {
				l := findLine(t, b.Lines, m)
				marks = append(marks, l.Mark())
			}
			c, ok := b.Cursor.Before(marks...)
			if !ok {
				t.Fatal("Before: false")
			}
			h.tail.Commit(c)
			cfg.ExitOnEOF = true
			h2 := newHarness(t, cfg, h.tail.Checkpoint())
			h2.drain()
			var got []string
			for _, l := range h2.lines {
				got = append(got, filepath.Base(l.File.Path)+":"+string(l.Bytes)+":"+strconv.FormatInt(l.RecordNum, 10))
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("after the restart: %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCursorBeforeUnknown checks that a mark whose line is no longer where
// the cursor's file is makes Before fail, rather than set back a file to
// an offset in other content.
func TestCursorBeforeUnknown(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	testfs.Write(t, p, "one\ntwo\n")
	h := newHarness(t, fastConfig(p), nil)
	h.noAuto = true
	b, err := h.tail.Poll(context.Background())
	if err != nil || len(b.Lines) != 2 {
		t.Fatalf("Poll: %d lines, %v", len(b.Lines), err)
	}
	two := b.Lines[1].Mark()
	if _, ok := b.Cursor.Before(Mark{}); ok {
		t.Error("Before accepted the zero Mark")
	}
	// Truncated and written past the mark's offset: the line is gone.
	if err := os.WriteFile(p, []byte("a new, longer first line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err = h.tail.Poll(context.Background())
	if err != nil || len(b.Lines) != 1 {
		t.Fatalf("Poll after the truncation: %d lines, %v", len(b.Lines), err)
	}
	if _, ok := b.Cursor.Before(two); ok {
		t.Error("Before accepted the mark of a line of the content before a truncation")
	}
	if _, ok := b.Cursor.Before(b.Lines[0].Mark()); !ok {
		t.Error("Before refused the mark of a line of the new content")
	}
}

func findLine(t *testing.T, lines []Line, m string) Line {
	t.Helper()
	for _, l := range lines {
		if filepath.Base(l.File.Path)+":"+string(l.Bytes) == m {
			return l
		}
	}
	t.Fatalf("no line %s", m)
	return Line{}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
