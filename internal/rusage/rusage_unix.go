//go:build unix

// Package rusage reads what the process has used so far: its CPU time,
// user and system, and its peak RSS, where the system says (getrusage).
package rusage

import (
	"runtime"
	"syscall"
	"time"
)

// Self returns the process's user and system CPU time and its peak RSS in
// bytes; ok is false when the system does not say.
func Self() (user, system time.Duration, peakRSS int64, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, 0, false
	}
	peakRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		peakRSS *= 1024 // KiB, but on Darwin
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), peakRSS, true
}
