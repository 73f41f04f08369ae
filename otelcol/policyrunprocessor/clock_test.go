package policyrunprocessor

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// TestBatchClock: every log record of a batch sees one now(), read once
// for the batch (spec.Batch), whichever path runs it.
func TestBatchClock(t *testing.T) {
	p := newTest(t, "policy \"now\"\nschema otlp\nset .attributes.t = unix_nanos(now())\n")
	for _, general := range []bool{false, true} {
		if general {
			generalOnly(p)
		}
		b := p.get()
		in := build(rgroup{scopes: []sgroup{{name: "s", recs: []func(plog.LogRecord){lrec("a", nil), lrec("b", nil), lrec("c", nil)}}}})
		b.run(in)
		var times []string
		for _, line := range strings.Split(strings.TrimSpace(dump(in)), "\n") {
			if i := strings.Index(line, "t="); i >= 0 {
				times = append(times, line[i:])
			}
		}
		if len(times) != 3 || times[0] != times[1] || times[1] != times[2] {
			t.Errorf("general %v: the records saw %v, want one time", general, times)
		}
		b.reset()
		p.put(b)
	}
}
