package testfs

import (
	"path/filepath"
	"testing"
)

func TestReadJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.log")
	Write(t, path, "{\"n\":1}\n{\"n\":2,\"x\":\"y\"}\n")
	got := ReadJSONLines[struct{ N int }](t, path)
	if len(got) != 2 || got[0].N != 1 || got[1].N != 2 {
		t.Errorf("%+v", got)
	}
	Write(t, path, "")
	if got := ReadJSONLines[map[string]any](t, path); len(got) != 0 {
		t.Errorf("empty file: %+v", got)
	}
}
