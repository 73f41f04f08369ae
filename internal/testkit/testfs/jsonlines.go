package testfs

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// ReadJSONLines decodes each line of the file at path (a line up to
// 1 MiB) into a T, stopping the test at a line that does not decode: an
// output's records, written one a line.
func ReadJSONLines[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: corrupt line %q: %v", path, sc.Text(), err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
