//go:build !race

package policyrunprocessor

const raceEnabled = false
