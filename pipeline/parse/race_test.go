//go:build race

package parse

// raceEnabled: under the race detector sync.Pool drops some of what is
// put in it (regexp keeps its machines there), so allocation counts mean
// nothing.
const raceEnabled = true
