//go:build unix

package policy

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFile: a policy path that is not a regular file is refused at
// once, without opening it (a FIFO would block, /dev/zero never ends), and
// so is a file over MaxFileSize.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "p.policy")
	os.WriteFile(ok, []byte("policy \"p\"\n"), 0o644)
	fifo := filepath.Join(dir, "p.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	big := filepath.Join(dir, "big.policy")
	if err := os.WriteFile(big, make([]byte, MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		err  string // a part of the error; "" for none
	}{
		{ok, ""},
		{fifo, "not a regular file (a named pipe)"},
		{"/dev/zero", "not a regular file (a character device)"},
		{dir, "not a regular file (a directory)"},
		{big, "over the 16777216 bytes"},
		{filepath.Join(dir, "none.policy"), "no such file"},
	}
	for _, tt := range tests {
		b, err := ReadFile(tt.path)
		if tt.err == "" && (err != nil || string(b) != "policy \"p\"\n") || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%s: %q, %v; want %q", tt.path, b, err, tt.err)
		}
	}
}
