package policyrunprocessor

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// The plan (plan.go) against the general path: the same policies over the
// same records, one processor running its plans, the other with them
// taken away, must leave the same logs and count the same drops and
// faults. The records are made to hit every way a plan gives up: values
// of kinds the schema does not declare, null where it requires a value, a
// body that is not a map, NaN.

const planHead = "policy \"p\"\nschema otlp {\n" +
	"  body: { user: string?, n: int?, f: float?, ... }?\n" +
	"  attributes: { m: string?, code: int?, hit: bool?, f: float?, req: string, ... }\n" +
	"  resource: { attributes: { env: string?, ... } }\n" +
	"}\n"

var planPolicies = []string{
	"set .attributes.added = \"yes\"\n",
	"remove .body.user\nset .body.env = \"prod\"\n",
	"if .attributes.m == \"GET\" && (.attributes.code ?? 0) >= 500 && (.body.f ?? 0.0) > 1000.0 && .severity_number >= 13 && .attributes.hit == false {\n  set .attributes.slow = true\n}\n",
	"drop when .severity_number < 9\n",
	"drop when .resource.attributes.env == \"staging\"\nset .attributes.kept = 1\n",
	"set .attributes.copy = .attributes.m\nset .attributes.d ?= 2.5\nremove .attributes.code, .body.n\n",
	"if .attributes.req != \"x\" {\n  set .attributes.r = true\n} else if (.attributes.f ?? 0.0) < 1.5 {\n  stop\n} else {\n  set .attributes.r = false\n}\nset .attributes.after = 1\n",
	"stop when !(.attributes.hit ?? false) || (.attributes.m ?? \"\") > \"M\"\nset .body.n = .body.n ?? 0\n",
	"drop when .attributes.code != null && .attributes.code == 404\n",
	// A drop over what every record has: one RemoveIf (recordPred).
	"drop when !(.severity_number >= 9 && .severity_number != 13) || 21 <= .severity_number\n",
	"set .attributes.pod = .resource.attributes.env ?? \"\"\nlift .attributes.labels prefix \"k8s.label.\"\n",
	"lift .body.meta\nset .attributes.after = true\n",
	// Partly planned: the records that reach what the plan does not run
	// take the general path from the start.
	"drop when .severity_number < 9\nrename .attributes.m to .attributes.method\n",
	"if .attributes.m == \"GET\" {\n  set .attributes.u = upper(.attributes.req ?? \"\")\n} else if .attributes.hit ?? false {\n  for k, v in .attributes {\n    set .body[k] = true\n  }\n} else {\n  set .attributes.g = false\n}\nset .attributes.after = 2\n",
	"stop when .attributes.code == 404\nset .attributes.x = 1\nset .attributes.n = len(.attributes.m ?? \"\")\n",
}

