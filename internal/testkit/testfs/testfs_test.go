package testfs

import (
	"path/filepath"
	"testing"
)

func TestWriteAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "x.log")
	Write(t, path, "one\n")
	Append(t, path, "two\n")
	Append(t, path+".new", "new\n")
	if got := Read(t, path); got != "one\ntwo\n" {
		t.Errorf("Read = %q", got)
	}
	if got := Read(t, path+".new"); got != "new\n" {
		t.Errorf("Read of an appended new file = %q", got)
	}
}
