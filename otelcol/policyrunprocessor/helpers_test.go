package policyrunprocessor

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/processor/processortest"
)

// writePolicies writes each source to a file of its own in a temporary
// directory and returns their paths.
func writePolicies(t testing.TB, srcs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, src := range srcs {
		f := filepath.Join(dir, fmt.Sprintf("p%d.policy", i))
		if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// newTest compiles the policies and returns the processor, with no
// telemetry.
func newTest(t testing.TB, srcs ...string) *logsProcessor {
	t.Helper()
	p, err := newFromConfig(processortest.NewNopSettings(Type), &Config{Policies: writePolicies(t, srcs...)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// generalOnly takes p's plans away, and with them the fast paths built
// from them (only, dropWhen, dropPred), so that every record takes the general path:
// the other side of the tests that hold the two paths equal.
func generalOnly(p *logsProcessor) {
	for i := range p.policies {
		p.policies[i].plan = nil
	}
	p.only, p.dropWhen, p.dropPred = nil, nil, nil
}

// logs builds plog.Logs from a compact spec: each resource group is a map
// of resource attributes and its scope groups, each scope a name and its
// records.
type rgroup struct {
	attrs  map[string]any
	scopes []sgroup
}

type sgroup struct {
	name string
	recs []func(plog.LogRecord)
}

func build(groups ...rgroup) plog.Logs {
	ld := plog.NewLogs()
	for _, g := range groups {
		rl := ld.ResourceLogs().AppendEmpty()
		putAll(rl.Resource().Attributes(), g.attrs)
		for _, s := range g.scopes {
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(s.name)
			for _, f := range s.recs {
				f(sl.LogRecords().AppendEmpty())
			}
		}
	}
	return ld
}

// putAll puts attributes in key order (a Go map has none).
func putAll(m pcommon.Map, kv map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if sub, ok := kv[k].(map[string]any); ok {
			putAll(m.PutEmptyMap(k), sub)
			continue
		}
		if err := m.PutEmpty(k).FromRaw(kv[k]); err != nil {
			panic(err)
		}
	}
}

// lrec returns a record builder: attributes, and a body when body is not
// nil; more sets other fields.
func lrec(body any, attrs map[string]any, more ...func(plog.LogRecord)) func(plog.LogRecord) {
	return func(lr plog.LogRecord) {
		if m, ok := body.(map[string]any); ok {
			putAll(lr.Body().SetEmptyMap(), m)
		} else if body != nil {
			if err := lr.Body().FromRaw(body); err != nil {
				panic(err)
			}
		}
		putAll(lr.Attributes(), attrs)
		for _, f := range more {
			f(lr)
		}
	}
}

// forRecords calls f on every log record of ld, with its resource.
func forRecords(ld plog.Logs, f func(res pcommon.Resource, lr plog.LogRecord)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		rl := rls.At(i)
		res := rl.Resource()
		sls := rl.ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				f(res, lrs.At(k))
			}
		}
	}
}

// dump renders logs compactly, for comparisons: one line per group and
// record, the fields that are not at their defaults, attributes in order.
func dump(ld plog.Logs) string {
	var b strings.Builder
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		fmt.Fprintf(&b, "R%s", mapText(rl.Resource().Attributes()))
		if rl.SchemaUrl() != "" {
			fmt.Fprintf(&b, " schema=%s", rl.SchemaUrl())
		}
		b.WriteByte('\n')
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			sc := sl.Scope()
			fmt.Fprintf(&b, "  S %s", sc.Name())
			if sc.Version() != "" {
				fmt.Fprintf(&b, " v=%s", sc.Version())
			}
			if sc.Attributes().Len() > 0 {
				fmt.Fprintf(&b, " %s", mapText(sc.Attributes()))
			}
			b.WriteByte('\n')
			for k := 0; k < sl.LogRecords().Len(); k++ {
				b.WriteString("    " + recText(sl.LogRecords().At(k)) + "\n")
			}
		}
	}
	return b.String()
}

func recText(lr plog.LogRecord) string {
	var parts []string
	if lr.Body().Type() != pcommon.ValueTypeEmpty {
		parts = append(parts, "body="+valueText(lr.Body()))
	}
	if lr.Attributes().Len() > 0 {
		parts = append(parts, mapText(lr.Attributes()))
	}
	if s := lr.SeverityText(); s != "" {
		parts = append(parts, "sev="+s)
	}
	if n := lr.SeverityNumber(); n != 0 {
		parts = append(parts, fmt.Sprintf("sevnum=%d", n))
	}
	if t := lr.Timestamp(); t != 0 {
		parts = append(parts, fmt.Sprintf("time=%d", t))
	}
	if t := lr.ObservedTimestamp(); t != 0 {
		parts = append(parts, fmt.Sprintf("observed=%d", t))
	}
	if id := lr.TraceID(); !id.IsEmpty() {
		parts = append(parts, "trace="+id.String())
	}
	if id := lr.SpanID(); !id.IsEmpty() {
		parts = append(parts, "span="+id.String())
	}
	if f := lr.Flags(); f != 0 {
		parts = append(parts, fmt.Sprintf("flags=%d", f))
	}
	if s := lr.EventName(); s != "" {
		parts = append(parts, "event="+s)
	}
	if n := lr.DroppedAttributesCount(); n != 0 {
		parts = append(parts, fmt.Sprintf("dropped=%d", n))
	}
	return strings.Join(parts, " ")
}

func mapText(m pcommon.Map) string {
	var parts []string
	m.Range(func(k string, v pcommon.Value) bool {
		parts = append(parts, k+"="+valueText(v))
		return true
	})
	return "{" + strings.Join(parts, " ") + "}"
}

func valueText(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeMap:
		return mapText(v.Map())
	case pcommon.ValueTypeSlice:
		var parts []string
		for i := 0; i < v.Slice().Len(); i++ {
			parts = append(parts, valueText(v.Slice().At(i)))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case pcommon.ValueTypeStr:
		return fmt.Sprintf("%q", v.Str())
	case pcommon.ValueTypeEmpty:
		return "null"
	case pcommon.ValueTypeBytes:
		return fmt.Sprintf("bytes(%x)", v.Bytes().AsRaw())
	}
	return v.AsString()
}

// consumeBoth gives each of two processors its own copy of in and
// returns what each made of it, for tests that compare the two.
func consumeBoth(t *testing.T, p, q consumer.Logs, in plog.Logs) (x, y plog.Logs) {
	t.Helper()
	x, y = plog.NewLogs(), plog.NewLogs()
	in.CopyTo(x)
	in.CopyTo(y)
	if err := p.ConsumeLogs(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	if err := q.ConsumeLogs(context.Background(), y); err != nil {
		t.Fatal(err)
	}
	return x, y
}
