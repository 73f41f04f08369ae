package policyrunprocessor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/policyrun/policyrun/compiler"
	policysrc "github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The conformance cases for OTLP records (conformance/cases/otlp_*.policy)
// through the processor: every test block's input, made a plog.Logs of one
// record, runs through a processor with its plans and one without; both
// must leave the same logs with the same counts, and meet the test's
// expectation as the processor's semantics read it (docs/collector.md).
//
// An input becomes pdata through the engine's own codecs: the view is
// decoded as policytest decodes it (its record's time is the test's time
// when it has none), encoded as an OTLP request, and unmarshalled by
// pdata. The expected record goes the same way, so that both sides are
// what pdata can hold (pdata has no null body: an empty AnyValue is no
// body); the output comes back through the engine's OTLP decoder, and the
// views are compared as policytest compares them (%time is not part of
// the view).
//
// A policy that runs on the general path makes the first comparison one
// of the general path with itself, so each statement, top-level or in an
// if block, that the plan takes alone (under the policy's header and
// schema) also runs over every test's input on both paths: the plan then
// meets the cases' inputs, made to break refinements and the view,
// whatever its policy needs.

// pathSkips are the tests whose expectation the processor cannot meet by
// design, by file and test name, with the documented reason.
var pathSkips = map[string]string{
	"otlp_time_tag/neither time: the test's time": "the test sets %tag, and the Collector has no tag " +
		"(docs/collector.md, %tag is \"\"); now() is the processor's clock, not the tests' fixed one",
	"otlp_time_tag/set %time = .observed_time": "the test sets %tag, and the Collector has no tag (docs/collector.md, %tag is \"\")",
	"otlp_body_kinds/an empty AnyValue is a null body": "pdata has no null body: an empty AnyValue is no body, " +
		"which reads as absent (docs/collector.md, \"What it reads and writes\")",
}

// conformanceCase is one OTLP conformance file, checked.
type conformanceCase struct {
	name string // the file's name without .policy
	src  []byte
	f    *policysrc.File
}

func TestConformancePaths(t *testing.T) {
	// The OTLP cases: otlp_* and those of a construct in OTLP, split's.
	files, err := filepath.Glob("../../conformance/cases/otlp_*.policy")
	files = append(files, "../../conformance/cases/split_otlp.policy")
	if err != nil || len(files) == 1 {
		t.Fatalf("no OTLP conformance cases found (%v)", err)
	}
	var cases []conformanceCase
	tests := map[string]bool{}
	for _, fn := range files {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		f, _, ds := compiler.CheckFile(fn, src)
		if ds.HasErrors() {
			t.Fatalf("%s does not check: %v", fn, ds)
		}
		c := conformanceCase{name: strings.TrimSuffix(filepath.Base(fn), ".policy"), src: src, f: f}
		for _, tc := range f.Tests {
			tests[c.name+"/"+tc.Name] = true
		}
		cases = append(cases, c)
	}
	for key := range pathSkips {
		if !tests[key] {
			t.Errorf("pathSkips names %q, which is no test", key)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			planned, general := newTest(t, string(c.src)), newTest(t, string(c.src))
			if pol := planned.policies[0]; pol.plan != nil {
				t.Logf("%s runs as a plan", c.name)
			} else {
				t.Logf("%s runs on the general path: %s", c.name, pol.why)
			}
			generalOnly(general)
			for _, tc := range c.f.Tests {
				t.Run(tc.Name, func(t *testing.T) {
					if why, ok := pathSkips[c.name+"/"+tc.Name]; ok {
						t.Skip(why)
					}
					checkPaths(t, c.f, tc, planned, general)
				})
			}
			checkStatements(t, c)
		})
	}
}

