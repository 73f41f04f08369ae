package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFiles: a file is taken as named, a directory gives its *.policy
// regular files, sorted, below it but not in hidden directories.
func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.policy", "a.policy", "notes.txt", "sub/c.policy", ".hidden/d.policy", "sub/.e.policy", "x.policy/f.policy"} {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(names ...string) []string {
		for i, n := range names {
			names[i] = filepath.Join(dir, n)
		}
		return names
	}
	tests := []struct {
		paths []string
		want  []string // nil: an error
	}{
		{in("."), in("a.policy", "b.policy", "sub/.e.policy", "sub/c.policy", "x.policy/f.policy")},
		{in("notes.txt", "sub"), in("notes.txt", "sub/.e.policy", "sub/c.policy")},
		{in(".hidden"), in(".hidden/d.policy")},
		{in("sub", "none.policy"), nil},
		{nil, []string{}},
	}
	for _, tt := range tests {
		got, err := Files(tt.paths...)
		if tt.want == nil {
			if err == nil {
				t.Errorf("Files(%v) = %v, want an error", tt.paths, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Files(%v) = %v, %v; want %v", tt.paths, got, err, tt.want)
		}
	}
}
