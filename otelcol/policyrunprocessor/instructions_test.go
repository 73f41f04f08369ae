package policyrunprocessor

import (
	"context"
	"os"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
)

// TestB7Instructions runs one side of one B7 case over B7_N copies of the
// batch (default 20) and nothing else, for counting the instructions a
// record costs under valgrind, which timings on a shared machine are too
// noisy for (docs/collector.md, "Counting instructions"). It runs only
// when B7_CASE names a case; B7_SIDE is policyrun (the default),
// transform (or filter), handwritten or handwritten_in_order. The count is callgrind's, taken
// inside processorhelper's ConsumeLogs alone, so the copies made here and
// the test's set-up do not count:
//
//	GODEBUG=asyncpreemptoff=1 GOGC=off B7_CASE=edit valgrind --tool=callgrind \
//	  --toggle-collect='*processorhelper.NewLogs.func1' ./policyrunprocessor.test -test.run B7Instructions
//
// The test itself checks only that every copy went through.
func TestB7Instructions(t *testing.T) {
	name := os.Getenv("B7_CASE")
	if name == "" {
		t.Skip("B7_CASE names the case to count")
	}
	n := 20
	if s := os.Getenv("B7_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("B7_N: %v", err)
		}
	}
	var c *b7Case
	for i := range b7Cases {
		if b7Cases[i].name == name {
			c = &b7Cases[i]
		}
	}
	if c == nil {
		t.Fatalf("B7_CASE: no case %q", name)
	}
	var p processor.Logs
	switch side := os.Getenv("B7_SIDE"); side {
	case "", "policyrun":
		p, _ = b7Processors(t, *c)
	case "transform", "filter":
		_, p = b7Processors(t, *c)
	case "handwritten":
		p = handwrittenLogs(t, c.hand)
	case "handwritten_in_order":
		if c.inOrder == nil {
			t.Fatalf("B7_SIDE: case %q has no in-order floor", name)
		}
		p = handwrittenLogs(t, c.inOrder)
	default:
		t.Fatalf("B7_SIDE: no side %q", side)
	}
	in := b7Logs(t, c.k8s)
	copies := make([]plog.Logs, n)
	for i := range copies {
		copies[i] = plog.NewLogs()
		in.CopyTo(copies[i])
	}
	for _, ld := range copies {
		if err := p.ConsumeLogs(context.Background(), ld); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d records, %d batches", n*in.LogRecordCount(), n)
}
