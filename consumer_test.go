package policyrun

import (
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestConsumerImportsEveryPackage holds testdata/consumer, the module that
// .ci/run builds as a program importing policyrun would, to importing every
// public package of the module: a new package that a consumer could not
// build is found there, not by a user.
func TestConsumerImportsEveryPackage(t *testing.T) {
	const module = "github.com/policyrun/policyrun"
	f, err := parser.ParseFile(token.NewFileSet(), "testdata/consumer/main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var imported []string
	for _, s := range f.Imports {
		path, _ := strconv.Unquote(s.Path.Value)
		imported = append(imported, path)
	}
	err = filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		base := d.Name()
		if dir != "." && (base == "internal" || base == "testdata" || base == "cmd" || base == "otelcol" ||
			strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "node_modules") {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(dir, 0)
		if err != nil || p.Name == "main" || len(p.GoFiles) == 0 {
			return nil // no Go files for this platform, a command, or tests only
		}
		path := module
		if dir != "." {
			path += "/" + filepath.ToSlash(dir)
		}
		if !slices.Contains(imported, path) {
			t.Errorf("testdata/consumer/main.go does not import %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
