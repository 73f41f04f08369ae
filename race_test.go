//go:build race

package policyrun

// raceEnabled: under the race detector sync.Pool drops items at random,
// so allocation counts are not the ones the tests hold.
const raceEnabled = true
