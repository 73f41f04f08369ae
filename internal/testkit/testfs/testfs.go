// Package testfs is for tests: it writes, appends to and reads the files
// of a test's fixtures, stopping the test when that fails, so that a
// set-up error cannot pass unseen. It imports only the standard library.
package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// Write writes data to the file at path (mode 0644), making the
// directories it needs.
func Write(t testing.TB, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Append appends data to the file at path, creating it if need be.
func Append(t testing.TB, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Read returns the content of the file at path.
func Read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
