//go:build !unix

package pipeline

import "time"

// processUsage is zero where there is no getrusage: the summary leaves
// the CPU time and peak RSS out.
func processUsage() (user, system time.Duration, peakRSS int64) { return 0, 0, 0 }
