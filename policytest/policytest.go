// Package policytest runs the test blocks of policies (docs/language.md,
// "Tests") on
// one or more backends and compares their records with the expectations.
//
// Every test runs on every backend given (package backend's registry);
// a test passes when each backend meets the expectation and all backends
// agree with each other.
//
// Time in tests is fixed: every input record's %time is TestNow, and the
// backends are loaded with a clock fixed at TestNow, which is what now()
// returns.
package policytest

import "time"

// TestNow is the time of test runs: the value of now() and of every input
// record's %time (semantics.md).
var TestNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
