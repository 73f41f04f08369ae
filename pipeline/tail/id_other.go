//go:build !unix

package tail

import (
	"hash/fnv"
	"io/fs"
)

// fileID identifies a file. Without inodes the path stands in for one, so
// rotation is seen only through fingerprints.
type fileID struct{ dev, ino uint64 }

func idOf(_ fs.FileInfo, path string) fileID {
	h := fnv.New64a()
	h.Write([]byte(path))
	return fileID{0, h.Sum64()}
}
