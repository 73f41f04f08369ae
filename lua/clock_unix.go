//go:build unix

package lua

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return time.Since(processStart)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var processStart = time.Now()
