package policyrunprocessor

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/internal/rusage"
	"github.com/policyrun/policyrun/internal/testkit/racedetect"
)

// B7 (BENCHMARKS.md): the same plog.Logs batches through the policyrun
// processor and through the transform / filter processor with the
// equivalent OTTL, both built by their factories as the Collector builds
// them. The batches are gen's B5 records (100 per ResourceLogs, 10
// attributes, a kvlist body of 5 entries, 5 resource attributes), ten
// ResourceLogs to a batch; the k8s case gives the resources Kubernetes
// attributes and each record a map of labels in place of cache.hit.

const (
	b7Requests = 10 // ResourceLogs of gen.OTLPBatch records per batch
	b7Seed     = 7
)

type b7Case struct {
	name   string
	policy string   // the policyrun policy
	ottl   []string // transform statements (log context), or
	filter []string // filter conditions
	k8s    bool
	hand   handwritten // the policy in Go against pdata (floor_test.go)
	// inOrder, where hand reorders the policy's conditions, is the
	// policy in Go in its own order (a second floor).
	inOrder handwritten
}

var b7Cases = []b7Case{
	{name: "add_attribute",
		policy: "set .attributes.\"bench.added\" = \"yes\"\n",
		ottl:   []string{`set(log.attributes["bench.added"], "yes")`},
		hand:   handAddAttribute},
	{name: "edit",
		policy: "remove .body.user\nset .body.env = \"prod\"\n",
		ottl:   []string{`delete_key(log.body, "user")`, `set(log.body["env"], "prod")`},
		hand:   handEdit},
	{name: "read5_edit",
		policy: "if .attributes.\"http.request.method\" == \"GET\" && (.attributes.\"http.response.status_code\" ?? 0) >= 500 &&\n" +
			"    (.body.latency_ms ?? 0.0) > 1000.0 && .severity_number >= 13 && .attributes.\"cache.hit\" == false {\n" +
			"  set .attributes.slow_error = true\n}\n",
		ottl: []string{`set(log.attributes["slow_error"], true) where log.attributes["http.request.method"] == "GET" and ` +
			`log.attributes["http.response.status_code"] >= 500 and log.body["latency_ms"] > 1000.0 and ` +
			`log.severity_number >= SEVERITY_NUMBER_WARN and log.attributes["cache.hit"] == false`},
		hand: handRead5Edit, inOrder: handRead5EditInOrder},
	{name: "drop",
		policy: "drop when .severity_number < 9\n",
		filter: []string{`log.severity_number < SEVERITY_NUMBER_INFO`},
		hand:   handDrop},
	{name: "k8s", k8s: true,
		policy: "set .attributes.\"k8s.pod.name\" = .resource.attributes.\"k8s.pod.name\" ?? \"\"\n" +
			"set .attributes.\"k8s.namespace.name\" = .resource.attributes.\"k8s.namespace.name\" ?? \"\"\n" +
			"lift .attributes.labels prefix \"k8s.label.\"\n",
		ottl: []string{`set(log.attributes["k8s.pod.name"], resource.attributes["k8s.pod.name"])`,
			`set(log.attributes["k8s.namespace.name"], resource.attributes["k8s.namespace.name"])`,
			`flatten(log.attributes["labels"], "k8s.label")`,
			`merge_maps(log.attributes, log.attributes["labels"], "upsert")`,
			`delete_key(log.attributes, "labels")`},
		hand: handK8s},
}

const b7Schema = "schema otlp {\n" +
	"  body: { user: string?, latency_ms: float?, ... }?\n" +
	"  attributes: { \"http.request.method\": string?, \"http.response.status_code\": int?, \"cache.hit\": bool?, labels: map<string>?, ... }\n" +
	"  resource: { attributes: { \"k8s.pod.name\": string?, \"k8s.namespace.name\": string?, ... } }\n" +
	"}\n"

// b7Logs returns a case's batch.
func b7Logs(tb testing.TB, k8s bool) plog.Logs {
	ld := plog.NewLogs()
	var u plog.ProtoUnmarshaler
	for i, req := range gen.OTLPRequests(b7Requests*gen.OTLPBatch, b7Seed) {
		part, err := u.UnmarshalLogs(req)
		if err != nil {
			tb.Fatal(err)
		}
		if k8s {
			kubernetes(part, i)
		}
		part.ResourceLogs().MoveAndAppendTo(ld.ResourceLogs())
	}
	return ld
}

