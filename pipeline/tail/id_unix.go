//go:build unix

package tail

import (
	"io/fs"
	"syscall"
)

// fileID identifies a file while it exists: device and inode.
type fileID struct{ dev, ino uint64 }

func idOf(fi fs.FileInfo, _ string) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), uint64(st.Ino)}
	}
	return fileID{}
}
