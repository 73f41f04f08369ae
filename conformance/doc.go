// Package conformance holds the conformance corpus of the policy language
// (cases/ and the B1 policies in policies/) and the tests that run it on
// every backend, plus the B1 policy-stage benchmarks.
package conformance