// kubernetes makes a batch look as the k8sattributes processor leaves
// one: Kubernetes resource attributes, and labels on each record.
func kubernetes(ld plog.Logs, i int) {
	for j := 0; j < ld.ResourceLogs().Len(); j++ {
		rl := ld.ResourceLogs().At(j)
		svc, _ := rl.Resource().Attributes().Get("service.name")
		name := svc.Str()
		attrs := rl.Resource().Attributes()
		attrs.Clear()
		attrs.PutStr("k8s.namespace.name", "shop")
		attrs.PutStr("k8s.pod.name", fmt.Sprintf("%s-7d9f8b6c5-%05d", name, i))
		attrs.PutStr("k8s.pod.uid", fmt.Sprintf("0b6f5c1e-3a2d-4f8e-9c7b-%012d", i))
		attrs.PutStr("k8s.container.name", name)
		attrs.PutStr("k8s.node.name", fmt.Sprintf("node-%d", i%3))
		for k := 0; k < rl.ScopeLogs().Len(); k++ {
			lrs := rl.ScopeLogs().At(k).LogRecords()
			for n := 0; n < lrs.Len(); n++ {
				a := lrs.At(n).Attributes()
				a.Remove("cache.hit")
				l := a.PutEmptyMap("labels")
				l.PutStr("app", name)
				l.PutStr("tier", "backend")
				l.PutStr("version", "v2")
			}
		}
	}
}

// b7Processors returns the two processors of a case, started.
func b7Processors(tb testing.TB, c b7Case) (policyrun, ottl processor.Logs) {
	files := writePolicies(tb, "policy \"b7\"\n"+b7Schema+c.policy)
	policyrun = startLogs(tb, NewFactory(), &Config{Policies: files})
	var f processor.Factory
	var conf map[string]any
	if c.filter != nil {
		f, conf = filterprocessor.NewFactory(), map[string]any{"error_mode": "ignore", "log_conditions": toAny(c.filter)}
	} else {
		f, conf = transformprocessor.NewFactory(), map[string]any{"error_mode": "ignore", "log_statements": toAny(c.ottl)}
	}
	cfg := f.CreateDefaultConfig()
	if err := confmap.NewFromStringMap(conf).Unmarshal(cfg); err != nil {
		tb.Fatal(err)
	}
	if err := confmap.Validate(cfg); err != nil {
		tb.Fatal(err)
	}
	ottl = startLogs(tb, f, cfg)
	return policyrun, ottl
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func startLogs(tb testing.TB, f processor.Factory, cfg component.Config) processor.Logs {
	ctx := context.Background()
	p, err := f.CreateLogs(ctx, processortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		tb.Fatal(err)
	}
	if err := p.Start(ctx, componenttest.NewNopHost()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Shutdown(ctx) })
	return p
}

// TestB7Equivalent holds the two sides of every B7 case to the same
// output, so that the benchmark compares the same work.
func TestB7Equivalent(t *testing.T) {
	for _, c := range b7Cases {
		t.Run(c.name, func(t *testing.T) {
			pr, ottl := b7Processors(t, c)
			in := b7Logs(t, c.k8s)
			x, y := consumeBoth(t, pr, ottl, in)
			if d := diffLogs(x, y); d != "" {
				t.Errorf("policyrun and OTTL differ: %s", d)
			}
			if x.LogRecordCount() == in.LogRecordCount() && c.filter != nil || diffLogs(x, in) == "" {
				t.Errorf("the case changes nothing")
			}
		})
	}
}

// TestB7Allocations holds the processor, case by case, to at most the
// allocations and bytes the transform or filter processor spends on the
// same batch (a map the edits grow is grown by what they add, not by
// append's doubling), and to the counts it has now, which a change
// should not raise unnoticed.
func TestB7Allocations(t *testing.T) {
	if racedetect.Enabled {
		t.Skip("allocation counts mean nothing under the race detector")
	}
	most := map[string]float64{"add_attribute": 2, "edit": 1, "read5_edit": 0.02, "drop": 0.01, "k8s": 6}
	for _, c := range b7Cases {
		t.Run(c.name, func(t *testing.T) {
			pr, ottl := b7Processors(t, c)
			in := b7Logs(t, c.k8s)
			measure := func(p processor.Logs) (allocs, bytes float64) {
				ld := plog.NewLogs()
				in.CopyTo(ld)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				if err := p.ConsumeLogs(context.Background(), ld); err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				n := float64(in.LogRecordCount())
				return float64(after.Mallocs-before.Mallocs) / n, float64(after.TotalAlloc-before.TotalAlloc) / n
			}
			measure(pr) // the processor's state grows to the batch
			pa, pb := measure(pr)
			oa, ob := measure(ottl)
			if pa > oa || pb > ob {
				t.Errorf("policyrun: %.3f allocations, %.0f B a record; OTTL: %.3f, %.0f B", pa, pb, oa, ob)
			}
			if pa > most[c.name]+0.01 {
				t.Errorf("policyrun: %.3f allocations a record, at most %.3f before", pa, most[c.name])
			}
		})
	}
}

