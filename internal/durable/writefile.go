// Package durable replaces files so that a crash, or an error half-way,
// leaves either the old file (or none) or the whole new one, never a part:
// the tail checkpoints and the dead-letter files are written this way.
package durable

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// DirSyncError is the error of WriteFile's last step, syncing the
// directory: the new file has its name by then, but the name may not
// survive a crash. Its message is the sync's own, so that a caller that
// fails on it reads as before; a caller that may go on without it finds it
// with errors.As.
type DirSyncError struct{ Err error }

func (e *DirSyncError) Error() string { return e.Err.Error() }
func (e *DirSyncError) Unwrap() error { return e.Err }

// file is what WriteFile needs of the temporary file.
type file interface {
	Write([]byte) (int, error)
	Sync() error
	Close() error
	Name() string
}

// fsOps are the steps a test makes fail: creating the temporary file
// (prefix, perm) and syncing a directory.
type fsOps struct {
	create  func(string, fs.FileMode) (file, error)
	syncDir func(string) error
}

var osOps = fsOps{createTemp, syncDir}

// WriteFile replaces path with the parts, one after the other. They go to
// a new file in path's directory, named tempPrefix then digits, created
// with perm (less the umask); it is synced, closed, renamed over path, and
// the directory is synced so that the rename is durable too. On an error
// before the rename the temporary file is removed and path is untouched;
// a crash before it may leave the temporary file, which the caller finds
// by tempPrefix. The errors are the os package's, unwrapped.
func WriteFile(path, tempPrefix string, perm fs.FileMode, parts ...[]byte) error {
	return writeFile(osOps, path, tempPrefix, perm, parts)
}

func writeFile(ops fsOps, path, tempPrefix string, perm fs.FileMode, parts [][]byte) (err error) {
	dir := filepath.Dir(path)
	f, err := ops.create(filepath.Join(dir, tempPrefix), perm)
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if err != nil && !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	for _, p := range parts {
		if _, err = f.Write(p); err != nil {
			return err
		}
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	renamed = true
	if err = ops.syncDir(dir); err != nil {
		return &DirSyncError{err}
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// createTemp creates a new file named prefix then random digits, as
// os.CreateTemp does, but with perm rather than 0600.
func createTemp(prefix string, perm fs.FileMode) (file, error) {
	for range 10000 {
		f, err := os.OpenFile(prefix+strconv.FormatUint(uint64(rand.Uint32()), 10), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		switch {
		case err == nil:
			return f, nil
		case !errors.Is(err, fs.ErrExist):
			return nil, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: prefix + "*", Err: fs.ErrExist}
}
