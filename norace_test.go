//go:build !race

package policyrun

const raceEnabled = false