func planRecords() plog.Logs {
	recs := []func(plog.LogRecord){
		lrec(map[string]any{"user": "u", "n": 1, "f": 2000.5}, map[string]any{"m": "GET", "code": 503, "hit": false, "req": "a"}, sev("WARN", 13)),
		lrec(map[string]any{"user": 7}, map[string]any{"m": 1, "code": "x", "req": "x", "f": 1.0}, sev("INFO", 9)),
		lrec("a string body", map[string]any{"m": nil, "req": nil, "hit": "yes"}, sev("DEBUG", 5)),
		lrec(nil, map[string]any{"req": "x", "f": 2.0, "code": 404, "d": map[string]any{"k": 1}}, sev("ERROR", 17)),
		lrec(map[string]any{"f": 3, "n": []any{1}}, map[string]any{"req": "y", "f": math.NaN(), "m": "Z", "hit": true}, sev("INFO", 10)),
		lrec(map[string]any{}, map[string]any{"req": "z", "code": 500.0, "added": "old", "copy": 1}, sev("FATAL", 21)),
		lrec(nil, nil, sev("INFO", 9)),
		lrec(map[string]any{"user": map[string]any{"deep": 1}}, map[string]any{"added": []any{1}, "code": map[string]any{"x": 1}, "req": "q"}, sev("INFO", 9)),
		lrec(map[string]any{"meta": map[string]any{"k": "v", "n": 2, "meta": true}}, map[string]any{"req": "l", "labels": map[string]any{"app": "web", "tier": 1, "k8s.label.app": "old"}, "k8s.label.tier": "x"}, sev("INFO", 9)),
		lrec(map[string]any{"meta": "str"}, map[string]any{"req": "l", "labels": "not a map"}, sev("INFO", 9)),
		lrec(map[string]any{"meta": map[string]any{"deep": map[string]any{"x": 1}}}, map[string]any{"req": "l", "labels": map[string]any{"nested": []any{1}}}, sev("INFO", 9)),
		lrec(map[string]any{"meta": nil}, map[string]any{"req": "l", "labels": nil}, sev("INFO", 9)),
	}
	return build(
		rgroup{attrs: map[string]any{"env": "prod"}, scopes: []sgroup{{name: "a", recs: recs}, {name: "b", recs: recs[:3]}}},
		rgroup{attrs: map[string]any{"env": "staging"}, scopes: []sgroup{{name: "c", recs: recs}}},
		rgroup{attrs: map[string]any{"env": 5}, scopes: []sgroup{{name: "d", recs: recs[2:]}}},
	)
}

func TestPlanEquivalent(t *testing.T) {
	var cases [][]string
	for _, p := range planPolicies {
		cases = append(cases, []string{planHead + p})
	}
	// Two policies: the second sees the first's edits, on either path.
	// A required key of an optional body: a fault where the body is there
	// without it (check.Info.PresentGuards).
	required := "policy \"r\"\nschema otlp {\n  body: { user: string, ... }?\n}\n"
	cases = append(cases, []string{required + "drop when .body.user == \"u\"\n"},
		[]string{strings.Replace(required, "policy \"r\"", "policy \"r\" on_fault drop", 1) + "set .attributes.u = .body.user\n"})
	// A lone `if` is gated (plan.gate): its condition faulting must still
	// count, and drop under on_fault drop.
	cases = append(cases, []string{strings.Replace(planHead, "policy \"p\"", "policy \"p\" on_fault drop", 1) + planPolicies[2]})
	cases = append(cases, []string{planHead + planPolicies[5], planHead + planPolicies[2]},
		[]string{planHead + planPolicies[1], planHead + "set .attributes.m2 = .attributes.m ?? \"none\"\n", planHead + planPolicies[3]})
	for _, srcs := range cases {
		planned, general := newTest(t, srcs...), newTest(t, srcs...)
		for i := range planned.policies {
			if planned.policies[i].plan == nil {
				t.Fatalf("no plan for\n%s: %s", srcs[i], planned.policies[i].why)
			}
		}
		generalOnly(general)
		x, y := planRecords(), planRecords()
		ca, cb := runCounts(t, planned, x), runCounts(t, general, y)
		if a, b := sortedDump(x), sortedDump(y); a != b {
			t.Errorf("%s\nthe plan:\n%s\nthe general path:\n%s", strings.Join(srcs, "--\n"), a, b)
		}
		if ca != cb {
			t.Errorf("%s\ncounts: the plan %s, the general path %s", strings.Join(srcs, "--\n"), ca, cb)
		}
	}
}

// planOf is the plan of the processor's one policy, planHead+src; the
// test fails when the policy has none.
func planOf(t *testing.T, src string) *plan {
	t.Helper()
	pl := newTest(t, planHead+src).policies[0].plan
	if pl == nil {
		t.Fatalf("no plan for %q", src)
	}
	return pl
}

