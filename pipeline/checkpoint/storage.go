package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/policyrun/policyrun/internal/durable"
)

// Storage holds the bytes of one checkpoint.
type Storage interface {
	// Load returns the stored bytes, or fs.ErrNotExist (possibly wrapped)
	// when nothing was stored yet.
	Load() ([]byte, error)
	// Store replaces the stored bytes. When it returns nil the new bytes
	// are durable; when it fails the old ones are still there.
	Store(data []byte) error
	// Append adds data after the stored bytes. When it returns nil they
	// are durable; when it fails, or the process dies in it, the stored
	// bytes may end in any prefix of data.
	Append(data []byte) error
}

// Memory is Storage in memory, for tests and benchmarks.
type Memory struct {
	mu   sync.Mutex
	data []byte
	set  bool
}

// Load returns a copy of the stored bytes.
func (m *Memory) Load() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set {
		return nil, fs.ErrNotExist
	}
	return append([]byte(nil), m.data...), nil
}

// Store keeps a copy of data, reusing the previous buffer.
func (m *Memory) Store(data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.data = append(m.data[:0], data...)
	m.set = true
	return nil
}

// Append adds a copy of data to the stored bytes.
func (m *Memory) Append(data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set {
		return fs.ErrNotExist
	}
	m.data = append(m.data, data...)
	return nil
}

// FileStorage keeps the checkpoint in the file at Path. Store writes a
// temporary file in the same directory, syncs it, renames it over Path and
// syncs the directory, so a crash leaves either the old or the new file.
// Append writes at the end of the file and syncs it.
type FileStorage struct {
	Path string
}

// Load reads the file.
func (s FileStorage) Load() ([]byte, error) {
	return os.ReadFile(s.Path)
}

// tempPrefix starts the names of the temporary files Store writes.
func (s FileStorage) tempPrefix() string { return "." + filepath.Base(s.Path) + ".tmp" }

// RemoveStale removes the temporary files that a Store killed before its
// rename left in the directory, and returns their paths. Call it at start,
// before any Store: it would remove the file of a Store under way.
func (s FileStorage) RemoveStale() ([]string, error) {
	dir := filepath.Dir(s.Path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), s.tempPrefix()) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, path)
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("checkpoint: %w", err)
	}
	return removed, nil
}

// CheckWritable reports whether Store could work: Path is not a directory
// and a temporary file can be created (and is removed at once) next to it.
func (s FileStorage) CheckWritable() error {
	if fi, err := os.Stat(s.Path); err == nil && fi.IsDir() {
		return fmt.Errorf("checkpoint: %s is a directory", s.Path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.Path), s.tempPrefix()+"*")
	if err != nil {
		return fmt.Errorf("checkpoint: cannot write in the directory of %s: %w", s.Path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// Store replaces the file atomically.
func (s FileStorage) Store(data []byte) error {
	if err := durable.WriteFile(s.Path, s.tempPrefix(), 0o600, data); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// Append adds data at the end of the file, which must exist.
func (s FileStorage) Append(data []byte) error {
	f, err := os.OpenFile(s.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
