package rusage

import "time"

// CPU returns the process's CPU time, user and system; ok is false when
// the system does not say.
func CPU() (time.Duration, bool) {
	u, s, _, ok := Self()
	return u + s, ok
}