func TestPlanGate(t *testing.T) {
	for _, c := range []struct {
		src   string
		gated bool
	}{
		{planPolicies[2], true},
		{"if .attributes.m == \"GET\" {\n  set .attributes.g = 1\n} else {\n  set .attributes.g = 2\n}\n", false},
		{"if .attributes.m == \"GET\" {\n  set .attributes.g = 1\n}\nset .attributes.after = 1\n", false},
		{planPolicies[3], false},
	} {
		pl := planOf(t, c.src)
		if gated := pl.gate != nil; gated != c.gated {
			t.Errorf("%q: gated %v, want %v", c.src, gated, c.gated)
		}
	}
}

// sortedDump is dump with every map's keys sorted: pdata's removal moves
// a map's last key into the gap, so the order depends on the order of the
// removals, which the engine does not define for pdata.
func sortedDump(ld plog.Logs) string {
	c := plog.NewLogs()
	ld.CopyTo(c)
	forRecords(c, func(_ pcommon.Resource, lr plog.LogRecord) {
		sortMap(lr.Attributes())
		if lr.Body().Type() == pcommon.ValueTypeMap {
			sortMap(lr.Body().Map())
		}
	})
	return dump(c)
}

func sortMap(m pcommon.Map) {
	raw := m.AsRaw()
	m.Clear()
	putAll(m, raw)
}

// runCounts runs p over ld and renders what it counted.
func runCounts(t *testing.T, p *logsProcessor, ld plog.Logs) string {
	t.Helper()
	b := p.get()
	b.run(ld)
	counts := countsText(&b.c)
	b.reset()
	p.put(b)
	return counts
}

func countsText(c *counts) string {
	var s strings.Builder
	for i, n := range c.drops {
		if n > 0 {
			s.WriteString("drop" + string(rune('0'+i)) + "=" + itoa(n) + " ")
		}
	}
	for i, n := range c.faults {
		if n > 0 {
			s.WriteString("fault" + string(rune('0'+i)) + "=" + itoa(n) + " ")
		}
	}
	return s.String() + "dropped=" + itoa(c.dropped)
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestPlanWhy: what keeps a policy on the general path is named, with its
// line.
func TestPlanWhy(t *testing.T) {
	for _, tt := range []struct {
		src, why string
		plan     bool // a plan for the records that do not reach it
	}{
		{"drop when .severity_number < 9\nrename .attributes.a to .attributes.b\n", "line 8: rename runs on the general path", true},
		{"if .attributes.m == \"GET\" {\n  set .attributes.u = upper(.attributes.m ?? \"\")\n}\n", "line 8: upper() runs on the general path", true},
		{"set .attributes.a = 1\nif .attributes.m == \"GET\" { stop }\nset .attributes.u = upper(.attributes.m ?? \"\")\n", "line 9: upper() runs on the general path", true},
		{"set .attributes.a = 1\nset .attributes.u = upper(.attributes.m ?? \"\")\ndrop\n", "line 8: upper() runs on the general path", false},
		{"rename .attributes.a to .attributes.b\n", "line 7: rename runs on the general path", false},
		{"lift .attributes.labels\nset .attributes.x = .attributes.y\n", "line 8: a read of a path an earlier statement writes", false},
		{"set .attributes.a = upper(.attributes.m ?? \"\")\n", "line 7: upper() runs on the general path", false},
		{"set .attributes.m = \"x\"\ndrop when .attributes.m == \"x\"\n", "line 8: a read of a path an earlier statement writes", false},
		{"set .severity_text = \"x\"\n", "line 7: set writes what the plan does not", false},
		{"set .attributes.a = %time\n", "line 7: %time runs on the general path", false},
	} {
		p := newTest(t, planHead+tt.src)
		if got := p.policies[0].why; (p.policies[0].plan != nil) != tt.plan || got != tt.why {
			t.Errorf("%q: plan %v, why %q; want %v, %q", tt.src, p.policies[0].plan != nil, got, tt.plan, tt.why)
		}
	}
}

// FuzzPlanEquivalent runs the plan policies over a record made from the
// input (its attributes' and body's kinds and values) on both paths.
func FuzzPlanEquivalent(f *testing.F) {
	f.Add([]byte("GET\x01\x05\x02"), uint8(13), uint8(3))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(5), uint8(0))
	f.Add([]byte("staging"), uint8(9), uint8(7))
	procs := map[int][2]*logsProcessor{}
	f.Fuzz(func(t *testing.T, data []byte, sevNum uint8, which uint8) {
		i := int(which) % len(planPolicies)
		pair, ok := procs[i]
		if !ok {
			pair = [2]*logsProcessor{newTest(t, planHead+planPolicies[i]), newTest(t, planHead+planPolicies[i])}
			generalOnly(pair[1])
			procs[i] = pair
		}
		rec := fuzzRecord(data, sevNum)
		env := any("prod")
		if len(data) > 0 && data[0]%3 == 0 {
			env = "staging"
		}
		mk := func() plog.Logs {
			return build(rgroup{attrs: map[string]any{"env": env}, scopes: []sgroup{{name: "s", recs: []func(plog.LogRecord){rec, rec}}}})
		}
		x, y := mk(), mk()
		ca, cb := runCounts(t, pair[0], x), runCounts(t, pair[1], y)
		if a, b := sortedDump(x), sortedDump(y); a != b || ca != cb {
			t.Errorf("policy %d on %q:\nthe plan %s\n%s\nthe general path %s\n%s", i, data, ca, a, cb, b)
		}
	})
}

