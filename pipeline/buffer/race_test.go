//go:build race

package buffer

// raceEnabled: under the race detector sync.Pool drops some of what is
// put in it, so allocation counts mean nothing.
const raceEnabled = true
