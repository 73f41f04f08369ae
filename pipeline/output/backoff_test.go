package output

import (
	"fmt"
	"testing"
	"time"
)

// TestBackoff checks the wait before each retry against docs/pipeline.md
// ("Delivery"): the backoff starts at retry.initial_interval, doubles with
// each attempt, is capped at retry.max_interval, and the wait is uniform
// between 0 and the backoff (full jitter). The wait is random, so each
// attempt is sampled: every sample must lie in [0, backoff], and the
// samples must reach both ends of that range (the top tenth, proving the
// doubling and the cap are reached; the bottom tenth, proving the jitter
// is full, not "equal" jitter in [backoff/2, backoff]). With 2000 samples
// a correct backoff misses either tenth with a probability of 0.9^2000.
func TestBackoff(t *testing.T) {
	const samples = 2000
	s := time.Second
	tests := []struct {
		name string
		r    RetryConfig
		// bounds[i] is the backoff of attempt i: the most it may wait.
		bounds []time.Duration
	}{
		{"defaults", RetryConfig{InitialInterval: DefaultInitialInterval, MaxInterval: DefaultMaxInterval},
			[]time.Duration{5 * s, 10 * s, 20 * s, 30 * s, 30 * s, 30 * s}},
		{"doubling to a power of two", RetryConfig{InitialInterval: 10 * time.Millisecond, MaxInterval: 80 * time.Millisecond},
			[]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond, 80 * time.Millisecond, 80 * time.Millisecond}},
		{"capped between doublings", RetryConfig{InitialInterval: 3 * s, MaxInterval: 10 * s},
			[]time.Duration{3 * s, 6 * s, 10 * s, 10 * s}},
		{"initial is max", RetryConfig{InitialInterval: 7 * s, MaxInterval: 7 * s},
			[]time.Duration{7 * s, 7 * s, 7 * s}},
		{"long-running retries", RetryConfig{InitialInterval: time.Millisecond, MaxInterval: time.Hour},
			[]time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for attempt, bound := range tt.bounds {
				checkJitter(t, fmt.Sprintf("attempt %d", attempt), bound, samples, func() time.Duration { return backoff(tt.r, attempt) })
			}
		})
	}
	// Far into the retries the backoff stays at the cap: no overflow of
	// the doubling into a negative or zero wait.
	r := RetryConfig{InitialInterval: time.Millisecond, MaxInterval: time.Hour}
	for _, attempt := range []int{40, 63, 64, 100, 10000} {
		checkJitter(t, fmt.Sprintf("attempt %d", attempt), time.Hour, samples, func() time.Duration { return backoff(r, attempt) })
	}
}

// checkJitter samples wait n times: every sample in [0, bound], some in
// the top tenth and some in the bottom tenth.
func checkJitter(t *testing.T, what string, bound time.Duration, n int, wait func() time.Duration) {
	t.Helper()
	lo, hi := bound, time.Duration(0)
	for range n {
		d := wait()
		if d < 0 || d > bound {
			t.Fatalf("%s: waited %v, want between 0 and %v", what, d, bound)
		}
		lo, hi = min(lo, d), max(hi, d)
	}
	if hi < bound-bound/10 {
		t.Errorf("%s: the longest of %d waits is %v: the backoff is not %v", what, n, hi, bound)
	}
	if lo > bound/10 {
		t.Errorf("%s: the shortest of %d waits is %v: the jitter is not full (uniform from 0 to %v)", what, n, lo, bound)
	}
}