// fuzzRecord makes a record from bytes: each key of the schema takes a
// kind and a value from the next bytes.
func fuzzRecord(data []byte, sevNum uint8) func(plog.LogRecord) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	value := func() (any, bool) {
		b := next()
		switch b % 8 {
		case 0:
			return nil, false // absent
		case 1:
			return nil, true // null
		case 2:
			return int64(next()) * 100, true
		case 3:
			return float64(next()) * 10.5, true
		case 4:
			return b%16 < 8, true
		case 5:
			return []string{"GET", "x", "M", "Z", ""}[next()%5], true
		case 6:
			return map[string]any{"k": 1}, true
		}
		return math.NaN(), true
	}
	attrs := map[string]any{}
	for _, k := range []string{"m", "code", "hit", "f", "req", "added", "copy", "d", "labels"} {
		if v, ok := value(); ok {
			attrs[k] = v
		}
	}
	var body any
	switch next() % 4 {
	case 0:
		body = map[string]any{}
		for _, k := range []string{"user", "n", "f", "meta"} {
			if v, ok := value(); ok {
				body.(map[string]any)[k] = v
			}
		}
	case 1:
		body = "text"
	case 2:
		body = int64(3)
	}
	return lrec(body, attrs, sev("", plog.SeverityNumber(sevNum%25)))
}

func TestRecordPred(t *testing.T) {
	for _, c := range []struct {
		cond string
		pred bool
	}{
		{".severity_number < 9", true},
		{"!(.severity_number >= 9 && .severity_number != 13) || 21 <= .severity_number", true},
		{".severity_number < 9.5", false}, // a float may be NaN: not this way
		{".severity_number < 9 && .attributes.m == \"GET\"", false},
	} {
		p := newTest(t, planHead+"drop when "+c.cond+"\n")
		if p.dropWhen == nil {
			t.Fatalf("%s: not a lone drop", c.cond)
		}
		if got := p.dropPred != nil; got != c.pred {
			t.Errorf("%s: a record predicate %v, want %v", c.cond, got, c.pred)
		}
	}
}

