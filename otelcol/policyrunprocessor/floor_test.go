package policyrunprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"
)

// The floor of B7 (docs/collector.md, "The floor: hand-written pdata"):
// each case's policy written directly in Go against pdata, with as few
// pdata calls as the case allows and no engine at all, wrapped by
// processorhelper as the policyrun processor is. What it costs is the
// cost of the pdata work itself; TestB7Handwritten holds its output to
// the policyrun processor's.

// handwritten is the function of a B7 case; it reports false when it
// left the batch empty.
type handwritten func(ld plog.Logs) bool

// set .attributes."bench.added" = "yes": the map is grown by the one
// entry (EnsureCapacity), not by append's doubling, as the processor
// grows it.
func handAddAttribute(ld plog.Logs) bool {
	forRecords(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
		a := lr.Attributes()
		a.EnsureCapacity(a.Len() + 1)
		a.PutStr("bench.added", "yes")
	})
	return true
}

// remove .body.user; set .body.env = "prod" (the body is a map, or
// absent, in the schema: a body of another type is left alone).
func handEdit(ld plog.Logs) bool {
	forRecords(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
		switch b := lr.Body(); b.Type() {
		case pcommon.ValueTypeMap:
			m := b.Map()
			m.Remove("user")
			m.PutStr("env", "prod")
		case pcommon.ValueTypeEmpty:
			b.SetEmptyMap().PutStr("env", "prod")
		}
	})
	return true
}

// if method == "GET" && (status ?? 0) >= 500 && (latency_ms ?? 0.0) >
// 1000.0 && severity_number >= 13 && cache.hit == false { set
// .attributes.slow_error = true }. The conditions only read, so the
// severity, a field of the record that needs no lookup and that only a
// quarter of gen's records pass, is tested first; then the others in the
// policy's order, stopping at the first false.
func handRead5Edit(ld plog.Logs) bool {
	forRecords(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
		if lr.SeverityNumber() < 13 {
			return
		}
		a := lr.Attributes()
		if v, ok := a.Get("http.request.method"); !ok || v.Type() != pcommon.ValueTypeStr || v.Str() != "GET" {
			return
		}
		if v, ok := a.Get("http.response.status_code"); !ok || v.Int() < 500 {
			return
		}
		b := lr.Body()
		if b.Type() != pcommon.ValueTypeMap {
			return
		}
		if v, ok := b.Map().Get("latency_ms"); !ok || v.Double() <= 1000.0 {
			return
		}
		setSlowError(a)
	})
	return true
}

// setSlowError is read5_edit's last condition, cache.hit == false, and
// its edit, where both floors of read5_edit end.
func setSlowError(a pcommon.Map) {
	if v, ok := a.Get("cache.hit"); ok && v.Type() == pcommon.ValueTypeBool && !v.Bool() {
		a.PutBool("slow_error", true)
	}
}

// drop when .severity_number < 9: the records go (RemoveIf), then the
// scope and resource groups that this left empty, as the processor takes
// them out (groups that came in empty stay).
func handDrop(ld plog.Logs) bool {
	rls := ld.ResourceLogs()
	rls.RemoveIf(func(rl plog.ResourceLogs) bool {
		sls := rl.ScopeLogs()
		emptied := false
		sls.RemoveIf(func(sl plog.ScopeLogs) bool {
			lrs := sl.LogRecords()
			n := lrs.Len()
			lrs.RemoveIf(func(lr plog.LogRecord) bool { return lr.SeverityNumber() < 9 })
			out := n > 0 && lrs.Len() == 0
			emptied = emptied || out
			return out
		})
		return emptied && sls.Len() == 0
	})
	return rls.Len() > 0
}

// handRead5EditInOrder is read5_edit as the policy says it: the
// conditions in the policy's order, each value's kind checked where the
// schema declares one (a kind it does not declare is the engine's fault,
// which leaves the record as it came). handRead5Edit tests the severity
// first, which the policy's order does not allow an engine to: the method
// is read from every record, and a record whose method is not a string
// faults whatever its severity. Both floors are measured (docs/collector.md).
func handRead5EditInOrder(ld plog.Logs) bool {
	forRecords(ld, func(_ pcommon.Resource, lr plog.LogRecord) {
		a := lr.Attributes()
		v, ok := a.Get("http.request.method")
		if !ok || v.Type() != pcommon.ValueTypeStr || v.Str() != "GET" {
			return // absent, a fault, or not GET
		}
		if v, ok := a.Get("http.response.status_code"); !ok || v.Type() != pcommon.ValueTypeInt || v.Int() < 500 {
			return // (absent ?? 0) >= 500 is false too
		}
		var latency float64
		switch b := lr.Body(); b.Type() {
		case pcommon.ValueTypeMap:
			if v, ok := b.Map().Get("latency_ms"); ok {
				switch v.Type() {
				case pcommon.ValueTypeDouble:
					latency = v.Double()
				case pcommon.ValueTypeInt:
					latency = float64(v.Int())
				case pcommon.ValueTypeEmpty:
				default:
					return
				}
			}
		case pcommon.ValueTypeEmpty:
		default:
			return
		}
		if latency <= 1000.0 || lr.SeverityNumber() < 13 {
			return
		}
		setSlowError(a)
	})
	return true
}

