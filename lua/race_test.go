//go:build race

package lua

// raceEnabled: the race detector changes what the heap figures hold.
const raceEnabled = true
