// Package golden is for tests: it compares output with the golden files in
// testdata, rewriting them under go test -update, and finds a test's
// fixtures (and a fuzz test's seeds), failing when there are none. It
// imports only the standard library, so that any package's tests can use
// it.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update is the one -update flag of every package whose tests use golden
// files: go test ./pkg -update, or go test ./... -update (packages without
// golden files do not know the flag and fail to start).
var update = flag.Bool("update", false, "rewrite the golden files in testdata instead of comparing with them")

// Check compares got with the golden file at path and fails the test
// (without stopping it) where they differ, showing the first line that
// does. Under -update it writes got to path instead, creating its
// directory; a golden file that cannot be read or written stops the test.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -update to accept it):\n%s", path, Diff(want, got))
	}
}

// Diff describes how got differs from want: the first line that differs,
// with a line of context before it, and both line counts; for short
// outputs got follows in full. It is "" when they are equal.
func Diff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	i := 0
	for i < len(w) && i < len(g) && bytes.Equal(w[i], g[i]) {
		i++
	}
	var b bytes.Buffer
	if i > 0 {
		fmt.Fprintf(&b, "line %d (same):\n       %q\n", i, w[i-1])
	}
	fmt.Fprintf(&b, "line %d:\n want: %s\n  got: %s\n", i+1, line(w, i), line(g, i))
	fmt.Fprintf(&b, "want %d lines, got %d", len(w), len(g))
	if len(g) <= 40 {
		fmt.Fprintf(&b, "\n--- got in full:\n%s", got)
	}
	return b.String()
}

func line(ls [][]byte, i int) string {
	if i >= len(ls) {
		return "(end of text)"
	}
	return fmt.Sprintf("%q", ls[i])
}

// Glob returns the files that match pattern, as filepath.Glob does, and
// stops the test when the pattern is malformed or matches nothing: a test
// over its fixtures must not pass by finding none.
func Glob(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("glob %s: %v", pattern, err)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %s", pattern)
	}
	return files
}

// Files runs a subtest for each file that matches pattern (failing, as
// Glob does, when none does), named for the file less its extension, and
// compares what f makes of the file's content with the golden file beside
// it with extension ext: testdata/x.policy and ".golden" compare with
// testdata/x.golden. It returns how many files it ran.
func Files(t *testing.T, pattern, ext string, f func(t *testing.T, file string, src []byte) []byte) int {
	t.Helper()
	files := Glob(t, pattern)
	for _, file := range files {
		base := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(filepath.Base(base), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			Check(t, base+ext, f(t, file, src))
		})
	}
	return len(files)
}

// Seed adds the content of every file that matches pattern to the seed
// corpus of f, stopping the fuzz test, as Glob does, when none matches or
// a file cannot be read.
func Seed(f *testing.F, pattern string) {
	f.Helper()
	for _, file := range Glob(f, pattern) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
}
