//go:build !unix

// Package rusage reads what the process has used so far: its CPU time,
// user and system, and its peak RSS, where the system says (getrusage).
package rusage

import "time"

// Self says nothing where there is no getrusage: ok is false.
func Self() (user, system time.Duration, peakRSS int64, ok bool) { return 0, 0, 0, false }