// checkStatements runs each statement of c that the plan takes alone over
// the input of every test of c, on both paths.
func checkStatements(t *testing.T, c conformanceCase) {
	if len(c.f.Stmts) == 0 {
		return
	}
	head := string(c.src[:c.f.Stmts[0].Pos().Offset]) // the header and schema
	var lines []string
	for _, st := range statements(c.f.Stmts) {
		planned, general, ok := planPair(t, head+string(c.src[st.Pos().Offset:st.End().Offset])+"\n")
		if !ok {
			continue
		}
		lines = append(lines, strconv.Itoa(st.Pos().Line))
		for _, tc := range c.f.Tests {
			in := viewLogs(t, c.f, tc.Input, tc)
			x, y := plog.NewLogs(), plog.NewLogs()
			in.CopyTo(x)
			in.CopyTo(y)
			ca, cb := runCounts(t, planned, x), runCounts(t, general, y)
			if a, b := sortedDump(x), sortedDump(y); a != b || ca != cb {
				t.Errorf("line %d alone, test %q: the paths differ\nthe plan %s\n%s\nthe general path %s\n%s",
					st.Pos().Line, tc.Name, ca, a, cb, b)
			}
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "none")
	}
	t.Logf("%s: statements the plan takes alone: lines %s", c.name, strings.Join(lines, ", "))
}

// statements lists ss and the statements nested in their if blocks, each
// a policy's body alone when it uses no variable.
func statements(ss []policysrc.Stmt) []policysrc.Stmt {
	var out []policysrc.Stmt
	for _, s := range ss {
		switch s := s.(type) {
		case *policysrc.Block:
			out = append(out, statements(s.Stmts)...)
		case *policysrc.IfStmt:
			out = append(out, s)
			out = append(out, statements(s.Body.Stmts)...)
			if s.Else != nil {
				out = append(out, statements([]policysrc.Stmt{s.Else})...)
			}
		default:
			out = append(out, s)
		}
	}
	return out
}

