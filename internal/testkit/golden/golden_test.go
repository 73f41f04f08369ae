package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what a helper reports instead of
// failing the test that runs the helper.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// run calls f with a recorder on a goroutine of its own, so that Fatal
// can end it as it ends a test.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// setUpdate sets the -update flag for one test.
func setUpdate(t *testing.T, v bool) {
	old := *update
	*update = v
	t.Cleanup(func() { *update = old })
}

func TestCheck(t *testing.T) {
	setUpdate(t, false)
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, func(tb testing.TB) { Check(tb, path, []byte("a\nb\n")) }); len(r.errs) != 0 {
		t.Errorf("equal output: %q", r.errs)
	}
	r := run(t, func(tb testing.TB) { Check(tb, path, []byte("a\nc\n")) })
	if len(r.errs) != 1 || r.fatal || !strings.Contains(r.errs[0], "line 2:\n want: \"b\"\n  got: \"c\"") {
		t.Errorf("different output: fatal %v, %q", r.fatal, r.errs)
	}
	r = run(t, func(tb testing.TB) { Check(tb, path+".missing", nil) })
	if !r.fatal || !strings.Contains(r.errs[0], "-update") {
		t.Errorf("missing golden file: fatal %v, %q", r.fatal, r.errs)
	}
}

func TestCheckUpdate(t *testing.T) {
	setUpdate(t, true)
	path := filepath.Join(t.TempDir(), "new", "x.golden")
	if r := run(t, func(tb testing.TB) { Check(tb, path, []byte("new\n")) }); len(r.errs) != 0 {
		t.Fatalf("update: %q", r.errs)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "new\n" {
		t.Errorf("after update: %q, %v", b, err)
	}
}

func TestDiff(t *testing.T) {
	tests := []struct{ want, got, diff string }{
		{"a\n", "a\n", ""},
		{"a\nb\n", "a\n", "line 1 (same):\n       \"a\"\nline 2:\n want: \"b\"\n  got: \"\"\nwant 3 lines, got 2\n--- got in full:\na\n"},
		{"a", "a\nb", "line 1 (same):\n       \"a\"\nline 2:\n want: (end of text)\n  got: \"b\"\nwant 1 lines, got 2\n--- got in full:\na\nb"},
		{"x", "y", "line 1:\n want: \"x\"\n  got: \"y\"\nwant 1 lines, got 1\n--- got in full:\ny"},
		{"", strings.Repeat("l\n", 40), "line 1:\n want: \"\"\n  got: \"l\"\nwant 1 lines, got 41"},
	}
	for _, tt := range tests {
		if d := Diff([]byte(tt.want), []byte(tt.got)); d != tt.diff {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", tt.want, tt.got, d, tt.diff)
		}
	}
}

func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.policy", "b.policy", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var files []string
	if r := run(t, func(tb testing.TB) { files = Glob(tb, filepath.Join(dir, "*.policy")) }); len(r.errs) != 0 || len(files) != 2 {
		t.Errorf("Glob = %q, %q", files, r.errs)
	}
	for _, pattern := range []string{filepath.Join(dir, "*.none"), "["} {
		if r := run(t, func(tb testing.TB) { Glob(tb, pattern) }); !r.fatal {
			t.Errorf("Glob(%q) did not stop the test", pattern)
		}
	}
}

// TestFiles: under -update Files writes each file's golden beside it from
// what f makes of the file, as a subtest named for it; then they compare
// equal.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.policy", "b.policy", "c.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("src "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	upper := func(t *testing.T, file string, src []byte) []byte {
		if want := "src " + filepath.Base(file); string(src) != want {
			t.Errorf("%s: src %q, want %q", file, src, want)
		}
		names = append(names, t.Name())
		return []byte(strings.ToUpper(string(src)))
	}
	setUpdate(t, true)
	if n := Files(t, filepath.Join(dir, "*.policy"), ".golden", upper); n != 2 {
		t.Errorf("Files ran %d files, want 2", n)
	}
	if got := strings.Join(names, " "); got != "TestFiles/a TestFiles/b" {
		t.Errorf("subtests %s", got)
	}
	b, err := os.ReadFile(filepath.Join(dir, "b.golden"))
	if want := "SRC B.POLICY"; err != nil || string(b) != want {
		t.Errorf("b.golden = %q, %v; want %q", b, err, want)
	}
	setUpdate(t, false)
	Files(t, filepath.Join(dir, "*.policy"), ".golden", upper)
}
