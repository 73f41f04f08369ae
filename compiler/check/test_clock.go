package check

import (
	"fmt"
	"time"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	kstate "github.com/policyrun/policyrun/state"
)

// testClocks checks the at and wait lines before a test's input.
func (c *checker) testClocks(clocks []*policy.TestClock) {
	for _, k := range clocks {
		if _, _, err := TestClock(k); err != nil {
			hint := `write a time in RFC 3339, in UTC or with its offset: at "2026-01-01T00:00:30Z"`
			if k.Wait {
				hint = `write a number and a unit (ns, us, ms, s, m, h): wait "30s", wait "1m30s"`
			}
			c.report(diag.Errorf(k.Value, CodeTestClock, "%s", err).WithHint("%s", hint))
		}
	}
}

// TestClock reads a test's at line (the time the clock is set to) or
// wait line (how far it moves on).
func TestClock(k *policy.TestClock) (time.Time, time.Duration, error) {
	if k.Wait {
		d, err := kstate.ParseDuration(k.Value.Str)
		if err != nil {
			return time.Time{}, 0, fmt.Errorf("wait takes a positive duration: %v", err)
		}
		return time.Time{}, d, nil
	}
	t, err := time.Parse(time.RFC3339Nano, k.Value.Str)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("at takes an RFC 3339 time: %q is not one", k.Value.Str)
	}
	return t, 0, nil
}
