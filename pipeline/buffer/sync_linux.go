package buffer

import (
	"os"
	"syscall"
)

// syncData makes what was written to f durable. fdatasync leaves out the
// times, which replay does not read; a size or blocks that changed are
// still synced.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err == nil {
			return nil
		}
		if err != syscall.EINTR {
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
	}
}
