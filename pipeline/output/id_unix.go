//go:build unix

package output

import (
	"io/fs"
	"syscall"
)

// fileID identifies a file while it exists: device and inode.
func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}
