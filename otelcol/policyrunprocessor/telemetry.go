package policyrunprocessor

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/policyrun/policyrun/spec"
)

// The processor's own metrics (docs/collector.md, "Telemetry"), through
// the Collector's MeterProvider. Counts are kept per batch and added once
// at its end; the options with their attribute sets are made once, so
// that counting allocates nothing.
const (
	metricIn         = "policyrun_processor_records_in"
	metricOut        = "policyrun_processor_records_out"
	metricDropped    = "policyrun_processor_records_dropped"
	metricFaults     = "policyrun_processor_faults"
	metricUnreadable = "policyrun_processor_records_unreadable"
	metricSplit      = "policyrun_processor_records_split"
)

// dropReason is the reason a record dropped without a fault carries.
const dropReason = "drop"

type telemetry struct {
	in, out, dropped, faults, unreadable, split metric.Int64Counter
	// by policy and reason: [policy*spec.NumReasons + reason]; a drop
	// without a fault is under spec.NoFault.
	dropOpts, faultOpts [][]metric.AddOption
	// whyOpts are the drops by a reason of their own (split_empty), by
	// policy: [policy*spec.NumDropReasons + reason].
	whyOpts    [][]metric.AddOption
	unreadOpts [numUnreadable][]metric.AddOption
	opts       []metric.AddOption // the processor's attribute alone
}

// newTelemetry makes the counters of the processor id (its attribute
// processor: a config may have several, as policyrun/a and policyrun/b)
// over the policies of those names.
func newTelemetry(mp metric.MeterProvider, id string, policies []string) (*telemetry, error) {
	m := mp.Meter("github.com/policyrun/policyrun/otelcol/policyrunprocessor")
	t := &telemetry{}
	var err error
	counter := func(name, desc string) metric.Int64Counter {
		if err != nil {
			return nil
		}
		var c metric.Int64Counter
		c, err = m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{record}"))
		return c
	}
	t.in = counter(metricIn, "Log records the policies ran over.")
	t.out = counter(metricOut, "Log records passed on (all but the dropped, and those splits added).")
	t.dropped = counter(metricDropped, "Log records dropped, by policy and reason (drop, or the fault under on_fault drop).")
	t.faults = counter(metricFaults, "Runs that faulted, by policy and reason; the record is left as the policy found it (or dropped under on_fault drop).")
	t.unreadable = counter(metricUnreadable, "Log records passed through untouched because the processor could not read them, by reason.")
	t.split = counter(metricSplit, "Log records added by splits: a record split into n adds n-1.")
	if err != nil {
		return nil, err
	}
	proc := attribute.String("processor", id)
	opt := func(kv ...attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(append(kv, proc)...))}
	}
	t.opts = opt()
	for _, name := range policies {
		for r := spec.Reason(0); r < spec.NumReasons; r++ {
			reason := r.String()
			if r == spec.NoFault {
				reason = dropReason
			}
			t.dropOpts = append(t.dropOpts, opt(attribute.String("policy", name), attribute.String("reason", reason)))
			t.faultOpts = append(t.faultOpts, opt(attribute.String("policy", name), attribute.String("reason", r.String())))
		}
		for r := spec.DropReason(0); r < spec.NumDropReasons; r++ {
			t.whyOpts = append(t.whyOpts, opt(attribute.String("policy", name), attribute.String("reason", r.String())))
		}
	}
	for r := unreadable(1); r < numUnreadable; r++ {
		t.unreadOpts[r] = opt(attribute.String("reason", unreadableNames[r]))
	}
	return t, nil
}

// counts are one batch's.
type counts struct {
	in, dropped   int64
	drops, faults []int64 // as telemetry's options
	unread        [numUnreadable]int64
	// split is the records splits added (out = in + split - dropped);
	// whys the drops by their own reasons, as telemetry's whyOpts.
	split int64
	whys  []int64
}

func (c *counts) reset() {
	c.in, c.dropped, c.split = 0, 0, 0
	clear(c.drops)
	clear(c.faults)
	clear(c.whys)
	c.unread = [numUnreadable]int64{}
}

// add adds a batch's counts to the metrics.
func (t *telemetry) add(ctx context.Context, c *counts) {
	t.in.Add(ctx, c.in, t.opts...)
	t.out.Add(ctx, c.in+c.split-c.dropped, t.opts...)
	if c.split != 0 {
		t.split.Add(ctx, c.split, t.opts...)
	}
	addEach(ctx, t.dropped, c.whys, t.whyOpts)
	addEach(ctx, t.dropped, c.drops, t.dropOpts)
	addEach(ctx, t.faults, c.faults, t.faultOpts)
	addEach(ctx, t.unreadable, c.unread[:], t.unreadOpts[:])
}

// addEach adds each count that is not 0 to counter with the options of
// the same index; adding the zeros would cost a call each for nothing.
func addEach(ctx context.Context, counter metric.Int64Counter, counts []int64, opts [][]metric.AddOption) {
	for i, n := range counts {
		if n != 0 {
			counter.Add(ctx, n, opts[i]...)
		}
	}
}
