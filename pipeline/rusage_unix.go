//go:build unix

package pipeline

import (
	"runtime"
	"syscall"
	"time"
)

// processUsage is the process's user and system CPU time and peak RSS
// (bytes), from getrusage; zero when it fails.
func processUsage() (user, system time.Duration, peakRSS int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, 0
	}
	peakRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		peakRSS *= 1024 // KiB, but on Darwin
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), peakRSS
}
