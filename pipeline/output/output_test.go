package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/testfs"
	"github.com/policyrun/policyrun/record"
)

func batch(t *testing.T, lines ...string) []*record.Record {
	t.Helper()
	a := record.NewArena()
	var recs []*record.Record
	for _, l := range lines {
		r, err := a.DecodeJSON([]byte(l), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// writeOne writes {"x":true} to a new file output at path and closes it.
func writeOne(t *testing.T, path string) {
	t.Helper()
	f, err := NewFile(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(batch(t, `{"x":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNullAndStream(t *testing.T) {
	recs := batch(t, `{"a":1}`, `{"b":"x"}`)
	n := NewNull()
	if err := n.Write(recs); err != nil {
		t.Fatal(err)
	}
	if r, b := n.Stats(); r != 2 || b != int64(len("{\"a\":1}\n{\"b\":\"x\"}\n")) {
		t.Errorf("null stats = %d, %d", r, b)
	}
	var out bytes.Buffer
	s := NewStream("test", &out)
	if err := s.Write(recs); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{\"a\":1}\n{\"b\":\"x\"}\n" {
		t.Errorf("stream wrote %q", got)
	}
}

func TestFileRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.log")
	f, err := NewFile(path, 20, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := f.Write(batch(t, `{"n":12345}`)); err != nil { // 12 bytes a line
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	for _, name := range []string{"out.log", "out.log.1", "out.log.2", "out.log.3"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			sizes[name] = strings.Count(string(b), "\n")
		}
	}
	// 5 lines, at most 1 per file (two would pass 20 bytes), 2 rotated kept.
	want := map[string]int{"out.log": 1, "out.log.1": 1, "out.log.2": 1}
	if len(sizes) != len(want) {
		t.Fatalf("files = %v, want %v", sizes, want)
	}
	for k, v := range want {
		if sizes[k] != v {
			t.Errorf("%s has %d lines, want %d", k, sizes[k], v)
		}
	}
	if r, _ := f.Stats(); r != 5 {
		t.Errorf("records = %d", r)
	}
}

func TestFileAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.log")
	testfs.Write(t, path, "old\n")
	writeOne(t, path)
	if b := testfs.Read(t, path); b != "old\n{\"x\":true}\n" {
		t.Errorf("file = %q", b)
	}
}

func TestNullAllocs(t *testing.T) {
	recs := batch(t, `{"a":1,"b":"hello","c":[1,2,3]}`)
	n := NewNull()
	if err := n.Write(recs); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(100, func() { n.Write(recs) }); allocs != 0 {
		t.Errorf("null output: %v allocs per batch, want 0", allocs)
	}
}

// TestFileKeepsPartialLastLine checks that a file output opened on a file
// whose last line has no newline does not cut it when the line is not its
// own (someone else's file, or one long line): it ends that line with a
// newline and appends after it.
func TestFileKeepsPartialLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.log")
	big := strings.Repeat("y", 298_819)
	for _, tt := range []struct{ before, after string }{
		{"{\"a\":1}\n{\"b\":", "{\"a\":1}\n{\"b\":\n{\"x\":true}\n"},
		{"{\"b\":", "{\"b\":\n{\"x\":true}\n"},
		{"", "{\"x\":true}\n"},
		{"{\"a\":1}\n", "{\"a\":1}\n{\"x\":true}\n"},
		{"{\"a\":1}\n" + strings.Repeat("y", 200<<10), "{\"a\":1}\n" + strings.Repeat("y", 200<<10) + "\n{\"x\":true}\n"},
		{big, big + "\n{\"x\":true}\n"},
	} {
		os.Remove(StatePath(path))
		testfs.Write(t, path, tt.before)
		writeOne(t, path)
		if b := testfs.Read(t, path); b != tt.after {
			t.Errorf("after %q: file = %q…, want %q…", tt.before[:min(len(tt.before), 20)], b[:min(len(b), 40)], tt.after[:min(len(tt.after), 40)])
		}
	}
	// The newline counts towards max_size.
	testfs.Write(t, path, "abc")
	f, err := NewFile(path, 1<<20, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.size != 4 {
		t.Errorf("size = %d, want 4", f.size)
	}
}

// TestFileCutsOwnPartialLine checks that a partial last line that this
// output was writing (a kill in the middle of a batch) is cut, and that
// bytes someone else appended after a whole batch are not.
func TestFileCutsOwnPartialLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.log")
	testfs.Write(t, path, "theirs\n")
	// killed writes f's batch as a kill in its middle would leave it.
	killed := func(f *File, whole, part string) {
		t.Helper()
		f.noteBatch(len(whole) + 100)
		if _, err := f.f.WriteString(whole + part); err != nil {
			t.Fatal(err)
		}
		f.f.Close() // no Flush, no more writes: the process is gone
		f.state.Close()
	}
	f, err := NewFile(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write(batch(t, `{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	killed(f, `{"b":2}`+"\n", `{"c":`)
	writeOne(t, path)
	want := "theirs\n{\"a\":1}\n{\"b\":2}\n{\"x\":true}\n"
	if got := testfs.Read(t, path); got != want {
		t.Errorf("after a kill: %q, want %q", got, want)
	}
	// A batch with no whole line before the kill.
	f, err = NewFile(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	killed(f, "", `{"d":`)
	writeOne(t, path)
	if got := testfs.Read(t, path); got != want+"{\"x\":true}\n" {
		t.Errorf("after a kill in the first line: %q", got)
	}
	// Someone else appends after a whole batch: not ours, not cut.
	appendTo := func(s string) {
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(s)
		fh.Close()
	}
	appendTo("foreign")
	writeOne(t, path)
	if got := testfs.Read(t, path); !strings.HasSuffix(got, "{\"x\":true}\nforeign\n{\"x\":true}\n") {
		t.Errorf("foreign bytes after a whole batch: %q", got)
	}
	// The state of another file (rotated away, replaced) is not this one's.
	f, err = NewFile(path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	killed(f, "", `{"e":`)
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	testfs.Write(t, path, `{"e":`)
	writeOne(t, path)
	if got := testfs.Read(t, path); got != "{\"e\":\n{\"x\":true}\n" {
		t.Errorf("state of another file: %q", got)
	}
}
