// Package policytest runs the test blocks of policies (docs/language.md,
// "Tests") on
// one or more backends and compares their records with the expectations.
//
// Every test runs on every backend given (package backend's registry);
// a test passes when each backend meets the expectation and all backends
// agree with each other.
//
// Time and randomness in tests are fixed: every input record's %time is
// TestNow, and the backends are loaded with TestOptions, a clock fixed at
// TestNow, which is what now() returns, and random bits fixed by TestSeed,
// which uuid_v4 and uuid_v7 use.
package policytest

import (
	"time"

	"github.com/policyrun/policyrun/spec"
)

// TestNow is the time of test runs: the value of now() and of every input
// record's %time (semantics.md).
var TestNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TestSeed seeds the random bits of test runs (spec.SeededRandom).
const TestSeed = 2026

// TestOptions are the options every backend runs tests with: the clock
// fixed at TestNow, the random bits fixed by TestSeed, the default limits.
func TestOptions() spec.Options {
	return spec.Options{Clock: spec.FixedClock(TestNow), Random: spec.SeededRandom(TestSeed)}
}
