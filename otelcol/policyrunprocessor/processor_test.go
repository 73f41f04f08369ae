package policyrunprocessor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processorhelper"
)

const head = "policy \"t\"\nschema otlp {\n  body: any?\n  attributes: { tenant: string?, secret: string?, id: string?, ... }\n}\n"

func sev(text string, n plog.SeverityNumber) func(plog.LogRecord) {
	return func(lr plog.LogRecord) { lr.SetSeverityText(text); lr.SetSeverityNumber(n) }
}

func times(t, observed uint64) func(plog.LogRecord) {
	return func(lr plog.LogRecord) {
		lr.SetTimestamp(pcommon.Timestamp(t))
		lr.SetObservedTimestamp(pcommon.Timestamp(observed))
	}
}

// one is a batch of one resource group and one scope group.
func one(recs ...func(plog.LogRecord)) plog.Logs {
	return build(rgroup{attrs: map[string]any{"host": "h"}, scopes: []sgroup{{name: "lib", recs: recs}}})
}

func TestProcessor(t *testing.T) {
	tests := []struct {
		name     string
		policies []string
		in       plog.Logs
		want     string
	}{
		{"add attribute", []string{head + "set .attributes.added = \"yes\"\n"},
			one(lrec("a", map[string]any{"x": 1}), lrec(nil, nil)),
			"R{host=\"h\"}\n  S lib\n    body=\"a\" {x=1 added=\"yes\"}\n    {added=\"yes\"}\n"},
		{"remove attribute", []string{head + "remove .attributes.secret\n"},
			one(lrec(nil, map[string]any{"a": 1, "secret": "s", "z": true}), lrec(nil, map[string]any{"a": 2})),
			"R{host=\"h\"}\n  S lib\n    {a=1 z=true}\n    {a=2}\n"},
		{"body edit", []string{"policy \"b\"\nschema otlp {\n  body: { msg: string?, password: string?, ... }?\n}\n" +
			"remove .body.password\nset .body.msg = upper(.body.msg ?? \"\")\nset .body.n = 1\n"},
			one(lrec(map[string]any{"msg": "hi", "password": "pw", "k": []any{1, "x"}}, nil), lrec(nil, nil)),
			"R{host=\"h\"}\n  S lib\n    body={k=[1 \"x\"] msg=\"HI\" n=1}\n    body={msg=\"\" n=1}\n"},
		{"whole attributes", []string{head + "let items = .attributes\nfor k, v in items {\n  set .attributes[\"c.\" + k] = v\n}\nremove .attributes.a\n"},
			one(lrec(nil, map[string]any{"a": 1, "b": map[string]any{"c": "d"}})),
			"R{host=\"h\"}\n  S lib\n    {b={c=\"d\"} c.a=1 c.b={c=\"d\"}}\n"},
		{"drop", []string{head + "drop when .severity_number < 9\n"},
			build(rgroup{attrs: map[string]any{"r": 1}, scopes: []sgroup{
				{name: "s1", recs: []func(plog.LogRecord){lrec("debug", nil, sev("DEBUG", 5)), lrec("info", nil, sev("INFO", 9))}},
				{name: "s2", recs: []func(plog.LogRecord){lrec("debug", nil, sev("DEBUG", 5))}}}},
				rgroup{attrs: map[string]any{"r": 2}, scopes: []sgroup{{name: "s3", recs: []func(plog.LogRecord){lrec("trace", nil, sev("TRACE", 1))}}}}),
			"R{r=1}\n  S s1\n    body=\"info\" sev=INFO sevnum=9\n"},
		{"fault leaves the record", []string{head + "set .attributes.touched = true\nset .trace_id = .attributes.id ?? \"\"\n"},
			one(lrec(nil, map[string]any{"id": "nothex"}), lrec(nil, map[string]any{"id": "0102030405060708090a0b0c0d0e0f10"})),
			"R{host=\"h\"}\n  S lib\n    {id=\"nothex\"}\n    {id=\"0102030405060708090a0b0c0d0e0f10\" touched=true} trace=0102030405060708090a0b0c0d0e0f10\n"},
		{"on_fault drop", []string{"policy \"t\" on_fault drop\nschema otlp\nset .span_id = as_string(.attributes.id) ?? \"\"\n"},
			one(lrec(nil, map[string]any{"id": "xyz"}), lrec(nil, map[string]any{"id": "0102030405060708"})),
			"R{host=\"h\"}\n  S lib\n    {id=\"0102030405060708\"} span=0102030405060708\n"},
		{"resource write moves only that record", []string{head + "if .attributes.tenant == \"a\" {\n  set .resource.attributes.tenant = \"a\"\n}\n"},
			build(rgroup{attrs: map[string]any{"host": "h"}, scopes: []sgroup{
				{name: "lib", recs: []func(plog.LogRecord){lrec("1", map[string]any{"tenant": "a"}), lrec("2", map[string]any{"tenant": "b"}), lrec("3", map[string]any{"tenant": "a"})}},
				{name: "lib2", recs: []func(plog.LogRecord){lrec("4", map[string]any{"tenant": "a"})}}}},
				rgroup{attrs: map[string]any{"host": "h"}, scopes: []sgroup{
					{name: "lib", recs: []func(plog.LogRecord){lrec("5", map[string]any{"tenant": "a"})}}}}),
			"R{host=\"h\"}\n  S lib\n    body=\"2\" {tenant=\"b\"}\n" +
				"R{host=\"h\" tenant=\"a\"}\n  S lib\n    body=\"1\" {tenant=\"a\"}\n    body=\"3\" {tenant=\"a\"}\n    body=\"5\" {tenant=\"a\"}\n  S lib2\n    body=\"4\" {tenant=\"a\"}\n"},
		{"resource write to what it is", []string{head + "set .resource.attributes.host = \"h\"\nset .resource.schema_url = .resource.schema_url\n"},
			one(lrec("1", nil), lrec("2", nil)),
			"R{host=\"h\"}\n  S lib\n    body=\"1\"\n    body=\"2\"\n"},
		{"resource write of every record", []string{head + "set .resource.attributes.env = \"prod\"\nset .resource.schema_url = \"https://s\"\n"},
			one(lrec("1", nil), lrec("2", nil)),
			"R{host=\"h\" env=\"prod\"} schema=https://s\n  S lib\n    body=\"1\"\n    body=\"2\"\n"},
		{"scope write", []string{head + "if .attributes.tenant == \"a\" {\n  set .scope.name = \"tenant-a\"\n  set .scope.version = \"1\"\n}\n"},
			one(lrec("1", map[string]any{"tenant": "a"}), lrec("2", nil), lrec("3", map[string]any{"tenant": "a"})),
			"R{host=\"h\"}\n  S lib\n    body=\"2\"\n  S tenant-a v=1\n    body=\"1\" {tenant=\"a\"}\n    body=\"3\" {tenant=\"a\"}\n"},
		{"resource and scope write", []string{head + "set .resource.attributes.tenant = .attributes.tenant ?? \"none\"\nset .scope.attributes.t = true\n"},
			one(lrec("1", map[string]any{"tenant": "a"}), lrec("2", nil)),
			"R{host=\"h\" tenant=\"a\"}\n  S lib {t=true}\n    body=\"1\" {tenant=\"a\"}\n" +
				"R{host=\"h\" tenant=\"none\"}\n  S lib {t=true}\n    body=\"2\"\n"},
		{"time write", []string{head + "set %time = .observed_time\n"},
			one(lrec("1", nil, times(5, 7)), lrec("2", nil, times(0, 9))),
			"R{host=\"h\"}\n  S lib\n    body=\"1\" time=7 observed=7\n    body=\"2\" observed=9\n"},
		{"observed time write keeps the time", []string{head + "set .observed_time = parse_time(\"2026-01-01\", \"%Y-%m-%d\") ?? now()\n"},
			one(lrec("1", nil, times(0, 9)), lrec("2", nil, times(4, 9))),
			"R{host=\"h\"}\n  S lib\n    body=\"1\" time=9 observed=1767225600000000000\n    body=\"2\" time=4 observed=1767225600000000000\n"},
		{"trace and span id", []string{head + "set .trace_id = \"AABBCCDDEEFF00112233445566778899\"\nset .span_id = \"\"\n"},
			one(lrec("1", nil, func(lr plog.LogRecord) { lr.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8}) })),
			"R{host=\"h\"}\n  S lib\n    body=\"1\" trace=aabbccddeeff00112233445566778899\n"},
		{"fixed fields", []string{head + "set .severity_text = \"WARN\"\nset .severity_number = 13\nset .flags = 1\nset .event_name = \"e\"\nset .dropped_attributes_count = 2\nset .body = null\n"},
			one(lrec("1", nil, sev("INFO", 9))),
			"R{host=\"h\"}\n  S lib\n    sev=WARN sevnum=13 flags=1 event=e dropped=2\n"},
		{"two policies in order", []string{head + "set .attributes.n = 1\n", head + "set .attributes.n = (as_int(.attributes.n) ?? 0) + 1\ndrop when .attributes.tenant == \"x\"\n"},
			one(lrec("1", nil), lrec("2", map[string]any{"tenant": "x"})),
			"R{host=\"h\"}\n  S lib\n    body=\"1\" {n=2}\n"},
		{"the body and the attributes replaced", []string{"policy \"w\"\nschema otlp\nset .body = \"new\"\nset .attributes = {\"k\": 0}\n"},
			one(lrec("1", map[string]any{"a": 1}, sev("INFO", 9))),
			"R{host=\"h\"}\n  S lib\n    body=\"new\" {k=0} sev=INFO sevnum=9\n"},
		{"read only", []string{head + "drop when .attributes.tenant == \"x\" && .body == \"never\"\n"},
			one(lrec("1", map[string]any{"tenant": "x"})),
			"R{host=\"h\"}\n  S lib\n    body=\"1\" {tenant=\"x\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTest(t, tt.policies...)
			out, err := p.processLogs(context.Background(), tt.in)
			if err != nil && !errors.Is(err, processorhelper.ErrSkipProcessingData) {
				t.Fatal(err)
			}
			if got := dump(out); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// A batch every record of which is dropped is skipped, as the filter
// processor does.
func TestProcessorDropAll(t *testing.T) {
	p := newTest(t, head+"drop\n")
	out, err := p.processLogs(context.Background(), one(lrec("1", nil), lrec("2", nil)))
	if !errors.Is(err, processorhelper.ErrSkipProcessingData) || out.ResourceLogs().Len() != 0 {
		t.Errorf("got %v and\n%s", err, dump(out))
	}
}

// Records the processor cannot read pass through as they came.
func TestProcessorUnreadable(t *testing.T) {
	p := newTest(t, head+"set .attributes.seen = true\nset .body = to_string(.body)\n")
	deep := map[string]any{}
	for i := 0; i < 200; i++ {
		deep = map[string]any{"d": deep}
	}
	in := one(lrec(deep, nil), lrec("ok", nil))
	want := dump(in)
	want = strings.Replace(want, "body=\"ok\"", "body=\"ok\" {seen=true}", 1)
	b := p.get()
	b.run(in)
	if got := dump(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if b.c.unread[tooDeep] != 1 {
		t.Errorf("unreadable counts %v", b.c.unread)
	}
}

// ConsumeLogs may be called from many goroutines at once.
func TestProcessorConcurrent(t *testing.T) {
	p := newTest(t, head+"set .attributes.added = \"yes\"\nif .attributes.tenant == \"a\" {\n  set .resource.attributes.tenant = \"a\"\n}\ndrop when .attributes.tenant == \"x\"\n")
	want := "R{host=\"h\"}\n  S lib\n    body=\"2\" {tenant=\"b\" added=\"yes\"}\n" +
		"R{host=\"h\" tenant=\"a\"}\n  S lib\n    body=\"1\" {tenant=\"a\" added=\"yes\"}\n"
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			for range 50 {
				in := one(lrec("1", map[string]any{"tenant": "a"}), lrec("x", map[string]any{"tenant": "x"}), lrec("2", map[string]any{"tenant": "b"}))
				out, _ := p.processLogs(context.Background(), in)
				if got := dump(out); got != want {
					errs <- got
					return
				}
			}
			errs <- ""
		}()
	}
	for range 8 {
		if got := <-errs; got != "" {
			t.Errorf("got\n%s\nwant\n%s", got, want)
		}
	}
}
