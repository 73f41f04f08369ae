//go:build unix

package tail

import "syscall"

// fdRoom is how many files the tail may hold open within the process's
// file descriptor limit, leaving fdReserve for the outputs, the
// checkpoints and the connections.
func fdRoom() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 1 << 30
	}
	return max(1, int(l.Cur)-fdReserve)
}
