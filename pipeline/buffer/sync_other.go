//go:build !linux

package buffer

import "os"

// syncData makes what was written to f durable.
func syncData(f *os.File) error { return f.Sync() }
