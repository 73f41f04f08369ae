package buffer

import (
	"math/bits"
	"os"
	"runtime"
	"syscall"
	"unsafe"
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

// writeFrame writes a frame's header and payload at off in one pwritev:
// the payload is not copied after its header first.
func writeFrame(f *os.File, head, payload []byte, off int64) error {
	iov := [2]syscall.Iovec{{Base: unsafe.SliceData(head)}, {Base: unsafe.SliceData(payload)}}
	iov[0].SetLen(len(head))
	iov[1].SetLen(len(payload))
	var n uintptr
	var errno syscall.Errno
	for {
		n, _, errno = syscall.Syscall6(syscall.SYS_PWRITEV, f.Fd(), uintptr(unsafe.Pointer(&iov[0])), 2,
			uintptr(off), uintptr(uint64(off)>>(bits.UintSize/2)>>(bits.UintSize/2)), 0)
		if errno != syscall.EINTR {
			break
		}
	}
	runtime.KeepAlive(f)
	runtime.KeepAlive(head)
	runtime.KeepAlive(payload)
	if errno != 0 {
		return &os.PathError{Op: "pwritev", Path: f.Name(), Err: errno}
	}
	if int(n) == len(head)+len(payload) {
		return nil
	}
	// A short write (a full disk, a signal): the rest the plain way,
	// which reports why it cannot.
	if int(n) < len(head) {
		if _, err := f.WriteAt(head[n:], off+int64(n)); err != nil {
			return err
		}
		n = uintptr(len(head))
	}
	_, err := f.WriteAt(payload[int(n)-len(head):], off+int64(n))
	return err
}
