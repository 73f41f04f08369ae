//go:build !unix

package buffer

import "os"

// lockDir creates path; without flock, nothing stops two processes from
// sharing a buffer directory.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
