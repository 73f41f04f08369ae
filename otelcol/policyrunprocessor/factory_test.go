package policyrunprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/policyrun/policyrun/internal/testkit/racedetect"
	"github.com/policyrun/policyrun/record"
)

func TestFactory(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "policyrun" {
		t.Errorf("type %s", f.Type())
	}
	if err := componenttest.CheckConfigStruct(f.CreateDefaultConfig()); err != nil {
		t.Error(err)
	}
	if f.LogsStability().String() != "Development" {
		t.Errorf("stability %s", f.LogsStability())
	}
}

// TestEndToEnd runs the processor as the Collector does, through its
// factory, into a sink, and reads its metrics.
func TestEndToEnd(t *testing.T) {
	tel := componenttest.NewTelemetry()
	defer tel.Shutdown(context.Background())
	set := processortest.NewNopSettings(Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	cfg := &Config{Policies: writePolicies(t,
		"policy \"redact\"\nschema otlp\ndrop when .severity_text == \"DEBUG\"\nremove .attributes.password\n",
		"policy \"ids\" on_fault drop\nschema otlp {\n  attributes: { trace: string?, ... }\n}\nset .trace_id = .attributes.trace ?? \"\"\n",
	)}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), set, cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	if !lp.Capabilities().MutatesData {
		t.Error("the processor edits records and must say so")
	}
	if err := lp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	in := one(lrec("a", map[string]any{"password": "pw"}),
		lrec("b", nil, sev("DEBUG", 5)),
		lrec("c", map[string]any{"trace": "bad"}),
		lrec("d", map[string]any{"trace": "0102030405060708090a0b0c0d0e0f10"}))
	if err := lp.ConsumeLogs(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if err := lp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sink.AllLogs()) != 1 {
		t.Fatalf("%d batches", len(sink.AllLogs()))
	}
	want := "R{host=\"h\"}\n  S lib\n    body=\"a\"\n    body=\"d\" {trace=\"0102030405060708090a0b0c0d0e0f10\"} trace=0102030405060708090a0b0c0d0e0f10\n"
	if got := dump(sink.AllLogs()[0]); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for name, want := range map[string]string{
		metricIn:      "4 processor=policyrun",
		metricOut:     "2 processor=policyrun",
		metricDropped: "1 policy=ids processor=policyrun reason=otlp_view; 1 policy=redact processor=policyrun reason=drop",
		metricFaults:  "1 policy=ids processor=policyrun reason=otlp_view",
	} {
		m, err := tel.GetMetric(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := sumText(m); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// sumText renders the points of a counter: value and attributes, sorted.
func sumText(m metricdata.Metrics) string {
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		return fmt.Sprintf("%T", m.Data)
	}
	var pts []string
	for _, dp := range sum.DataPoints {
		s := fmt.Sprint(dp.Value)
		for _, kv := range dp.Attributes.ToSlice() {
			s += " " + string(kv.Key) + "=" + kv.Value.Emit()
		}
		pts = append(pts, s)
	}
	sort.Strings(pts)
	return strings.Join(pts, "; ")
}

// A policy with errors stops the processor at start with every
// diagnostic, rendered as policyrun check renders them.
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.policy")
	src := "policy \"bad\"\nschema otlp\ndrop when .severity_number == \"ERROR\"\nset .severty_text = \"x\"\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.policy")
	if err := os.WriteFile(plain, []byte("policy \"plain\"\nschema {\n  level: string\n  ...\n}\ndrop when .level == \"debug\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Policies: []string{bad, plain, filepath.Join(dir, "missing.policy")}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"policies do not load (2 errors, 0 warnings in 3 files)",
		"error[E0301]: ", bad + ":3:11", " 3 | drop when .severity_number == \"ERROR\"",
		"error[E0210]: ", bad + ":4:5", "= help: ",
		plain + ":2:1: the schema is for plain records",
		"missing.policy: no such file or directory",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "\x1b[") {
		t.Error("the error has colour")
	}
	if _, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(Type), cfg, consumertest.NewNop()); err == nil || err.Error() != msg {
		t.Errorf("create: %v", err)
	}
	if err := (&Config{}).Validate(); err == nil {
		t.Error("no policies: no error")
	}
}

// Every key of the view (record.OTLPView) has its place in pdata.
func TestFieldsCoverView(t *testing.T) {
	n := 0
	for _, vf := range record.OTLPView() {
		f, k := resolve(record.NewPath(vf.Name))
		if f == fNone || k != 1 || !fields[f].path.Equal(record.NewPath(vf.Name)) {
			t.Errorf(".%s resolves to %d", vf.Name, f)
		}
		n++
		for _, sub := range vf.Fields {
			f, k := resolve(record.NewPath(vf.Name, sub.Name))
			if f == fNone || k != 2 || fields[f].kind != sub.Kind {
				t.Errorf(".%s.%s resolves to %d", vf.Name, sub.Name, f)
			}
			n++
		}
	}
	if n != int(numFields)-2 {
		t.Errorf("%d keys in the view, %d fields", n, numFields-2)
	}
	if f, _ := resolve(record.NewPath("resource", "nope")); f != fNone {
		t.Errorf(".resource.nope resolves to %d", f)
	}
}

// A batch the policies leave unchanged costs no allocation once the
// processor's state has grown, and is not touched.
func TestUnchangedAllocatesNothing(t *testing.T) {
	p := newTest(t, head+"drop when .attributes.tenant == \"x\" && .resource.attributes.host == \"nope\"\n"+
		"if .severity_number > 100 {\n  set .attributes.big = true\n}\n",
		"policy \"k8s\"\nschema otlp\nset .attributes.pod = as_string(.resource.attributes.pod) ?? \"\"\nset .body = .body\n")
	in := build(rgroup{attrs: map[string]any{"host": "h", "pod": ""}, scopes: []sgroup{{name: "lib", recs: []func(plog.LogRecord){
		lrec(map[string]any{"msg": "m", "n": 1}, map[string]any{"tenant": "x", "pod": "", "b": []byte{1, 2}}, sev("INFO", 9)),
		lrec("s", map[string]any{"tenant": "y", "pod": ""}, sev("INFO", 9)),
	}}}})
	want := dump(in)
	ctx := context.Background()
	run := func() {
		if _, err := p.processLogs(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(200, run); n != 0 && !racedetect.Enabled {
		t.Errorf("%v allocations per batch", n)
	}
	if got := dump(in); got != want {
		t.Errorf("the batch changed:\n%s\nwant\n%s", got, want)
	}
}