// planPair compiles src twice, and takes the plan away from the second;
// ok is false when src does not compile (a statement that uses a
// variable, alone) or has no plan.
func planPair(t *testing.T, src string) (planned, general *logsProcessor, ok bool) {
	t.Helper()
	cfg := &Config{Policies: writePolicies(t, src)}
	planned, err := newFromConfig(processortest.NewNopSettings(Type), cfg)
	if err != nil || planned.policies[0].plan == nil {
		return nil, nil, false
	}
	general, err = newFromConfig(processortest.NewNopSettings(Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	generalOnly(general)
	return planned, general, true
}

// checkPaths runs test tc of f through both processors and checks them
// against each other and against the expectation.
func checkPaths(t *testing.T, f *policysrc.File, tc *policysrc.Test, planned, general *logsProcessor) {
	in := viewLogs(t, f, tc.Input, tc)
	x, y := plog.NewLogs(), plog.NewLogs()
	in.CopyTo(x)
	in.CopyTo(y)
	cx, cy := runPathCounts(planned, x), runPathCounts(general, y)
	if a, b := sortedDump(x), sortedDump(y); a != b {
		t.Errorf("the paths differ\nthe plan:\n%s\nthe general path:\n%s", a, b)
	}
	if a, b := countsText(&cx), countsText(&cy); a != b {
		t.Errorf("counts: the plan %s, the general path %s", a, b)
	}
	if cx.unread != [numUnreadable]int64{} {
		t.Errorf("records unreadable: %v", cx.unread)
	}
	faults, drops := sum(cx.faults), sum(cx.drops)
	got := x.LogRecordCount()
	switch tc.Expect {
	case policysrc.ExpectDropped:
		// Dropped by a drop, or by on_fault drop (as policytest has it).
		if got != 0 || cx.dropped != 1 || faults != 0 && f.OnFault != policysrc.OnFaultDrop {
			t.Errorf("want the record dropped; %d records left, %s\n%s", got, countsText(&cx), dump(x))
		}
	case policysrc.ExpectFault:
		// A fault leaves the record as the policy found it, or drops it
		// under on_fault drop, counted under the fault's reason.
		if faults != 1 {
			t.Errorf("want a fault; counts %s", countsText(&cx))
		}
		if f.OnFault == policysrc.OnFaultDrop {
			if got != 0 || cx.drops[spec.NoFault] != 0 || drops != 1 {
				t.Errorf("want the record dropped by on_fault drop; %d records left, %s", got, countsText(&cx))
			}
		} else if a, b := sortedDump(in), sortedDump(x); a != b {
			t.Errorf("the record changed although the run faulted\nin:\n%s\nout:\n%s", a, b)
		}
	case policysrc.ExpectRecord:
		if got != 1 || faults != 0 || drops != 0 {
			t.Fatalf("want one record kept without a fault; %d records, %s\n%s", got, countsText(&cx), dump(x))
		}
		want, have := viewOf(t, viewLogs(t, f, tc.Want, tc)), viewOf(t, x)
		if !policytest.Equal(want, have) {
			t.Errorf("the record differs from the expectation\n%s", policytest.Diff(want, have))
		}
	case policysrc.ExpectRecords:
		// A split: the records in order, each one LogRecord's view.
		elems := tc.Want.(*policysrc.ListLit).Elems
		if got != len(elems) || faults != 0 {
			t.Fatalf("want %d records kept without a fault; %d records, %s\n%s", len(elems), got, countsText(&cx), dump(x))
		}
		for i, e := range elems {
			want, have := viewOf(t, viewLogs(t, f, e, tc)), viewOf(t, nth(x, i))
			if !policytest.Equal(want, have) {
				t.Errorf("record %d differs from the expectation\n%s", i, policytest.Diff(want, have))
			}
		}
	default:
		t.Fatalf("expect kind %d is not checked here", tc.Expect)
	}
}

// viewLogs makes the plog.Logs of one record whose view is the literal
// lit (a test's input or expected record).
func viewLogs(t *testing.T, f *policysrc.File, lit policysrc.Expr, tc *policysrc.Test) plog.Logs {
	t.Helper()
	as := *tc
	as.Input, as.Tag = lit, nil
	rec, err := policytest.NewInput(f, &as, record.NewArena())
	if err != nil {
		t.Fatal(err)
	}
	var enc record.OTLPEncoder
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(enc.AppendProto(nil, []*record.Record{rec}))
	if err != nil {
		t.Fatal(err)
	}
	if ld.LogRecordCount() != 1 {
		t.Fatalf("the view made %d records", ld.LogRecordCount())
	}
	return ld
}

// nth is the logs of ld's i-th log record alone, in its resource and
// scope.
func nth(ld plog.Logs, i int) plog.Logs {
	out := plog.NewLogs()
	rls := ld.ResourceLogs()
	for ri := range rls.Len() {
		sls := rls.At(ri).ScopeLogs()
		for si := range sls.Len() {
			lrs := sls.At(si).LogRecords()
			if i >= lrs.Len() {
				i -= lrs.Len()
				continue
			}
			rl := out.ResourceLogs().AppendEmpty()
			rls.At(ri).Resource().CopyTo(rl.Resource())
			rl.SetSchemaUrl(rls.At(ri).SchemaUrl())
			sl := rl.ScopeLogs().AppendEmpty()
			sls.At(si).Scope().CopyTo(sl.Scope())
			sl.SetSchemaUrl(sls.At(si).SchemaUrl())
			lrs.At(i).CopyTo(sl.LogRecords().AppendEmpty())
			return out
		}
	}
	return out
}

// viewOf is the view of the one record of ld as JSON values.
func viewOf(t *testing.T, ld plog.Logs) any {
	t.Helper()
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := record.NewArena().DecodeOTLP(b, record.Owned, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records back from pdata (%v)", len(recs), err)
	}
	return policytest.Value(recs[0])
}

// runPathCounts runs p over ld and returns a copy of what it counted.
func runPathCounts(p *logsProcessor, ld plog.Logs) counts {
	b := p.get()
	if p.splits {
		b.runWhole(ld).CopyTo(ld)
	} else {
		b.run(ld)
	}
	c := b.c
	c.drops, c.faults = append([]int64(nil), b.c.drops...), append([]int64(nil), b.c.faults...)
	b.reset()
	p.put(b)
	return c
}

func sum(ns []int64) int64 {
	var s int64
	for _, n := range ns {
		s += n
	}
	return s
}
