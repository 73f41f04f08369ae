//go:build !linux

package buffer

import "os"

// syncData makes what was written to f durable.
func syncData(f *os.File) error { return f.Sync() }

// writeFrame writes a frame's header and payload at off.
func writeFrame(f *os.File, head, payload []byte, off int64) error {
	if _, err := f.WriteAt(head, off); err != nil {
		return err
	}
	_, err := f.WriteAt(payload, off+int64(len(head)))
	return err
}