// set .attributes."k8s.pod.name" = .resource.attributes."k8s.pod.name"
// ?? "" (and the namespace); lift .attributes.labels prefix
// "k8s.label.": the resource's two attributes are read once per resource
// group (the policy reads them per record; the values are the same), and
// each record's map is grown once by what the edits add.
func handK8s(ld plog.Logs) bool {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		ra := rl.Resource().Attributes()
		var pod, ns string
		if v, ok := ra.Get("k8s.pod.name"); ok {
			pod = v.Str()
		}
		if v, ok := ra.Get("k8s.namespace.name"); ok {
			ns = v.Str()
		}
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				a := lrs.At(k).Attributes()
				var labels pcommon.Map
				lifts := false
				if v, ok := a.Get("labels"); ok && v.Type() == pcommon.ValueTypeMap {
					// The labels' entries live in their own kvlist, which
					// outlives the attribute's removal.
					labels, lifts = v.Map(), true
					a.Remove("labels")
				}
				n := 2
				if lifts {
					n += labels.Len()
				}
				a.EnsureCapacity(a.Len() + n)
				a.PutStr("k8s.pod.name", pod)
				a.PutStr("k8s.namespace.name", ns)
				if lifts {
					labels.Range(func(key string, v pcommon.Value) bool {
						if v.Type() == pcommon.ValueTypeStr {
							a.PutStr("k8s.label."+key, v.Str())
						} else {
							v.CopyTo(a.PutEmpty("k8s.label." + key))
						}
						return true
					})
				}
			}
		}
	}
	return true
}

// handwrittenLogs wraps f as the policyrun processor is wrapped
// (processorhelper, mutating, a batch left empty not passed on).
func handwrittenLogs(tb testing.TB, f handwritten) processor.Logs {
	ctx := context.Background()
	typ := component.MustNewType("handwritten")
	p, err := processorhelper.NewLogs(ctx, processortest.NewNopSettings(typ), struct{}{}, consumertest.NewNop(),
		func(_ context.Context, ld plog.Logs) (plog.Logs, error) {
			if !f(ld) {
				return ld, processorhelper.ErrSkipProcessingData
			}
			return ld, nil
		},
		processorhelper.WithCapabilities(consumer.Capabilities{MutatesData: true}))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// b7Edges is a batch of the records at the edges of the B7 cases, which
// gen's batches do not hold: severities either side of 9 and 13, a
// latency just over 1000, absent and mistyped fields, a label that is
// already there, a group that comes in empty and groups that the drop
// case empties.
func b7Edges() plog.Logs {
	sev := func(n plog.SeverityNumber) func(plog.LogRecord) {
		return func(lr plog.LogRecord) { lr.SetSeverityNumber(n) }
	}
	slow := map[string]any{"http.request.method": "GET", "http.response.status_code": 503, "cache.hit": false}
	body := map[string]any{"latency_ms": 1000.5, "user": "u"}
	return build(
		rgroup{attrs: map[string]any{"k8s.pod.name": "p", "k8s.namespace.name": "n"}, scopes: []sgroup{
			{name: "a", recs: []func(plog.LogRecord){
				lrec(body, slow, sev(13)),
				lrec(body, slow, sev(12)),
				lrec(map[string]any{"latency_ms": 1000.0}, slow, sev(13)),
				lrec(body, map[string]any{"http.request.method": "GET", "cache.hit": false}, sev(17)),
				lrec(body, map[string]any{"http.request.method": "GET", "http.response.status_code": 500}, sev(17)),
				lrec(nil, slow, sev(8)),
				lrec(map[string]any{}, map[string]any{"labels": map[string]any{"app": "x", "tier": "y"}, "k8s.label.app": "old"}, sev(9)),
				lrec(body, map[string]any{"labels": map[string]any{}}, sev(1)),
			}},
			{name: "empty"},
			{name: "dropped", recs: []func(plog.LogRecord){lrec(body, nil, sev(8)), lrec(nil, nil)}},
		}},
		rgroup{attrs: map[string]any{"k8s.pod.name": "q"}, scopes: []sgroup{
			{name: "b", recs: []func(plog.LogRecord){lrec(body, map[string]any{"labels": map[string]any{"app": "z"}}, sev(9))}},
		}},
		rgroup{attrs: map[string]any{"service.name": "gone"}, scopes: []sgroup{
			{name: "c", recs: []func(plog.LogRecord){lrec(body, slow, sev(5))}},
		}},
	)
}

// TestB7Handwritten holds the hand-written floor of every B7 case to the
// policyrun processor's output, on the case's batch and on b7Edges, so
// that the floor does the same work.
func TestB7Handwritten(t *testing.T) {
	for _, c := range b7Cases {
		t.Run(c.name, func(t *testing.T) {
			if c.hand == nil {
				t.Fatal("no hand-written function")
			}
			pr, _ := b7Processors(t, c)
			for _, hand := range []handwritten{c.hand, c.inOrder} {
				if hand == nil {
					continue
				}
				hw := handwrittenLogs(t, hand)
				for _, in := range []plog.Logs{b7Logs(t, c.k8s), b7Edges()} {
					x, y := consumeBoth(t, pr, hw, in)
					if d := diffLogs(x, y); d != "" {
						t.Errorf("policyrun and hand-written differ: %s", d)
					}
					if x.LogRecordCount() == in.LogRecordCount() && diffLogs(x, in) == "" {
						t.Errorf("the case changes nothing")
					}
				}
			}
		})
	}
}
