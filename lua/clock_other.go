//go:build !unix

package lua

import "time"

var processStart = time.Now()

// processCPU is, where the CPU time is not at hand, the time since the
// process started.
func processCPU() time.Duration { return time.Since(processStart) }
