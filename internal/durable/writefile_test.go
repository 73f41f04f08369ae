package durable

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const prefix = ".f.tmp"

// temps lists the temporary files WriteFile left in dir.
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestWriteFile: the file ends as the parts joined, with perm, whether it
// was there before or not, and no temporary file is left.
func TestWriteFile(t *testing.T) {
	for _, tt := range []struct {
		name  string
		old   []byte // nil: no file before
		parts [][]byte
		perm  fs.FileMode
	}{
		{"new", nil, [][]byte{[]byte("header\n"), []byte("body")}, 0o600},
		{"replaces", []byte("an older and longer content"), [][]byte{[]byte("new")}, 0o600},
		{"empty", []byte("old"), nil, 0o600},
		{"perm", nil, [][]byte{[]byte("x")}, 0o640},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "f")
			if tt.old != nil {
				if err := os.WriteFile(path, tt.old, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteFile(path, prefix, tt.perm, tt.parts...); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if want := bytes.Join(tt.parts, nil); err != nil || !bytes.Equal(got, want) {
				t.Errorf("file = %q, %v; want %q", got, err, want)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&^tt.perm != 0 || fi.Mode().Perm()&0o600 != 0o600 {
				t.Errorf("mode = %v, %v; want %v less the umask", fi.Mode(), err, tt.perm)
			}
			if left := temps(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %q", left)
			}
		})
	}
}

// failing is a temporary file whose step named fail fails: "write" after
// half of the second part is written, "sync" or "close".
type failing struct {
	*os.File
	fail   string
	writes int
}

var errInjected = errors.New("injected")

func (f *failing) Write(p []byte) (int, error) {
	if f.writes++; f.fail == "write" && f.writes == 2 {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, errInjected
	}
	return f.File.Write(p)
}

func (f *failing) Sync() error {
	if f.fail == "sync" {
		return errInjected
	}
	return f.File.Sync()
}

func (f *failing) Close() error {
	if f.fail == "close" {
		f.File.Close()
		return errInjected
	}
	return f.File.Close()
}

// TestWriteFileFails: when a step before the rename fails, the error is
// that step's, the file is as it was (or still absent), and the temporary
// file is removed. When the directory's sync fails, the file is the new
// one and the error a *DirSyncError.
func TestWriteFileFails(t *testing.T) {
	parts := [][]byte{[]byte("new header\n"), []byte("new body, long enough to be cut")}
	for _, step := range []string{"create", "write", "sync", "close", "rename", "sync dir"} {
		for _, old := range [][]byte{nil, []byte("the old content")} {
			if step == "rename" && old != nil {
				continue // a directory is in the way
			}
			t.Run(step+map[bool]string{true: " (no file before)", false: " (a file before)"}[old == nil], func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "f")
				if old != nil {
					if err := os.WriteFile(path, old, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				ops := fsOps{
					create: func(prefix string, perm fs.FileMode) (file, error) {
						if step == "create" {
							return nil, errInjected
						}
						f, err := createTemp(prefix, perm)
						if err != nil {
							return nil, err
						}
						return &failing{File: f.(*os.File), fail: step}, nil
					},
					syncDir: func(dir string) error {
						if step == "sync dir" {
							return errInjected
						}
						return syncDir(dir)
					},
				}
				if step == "rename" {
					// A rename over a directory that holds something fails.
					if err := os.MkdirAll(filepath.Join(path, "in"), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				err := writeFile(ops, path, prefix, 0o600, parts)
				if err == nil {
					t.Fatal("no error")
				}
				if left := temps(t, dir); len(left) > 0 {
					t.Errorf("temporary files left: %q", left)
				}
				got, rerr := os.ReadFile(path)
				switch step {
				case "rename":
					if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
						t.Errorf("the directory in the way is gone: %v, %v", fi, err)
					}
					return
				case "sync dir":
					var dse *DirSyncError
					if !errors.As(err, &dse) || !errors.Is(err, errInjected) || err.Error() != errInjected.Error() {
						t.Errorf("err = %#v, want a *DirSyncError of the sync's error, with its message", err)
					}
					if want := bytes.Join(parts, nil); !bytes.Equal(got, want) {
						t.Errorf("file = %q, %v; want the new %q", got, rerr, want)
					}
					return
				}
				if !errors.Is(err, errInjected) {
					t.Errorf("err = %v, want the %s step's", err, step)
				}
				if old == nil {
					if !errors.Is(rerr, fs.ErrNotExist) {
						t.Errorf("file = %q, %v; want none", got, rerr)
					}
				} else if !bytes.Equal(got, old) {
					t.Errorf("file = %q, %v; want the old %q", got, rerr, old)
				}
			})
		}
	}
}

// TestWriteFileMissingDir: the directory's error, and nothing created.
func TestWriteFileMissingDir(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "no", "f")
	if err := WriteFile(path, prefix, 0o600, []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("created %v", ents)
	}
}

// TestWriteFileWhole: a reader never sees a part of a file that writers
// replace at once; each read is one writer's content, whole.
func TestWriteFileWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	const size = 64 << 10
	if err := WriteFile(path, prefix, 0o600, bytes.Repeat([]byte{'0'}, size)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			half := bytes.Repeat([]byte{byte('a' + w)}, size/2)
			for range 20 {
				if err := WriteFile(path, prefix, 0o600, half, half); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	for reads := 0; ; reads++ {
		select {
		case <-done:
			if left := temps(t, dir); len(left) > 0 {
				t.Errorf("temporary files left: %q", left)
			}
			return
		default:
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != size || bytes.Count(b, b[:1]) != size {
			t.Fatalf("read %d: %d bytes, not one writer's whole content", reads, len(b))
		}
	}
}