// diffLogs describes the first difference between two batches: groups
// and records in order, maps in any key order.
func diffLogs(x, y plog.Logs) string {
	xr, yr := x.ResourceLogs(), y.ResourceLogs()
	if xr.Len() != yr.Len() {
		return fmt.Sprintf("%d resource groups, %d", xr.Len(), yr.Len())
	}
	for i := 0; i < xr.Len(); i++ {
		a, b := xr.At(i), yr.At(i)
		if !resourceEqual(a, b) {
			return fmt.Sprintf("resource %d: %v, %v", i, a.Resource().Attributes().AsRaw(), b.Resource().Attributes().AsRaw())
		}
		if a.ScopeLogs().Len() != b.ScopeLogs().Len() {
			return fmt.Sprintf("resource %d: %d scope groups, %d", i, a.ScopeLogs().Len(), b.ScopeLogs().Len())
		}
		for j := 0; j < a.ScopeLogs().Len(); j++ {
			sa, sb := a.ScopeLogs().At(j), b.ScopeLogs().At(j)
			if !scopeEqual(sa, sb) || sa.LogRecords().Len() != sb.LogRecords().Len() {
				return fmt.Sprintf("scope %d.%d: %d records, %d", i, j, sa.LogRecords().Len(), sb.LogRecords().Len())
			}
			for k := 0; k < sa.LogRecords().Len(); k++ {
				ra, rb := sa.LogRecords().At(k), sb.LogRecords().At(k)
				if !ra.Body().Equal(rb.Body()) || !ra.Attributes().Equal(rb.Attributes()) ||
					ra.SeverityNumber() != rb.SeverityNumber() || ra.Timestamp() != rb.Timestamp() {
					return fmt.Sprintf("record %d.%d.%d:\n %s\n %s", i, j, k, recText(ra), recText(rb))
				}
			}
		}
	}
	return ""
}

// BenchmarkProcessor is B7: each case through the policyrun processor,
// as "transform" through OTTL (the transform processor; for drop, the
// filter processor, which is where OTTL drops), and as "handwritten"
// through the policy written in Go against pdata (floor_test.go: the
// cost of the pdata work alone), side by side.
func BenchmarkProcessor(b *testing.B) {
	for _, c := range b7Cases {
		pr, ottl := b7Processors(b, c)
		in := b7Logs(b, c.k8s)
		b.Run(c.name+"/policyrun", func(b *testing.B) { benchLogs(b, pr, in) })
		b.Run(c.name+"/transform", func(b *testing.B) { benchLogs(b, ottl, in) })
		hw := handwrittenLogs(b, c.hand)
		b.Run(c.name+"/handwritten", func(b *testing.B) { benchLogs(b, hw, in) })
		if c.inOrder != nil {
			io := handwrittenLogs(b, c.inOrder)
			b.Run(c.name+"/handwritten_in_order", func(b *testing.B) { benchLogs(b, io, in) })
		}
	}
}

// benchLogs runs p over fresh copies of in, made ahead in chunks with the
// timer stopped (and the garbage of the chunk before collected then), and
// reports per record: wall time, CPU time (user and system of the
// process, which takes in the collector's work on other cores, for what
// the processor itself allocates) and allocations (counted with the timer
// running, as ReportAllocs counts them per batch).
func benchLogs(b *testing.B, p processor.Logs, in plog.Logs) {
	const chunk = 32
	ctx := context.Background()
	records := in.LogRecordCount()
	copies := make([]plog.Logs, chunk)
	var cpu time.Duration
	var allocs uint64
	var ms runtime.MemStats
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%chunk == 0 {
			b.StopTimer()
			for j := range copies {
				copies[j] = plog.NewLogs()
				in.CopyTo(copies[j])
			}
			// Collect the last chunk now, with the timer stopped: else
			// the collector's idle workers mark the benchmark's own
			// copies on the spare core while the timer runs, and that
			// CPU, which varies from run to run by 2x, lands on
			// whichever processor is being timed.
			runtime.GC()
			b.StartTimer()
			runtime.ReadMemStats(&ms)
			allocs -= ms.Mallocs
			cpu -= cpuTime()
		}
		if err := p.ConsumeLogs(ctx, copies[i%chunk]); err != nil {
			b.Fatal(err)
		}
		if i%chunk == chunk-1 || i == b.N-1 {
			cpu += cpuTime()
			runtime.ReadMemStats(&ms)
			allocs += ms.Mallocs
		}
	}
	b.StopTimer()
	n := float64(b.N) * float64(records)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/record")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/record")
	b.ReportMetric(float64(allocs)/n, "allocs/record")
}

// cpuTime is the user and system time of the process so far.
func cpuTime() time.Duration {
	d, _ := rusage.CPU()
	return d
}
