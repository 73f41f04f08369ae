package policyrunprocessor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/policyrun/policyrun/spec"
)

const splitHead = `policy "split"
schema otlp {
  attributes: {
    items: array<string>?
    ...
  }
}
`

// TestProcessorSplit: a policy with split makes one log record per
// element, each in the original's resource and scope, right after where
// it was and in order, each dropped or faulted on its own; the policies
// after it run on each. The counts say what was added and dropped.
func TestProcessorSplit(t *testing.T) {
	items := func(body string, xs ...any) func(plog.LogRecord) {
		return lrec(body, map[string]any{"items": xs, "k": 1})
	}
	in := build(rgroup{attrs: map[string]any{"host": "a"}, scopes: []sgroup{
		{name: "s1", recs: []func(plog.LogRecord){items("a1", "x", "drop", "y"), items("a2"), lrec("a3", map[string]any{"k": 2})}},
		{name: "s2", recs: []func(plog.LogRecord){items("a4", "z")}}}},
		rgroup{attrs: map[string]any{"host": "b"}, scopes: []sgroup{
			{name: "s1", recs: []func(plog.LogRecord){items("b1", "u", "v")}}}})
	p := newTest(t, splitHead+"split .attributes.items\ndrop when .attributes.items == \"drop\"\nset .body = .attributes.items\nremove .attributes.items\n",
		"policy \"second\"\nschema otlp\nset .attributes.n = 1\n")
	b := p.get()
	out := b.runWhole(in)
	want := "R{host=\"a\"}\n  S s1\n    body=\"x\" {k=1 n=1}\n    body=\"y\" {k=1 n=1}\n    body=\"a3\" {k=2 n=1}\n" +
		"  S s2\n    body=\"z\" {k=1 n=1}\n" +
		"R{host=\"b\"}\n  S s1\n    body=\"u\" {k=1 n=1}\n    body=\"v\" {k=1 n=1}\n"
	if got := dump(out); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// 5 in; a1 into 3, a4 into 1, b1 into 2: 3 added; "drop" and a2's
	// empty array dropped.
	if c := b.c; c.in != 5 || c.split != 3 || c.dropped != 2 || c.whys[spec.SplitEmpty] != 1 || sum(c.drops) != 1 {
		t.Errorf("counts: in %d, split %d, dropped %d, whys %v, drops %d", c.in, c.split, c.dropped, c.whys, sum(c.drops))
	}
	b.reset()
	p.put(b)

	// Every record an empty array: the batch is skipped.
	out, err := p.processLogs(context.Background(), one(items("e")))
	if !errors.Is(err, processorhelper.ErrSkipProcessingData) || out.LogRecordCount() != 0 {
		t.Errorf("all dropped: %v, %d records", err, out.LogRecordCount())
	}
}

// TestProcessorSplitUndecodable: a log record the whole path cannot
// convert (nested past the decoder's depth) passes through untouched,
// counted unreadable; the records beside it are converted and run on
// their own.
func TestProcessorSplitUndecodable(t *testing.T) {
	p := newTest(t, splitHead+"split .attributes.items\nset .body = .attributes.items\nremove .attributes.items\n")
	deep := map[string]any{}
	for range 200 {
		deep = map[string]any{"d": deep}
	}
	in := one(lrec(deep, nil), lrec("ok", map[string]any{"items": []any{"x", "y"}}))
	want := dump(one(lrec(deep, nil))) + dump(one(lrec("x", nil), lrec("y", nil)))
	b := p.get()
	out := b.runWhole(in)
	if got := dump(out); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if b.c.unread[undecodable] != 1 || b.c.in != 2 || b.c.split != 1 {
		t.Errorf("in %d, split %d, unreadable counts %v", b.c.in, b.c.split, b.c.unread)
	}
}

// TestProcessorSplitBatches: one batch after another through the same
// batch state, with an odd and an even number of policies, each gives
// what the first gave: the buffers the whole path keeps between batches
// must not be one array.
func TestProcessorSplitBatches(t *testing.T) {
	items := func(body string, xs ...any) func(plog.LogRecord) {
		return lrec(body, map[string]any{"items": xs})
	}
	pol := splitHead + "split .attributes.items\nset .body = .attributes.items\nremove .attributes.items\n"
	want := "R{}\n  S s\n    body=\"x\"\n    body=\"y\"\n    body=\"z\"\n    body=\"w\"\n"
	for _, pols := range [][]string{{pol}, {pol, "policy \"n\"\nschema otlp\n"}, {pol, "policy \"n\"\nschema otlp\n", "policy \"m\"\nschema otlp\n"}} {
		p := newTest(t, pols...)
		b := p.get()
		for batch := range 3 {
			in := build(rgroup{scopes: []sgroup{{name: "s", recs: []func(plog.LogRecord){items("a1", "x", "y"), items("a2", "z"), items("a3", "w")}}}})
			if got := dump(b.runWhole(in)); got != want {
				t.Errorf("%d policies, batch %d: got\n%s\nwant\n%s", len(pols), batch, got, want)
			}
			b.reset()
		}
		p.put(b)
	}
}

// TestProcessorMaxSplit: the processor's max_split bounds its policies'
// splits; a log record whose array is longer faults split_limit and
// goes on as it came. A negative one is refused.
func TestProcessorMaxSplit(t *testing.T) {
	items := func(body string, xs ...any) func(plog.LogRecord) {
		return lrec(body, map[string]any{"items": xs})
	}
	pol := splitHead + "split .attributes.items\nset .body = .attributes.items\nremove .attributes.items\n"
	p, err := newFromConfig(processortest.NewNopSettings(Type), &Config{Policies: writePolicies(t, pol), MaxSplit: 2})
	if err != nil {
		t.Fatal(err)
	}
	b := p.get()
	in := build(rgroup{scopes: []sgroup{{name: "s", recs: []func(plog.LogRecord){items("a1", "x", "y"), items("a2", "u", "v", "w")}}}})
	want := "R{}\n  S s\n    body=\"x\"\n    body=\"y\"\n    body=\"a2\" {items=[\"u\" \"v\" \"w\"]}\n"
	if got := dump(b.runWhole(in)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if n := b.c.faults[int(spec.SplitLimit)]; n != 1 {
		t.Errorf("%d split_limit faults, want 1", n)
	}
	p.put(b)
	if err := (&Config{Policies: writePolicies(t, pol), MaxSplit: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "max_split must not be negative") {
		t.Errorf("max_split -1: %v", err)
	}
}
