package output

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testfs"
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

func TestFileCutsPartialLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.log")
	for _, tt := range []struct{ before, after string }{
		{"{\"a\":1}\n{\"b\":", "{\"a\":1}\n{\"x\":true}\n"},
		{"{\"b\":", "{\"x\":true}\n"},
		{"", "{\"x\":true}\n"},
		{"{\"a\":1}\n", "{\"a\":1}\n{\"x\":true}\n"},
		{"{\"a\":1}\n" + strings.Repeat("y", 200<<10), "{\"a\":1}\n{\"x\":true}\n"},
	} {
		testfs.Write(t, path, tt.before)
		writeOne(t, path)
		if b := testfs.Read(t, path); b != tt.after {
			t.Errorf("after %q: file = %q, want %q", tt.before[:min(len(tt.before), 20)], b, tt.after)
		}
	}
}
