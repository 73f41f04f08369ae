package policy

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Files expands paths as check, fmt and test take them, so that they see
// the same files: a file as it is (whatever its name), a directory to the
// *.policy regular files below it, hidden directories skipped, each
// directory's files sorted. It stops at the first path it cannot read.
func Files(paths ...string) ([]string, error) {
	var out []string
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			out = append(out, path)
			continue
		}
		var found []string
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && p != path && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case !d.IsDir() && strings.HasSuffix(p, ".policy") && d.Type().IsRegular():
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}
