package conformance

import "github.com/policyrun/policyrun/internal/rusage"

// processCPU returns the CPU time the process has used, user and system,
// in nanoseconds, and whether it is known.
func processCPU() (int64, bool) {
	d, ok := rusage.CPU()
	return d.Nanoseconds(), ok
}
