package pipeline

import (
	"time"

	"github.com/policyrun/policyrun/internal/rusage"
)

// processUsage is the process's user and system CPU time and peak RSS
// (bytes); zero where the system does not say, and the summary then says
// 0 for them.
func processUsage() (user, system time.Duration, peakRSS int64) {
	user, system, peakRSS, _ = rusage.Self()
	return user, system, peakRSS
}