func TestPlanEdits(t *testing.T) {
	for _, c := range []struct {
		src         string
		edits, gate bool
	}{
		{planPolicies[0], true, false},
		{planPolicies[1], true, false},
		{planPolicies[2], false, true},
		{"set .attributes.a = 1\nset .attributes.a = 2\n", false, false}, // one key twice: decided
		{"set .attributes.a = .attributes.m\n", false, false},            // a read: decided
		{"set .attributes.a ?= 1\n", false, false},
		{planPolicies[3], false, false},
	} {
		pl := planOf(t, c.src)
		if got := pl.edits != nil; got != c.edits {
			t.Errorf("%q: edits %v, want %v", c.src, got, c.edits)
		}
		if got := pl.gateEdits != nil; got != c.gate {
			t.Errorf("%q: gated edits %v, want %v", c.src, got, c.gate)
		}
	}
}

// deep is a map nested n levels.
func deep(n int) any {
	var v any = "bottom"
	for range n {
		v = map[string]any{"k": v}
	}
	return v
}

// TestPlanTooDeep: a value nested deeper than the general path reads
// (record.DefaultMaxDepth) at a key a policy writes: the general path
// leaves the record as it came, counted, and so must the plan. Only
// policies whose projection is the keys they name: a lift or a loop over
// a map loads all of it, and there the paths differ (docs/collector.md).
func TestPlanTooDeep(t *testing.T) {
	recs := []func(plog.LogRecord){
		lrec(map[string]any{"user": deep(140), "env": "x"}, map[string]any{"req": "d"}, sev("WARN", 13)),
		lrec(map[string]any{"env": deep(140)}, map[string]any{"req": "d", "added": deep(140), "slow_error": deep(140)}, sev("WARN", 13)),
		lrec(map[string]any{"user": "u"}, map[string]any{"req": "d", "m": "GET", "code": 500, "hit": false, "slow": deep(140)}, sev("WARN", 13)),
	}
	logs := func() plog.Logs { return build(rgroup{scopes: []sgroup{{name: "a", recs: recs}}}) }
	for _, src := range planPolicies[:4] {
		planned, general := newTest(t, planHead+src), newTest(t, planHead+src)
		generalOnly(general)
		x, y := logs(), logs()
		ca, cb := runCounts(t, planned, x), runCounts(t, general, y)
		if a, b := sortedDump(x), sortedDump(y); a != b || ca != cb {
			t.Errorf("%s\nthe plan (%s):\n%s\nthe general path (%s):\n%s", src, ca, a, cb, b)
		}
	}
}

// TestLiftDuplicateKeys: a lift whose keys are its own (liftDistinct)
// over a map holding a key twice, which pdata decodes as it comes: the
// plan must look for the last action on the key, as the general path
// keeps the last.
func TestLiftDuplicateKeys(t *testing.T) {
	src := planHead + "set .attributes.pod = \"p\"\nlift .attributes.labels prefix \"k8s.label.\"\n"
	build := func() plog.Logs {
		ld := plog.NewLogs()
		lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		lr.Attributes().PutStr("req", "r")
		l := lr.Attributes().PutEmptyMap("labels")
		l.PutStr("app", "first")
		l.PutStr("apq", "second")
		b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
		if err != nil {
			t.Fatal(err)
		}
		// Same length: no length in the message changes.
		b = bytes.Replace(b, []byte("apq"), []byte("app"), 1)
		ld, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			t.Fatal(err)
		}
		return ld
	}
	planned, general := newTest(t, src), newTest(t, src)
	if pl := planned.policies[0].plan; pl == nil || !pl.liftDistinct {
		t.Fatalf("the lift's keys are not its own: %+v", pl)
	}
	generalOnly(general)
	x, y := build(), build()
	if n := x.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().AsRaw()["labels"].(map[string]any); len(n) != 1 {
		t.Fatalf("the map does not hold a key twice: %v", n)
	}
	ca, cb := runCounts(t, planned, x), runCounts(t, general, y)
	if a, b := sortedDump(x), sortedDump(y); a != b || ca != cb {
		t.Errorf("the plan (%s):\n%s\nthe general path (%s):\n%s", ca, a, cb, b)
	}
}
