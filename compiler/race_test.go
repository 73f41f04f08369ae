//go:build race

package compiler

// raceEnabled: under the race detector sync.Pool drops items at random
// (regexp's machines among them), so allocation counts are not the ones
// the allocation tests hold.
const raceEnabled = true
