package luascript

import (
	"time"

	"github.com/policyrun/policyrun/internal/rusage"
)

var processStart = time.Now()

// processCPU is the CPU time the process has used, user and system, or
// where that is not at hand the time since the process started.
func processCPU() time.Duration {
	if d, ok := rusage.CPU(); ok {
		return d
	}
	return time.Since(processStart)
}
