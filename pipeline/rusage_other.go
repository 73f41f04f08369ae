//go:build !unix

package pipeline

import "time"

// processUsage is zero where there is no getrusage: the summary then
// says 0 for the CPU time and the peak RSS.
func processUsage() (user, system time.Duration, peakRSS int64) { return 0, 0, 0 }
