//go:build !race

// Package racedetect says whether the race detector is on, for tests
// whose allocation counts or heap figures it changes: under it sync.Pool
// drops what is put in it at random, and its shadow memory is in the heap.
package racedetect

// Enabled reports that the race detector is on.
const Enabled = false
