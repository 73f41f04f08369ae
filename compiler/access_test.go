package compiler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// formatAccess writes one side of an Access as the disassembly does: the
// paths, then %time and %tag, comma-separated ("" for nothing).
func formatAccess(ps []record.Path, time, tag bool) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.String())
	}
	if time {
		parts = append(parts, "%time")
	}
	if tag {
		parts = append(parts, "%tag")
	}
	return strings.Join(parts, ", ")
}

func TestAccess(t *testing.T) {
	const otlp = "schema otlp {\n  attributes: { level: string, extra: map<any>?, ... }\n}\n"
	const typed = "schema {\n  k: string\n  m: map<any>\n  n: map<map<string>>\n  labels: map<string>\n" +
		"  attributes: map<any>\n  c: bool\n  u: string\n  body: string\n  ...\n}\n"
	tests := []struct {
		name, src     string
		reads, writes string
	}{
		{"nothing", "", "", ""},
		{"drop", "drop", "", ""},
		{"read and set", "set .b = .a", ".a", ".b"},
		{"nested constant paths", "set .x.y = .a.b.c", ".a.b.c", ".x.y"},
		{"quoted and constant keys", "set .\"a b\" = .m[\"k.1\"]", ".m.\"k.1\"", ".\"a b\""},
		{"a covered path is not listed", "set .a.b = .a.b.c\nset .a = .b ?? .b.c", ".a.b.c, .b", ".a"},
		{"dynamic key read", typed + "set .v = .m[.k]", ".k, .m", ".v"},
		{"dynamic key write", typed + "set .m[.k] = 1", ".k", ".m"},
		{"dynamic step in the middle", typed + "set .m[.k].x = .n[.k].y", ".k, .n", ".m"},
		{"array index is the array", "set .a[0] = .b[-1]\nset .c.d[1].e = 1", ".b", ".a, .c.d"},
		{"set ?= reads the target", "set .env ?= \"prod\"", ".env", ".env"},
		{"remove", typed + "remove .a, .b.c, .m[.k]", ".k", ".a, .b.c, .m"},
		{"rename", "rename .a.b to .c", ".a.b", ".a.b, .c"},
		{"lift writes the parent", "lift .k8s.labels prefix \"l_\"", ".k8s.labels", ".k8s"},
		{"lift under the root", "lift .k8s", ".k8s", "."},
		{"set the root", "set . = {\"a\": .a}", ".a", "."},
		{"read the root", "set .n = len(keys(.))", ".", ".n"},
		{"for reads what it iterates", typed + "for k, v in .labels {\n  set .up[k] = v\n}", ".labels", ".up"},
		{"locals read their path once", "let m = .x\nset .y = m.a ?? m[\"b\"]", ".x", ".y"},
		{"built-ins read their path whole", typed + "set .e = exists(.x.y) && keys(.attributes) != []", ".attributes, .x.y", ".e"},
		{"if and else", typed + "if .a == 1 {\n  set .b = 1\n} else if .c {\n  remove .d\n} else {\n  drop\n}", ".a, .c", ".b, .d"},
		{"drop when and stop when", "drop when .level == \"debug\"\nstop when exists(.done)\nset .x = 1", ".done, .level", ".x"},
		{"meta", "set %tag = %tag + \".x\"\nset %time = %time", "%time, %tag", "%time, %tag"},
		{"meta read only", "set .t = to_string(%time)\ndrop when %tag == \"x\"", "%time, %tag", ".t"},
		{"coalesce and in", "set .x = coalesce(.a, .b) ?? .c\ndrop when .l in [\"a\", \"b\"]", ".a, .b, .c, .l", ".x"},
		{"functions", typed + "set .h = sha256_hex(.u) + to_string(parse_json(.body).x ?? 0)", ".body, .u", ".h"},
		{"code after drop is left out", "drop\nset .x = .y", "", ""},
		{"a constant false branch is left out", "if false {\n  set .x = .y\n}\nset .z = 1", "", ".z"},
		{"tests do not count", "set .x = 1\ntest \"t\" {\n  input {\"a\": 1}\n  expect {\"a\": 1, \"x\": 1}\n}", "", ".x"},
		{"otlp attributes", otlp + "drop when .attributes.level == \"debug\"\nset .attributes[\"seen\"] = true",
			".attributes.level", ".attributes.seen"},
		{"otlp resource and body", otlp + "set .attributes.pod = as_string(.resource.attributes[\"k8s.pod.name\"]) ?? \"\"\nset .body = to_string(.body) + \"!\"",
			".body, .resource.attributes.\"k8s.pod.name\"", ".attributes.pod, .body"},
		{"otlp computed attribute", otlp + "for k, v in .resource.attributes {\n  set .attributes[\"r.\" + k] = v\n}\nset .severity_text = upper(.severity_text)",
			".resource.attributes, .severity_text", ".attributes, .severity_text"},
		{"otlp time and lift", otlp + "set %time = .observed_time\nlift .attributes.extra",
			".attributes.extra, .observed_time", ".attributes, %time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog := compileSrc(t, "policy \"p\"\n"+tt.src+"\n")
			a := prog.Access()
			if got := formatAccess(a.Reads, a.ReadsTime, a.ReadsTag); got != tt.reads {
				t.Errorf("reads %q, want %q", got, tt.reads)
			}
			if got := formatAccess(a.Writes, a.SetsTime, a.SetsTag); got != tt.writes {
				t.Errorf("writes %q, want %q", got, tt.writes)
			}
		})
	}
}

func compileSrc(t *testing.T, src string) *vm.Program {
	t.Helper()
	prog, diags := compiler.CompileFile("p.policy", []byte(src))
	if prog == nil {
		t.Fatalf("%v\n%s", diags, src)
	}
	return prog
}

// TestAccessSound checks the access sets of every conformance case
// against its test inputs: a run over a record of only the values under
// Reads and Writes (built as an embedder would: project) must end as the
// run over the whole input does, and change the record only under Writes.
func TestAccessSound(t *testing.T) {
	files, err := filepath.Glob("../conformance/cases/*.policy")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	runs := 0
	for _, fn := range files {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		f, info, diags := compiler.CheckFile(fn, src)
		if diags.Err() != nil {
			t.Errorf("%s: %v", fn, diags.Err())
			continue
		}
		prog, err := compiler.Compile(f, info, compiler.WithOptions(policytest.TestOptions()))
		if err != nil {
			t.Errorf("%s: %v", fn, err)
			continue
		}
		for _, tc := range f.Tests {
			if len(info.StateOrder) > 0 {
				// A stateful program remembers the first run's key:
				// each run gets a program with a memory of its own.
				prog = nil
			}
			if checkSound(t, fn+": "+tc.Name, func() *vm.Program {
				if prog != nil {
					return prog
				}
				p, err := compiler.Compile(f, info, compiler.WithOptions(policytest.TestOptions()))
				if err != nil {
					t.Fatal(err)
				}
				return p
			}, func(a *record.Arena) *record.Record {
				rec, err := policytest.NewInput(f, tc, a)
				if err != nil {
					t.Fatal(err)
				}
				return rec
			}) {
				runs++
			}
		}
	}
	if runs < 500 {
		t.Errorf("only %d runs", runs)
	}
}

// TestAccessSoundMore is TestAccessSound for what the conformance cases
// leave out: checks of the maps on the way to a path, writes through
// values that are not maps, computed keys, and OTLP records.
func TestAccessSoundMore(t *testing.T) {
	const k8s = "schema {\n  kubernetes: { labels: map<string>, annotations: map<string>?, ... }\n  ...\n}\n"
	const otlp = "schema otlp {\n  attributes: { level: string?, ... }\n}\n"
	tests := []struct {
		src    string
		inputs []string
	}{
		{k8s + "set .app = .kubernetes.labels[\"app\"] ?? \"none\"\nremove .kubernetes.annotations.owner",
			[]string{`{"kubernetes": {"labels": {}}}`, `{"kubernetes": {"labels": {"app": "a"}, "x": 1}}`,
				`{"kubernetes": {"labels": "s"}}`, `{"kubernetes": 3}`, `{"kubernetes": {"annotations": {"owner": "o", "k": 1}, "labels": {"app": 1}}}`, `{}`}},
		{"set .a.b.c = 1\nset .x.y ?= .z",
			[]string{`{}`, `{"a": "s"}`, `{"a": {"b": null}}`, `{"a": {"b": [1]}}`, `{"a": {"b": {"c": 0, "d": 1}}, "x": {"y": 1}}`, `{"x": 5, "z": 1}`, `{"x": {"y": null}, "z": {"q": 1}}`}},
		{"rename .a.b to .c.d\nrename .e to .a.f",
			[]string{`{}`, `{"a": {"b": 1}}`, `{"a": {"b": 1}, "c": 1}`, `{"a": 1, "e": 2}`, `{"a": {"b": {"x": 1}, "f": 0}, "c": {"d": 0, "k": 1}, "e": [1]}`}},
		{"lift .m.n prefix \"n_\"\nlift .p",
			[]string{`{}`, `{"m": {"n": {"a": 1}, "a": 0}}`, `{"m": {"n": 1}}`, `{"m": 1}`, `{"p": {"q": 1, "m": 2}, "m": {"n": {"q": 3}}}`}},
		{"schema {\n  k: string?\n  m: map<any>?\n  ...\n}\nif .k != null && .m != null {\n  set .v = .m[.k] ?? 0\n  set .m[.k + \"2\"] = .k\n  remove .m[\"x\"]\n}",
			[]string{`{}`, `{"k": "a", "m": {"a": 1, "x": 2}}`, `{"k": "a", "m": {}}`, `{"k": "a"}`}},
		{"set .a[0] = .b[-1] ?? 0\nremove .c[1]",
			[]string{`{}`, `{"a": [1, 2], "b": [3, 4], "c": [5, 6, 7]}`, `{"a": [], "b": []}`, `{"a": {"0": 1}}`, `{"c": "s"}`}},
		{"let seen = \"\"\nfor k, v in . {\n  drop when k == \"stop\"\n}\nset . = {\"all\": .}",
			[]string{`{}`, `{"a": 1, "b": {"c": 2}}`}},
		{otlp + "drop when .attributes.level == \"debug\"\nset .attributes.pod = as_string(.resource.attributes[\"k8s.pod.name\"]) ?? \"\"\nset .body = to_string(.body) + \"!\"\nset %time = .observed_time\nset %tag = %tag + \".otlp\"",
			[]string{`{"body": "x", "attributes": {"level": "info"}, "resource": {"attributes": {"k8s.pod.name": "p"}}, "observed_time": 5}`,
				`{"attributes": {"level": "debug"}}`, `{"attributes": {}, "resource": {"attributes": {}}}`, `{"attributes": {"level": 5}}`}},
		{otlp + "for k, v in .resource.attributes {\n  set .attributes[\"r.\" + k] = v\n}\nset .severity_text = upper(.severity_text)",
			[]string{`{"attributes": {"a": 1}, "resource": {"attributes": {"x": "y", "z": 1}}, "severity_text": "warn"}`, `{"attributes": {}, "resource": {"attributes": {}}, "severity_text": ""}`}},
	}
	for i, tt := range tests {
		prog := compileSrc(t, "policy \"p\"\n"+tt.src+"\n")
		for _, line := range tt.inputs {
			checkSound(t, fmt.Sprintf("policy %d, input %s", i, line), func() *vm.Program { return prog }, func(a *record.Arena) *record.Record {
				rec, err := a.DecodeJSON([]byte(line), record.Owned)
				if err != nil {
					t.Fatal(err)
				}
				rec.SetTag([]byte("app.web"))
				rec.SetTime(policytest.TestNow.UnixNano())
				rec.Commit()
				return rec
			})
		}
	}
}

// checkSound runs prog over a record from newInput and over its
// projection on prog's access sets (project), and reports an error unless
// both runs end alike and the input, with the projection's result put in
// under the paths of Writes, is the full run's result. It reports whether
// it checked: the size limit, which measures the whole record, is not.
func checkSound(t *testing.T, where string, progs func() *vm.Program, newInput func(*record.Arena) *record.Record) bool {
	t.Helper()
	prog := progs()
	acc := prog.Access()
	a := record.NewArena()
	full, in := newInput(a), newInput(a)
	red := project(in, acc)
	d := vm.NewDiffer(acc.Writes)
	d.Mark(red)
	fullRes, redRes := prog.Run(full), progs().Run(red)
	if fullRes.Fault == spec.RecordTooLarge {
		return false
	}
	// The otlp_view check runs over OTLP records only, not over this
	// projection (docs/vm.md: it is the embedder's): where the full run
	// faults with it, the reduced run keeps its record, and the input
	// patched from it fails the embedder's check (Record.CheckOTLP).
	if fullRes.Fault == spec.OTLPView {
		if redRes != (spec.Result{}) {
			t.Errorf("%s: %v over the input, %v over %s, want keep", where, fullRes, redRes, red.AppendJSON(nil))
			return true
		}
		want := newInput(a)
		for _, w := range acc.Writes {
			if v, ok := red.Get(w); ok {
				_ = want.Set(w, v)
			} else {
				want.Remove(w)
			}
		}
		if want.CheckOTLP() == nil {
			t.Errorf("%s: %v over the input, but the input patched from the reduced run passes CheckOTLP: %s", where, fullRes, want.AppendJSON(nil))
		}
		return true
	}
	if fullRes != redRes {
		t.Errorf("%s: %v over the input, %v over %s", where, fullRes, redRes, red.AppendJSON(nil))
		return true
	}
	if fullRes.Action == spec.Drop {
		return true
	}
	// The input with the reduced run's result under Writes must be the
	// full run's result (after a fault, both records are as they came).
	want := newInput(a)
	if fullRes.Faulted() {
		red = in
	}
	for _, w := range acc.Writes {
		if v, ok := red.Get(w); ok {
			if err := want.Set(w, v); err != nil {
				t.Fatalf("%s: set %s: %v", where, w, err)
			}
		} else {
			want.Remove(w)
		}
	}
	if acc.SetsTime {
		want.SetTime(red.Time())
	}
	if acc.SetsTag {
		want.SetTagValue(red.TagValue())
	}
	if !record.ValueEqual(a, full.Root(), a, want.Root()) || full.Time() != want.Time() || string(full.Tag()) != string(want.Tag()) {
		t.Errorf("%s: access %+v\nthe full run left  %s (time %d, tag %q)\nthe input patched from the reduced run %s (time %d, tag %q)",
			where, acc, full.AppendJSON(nil), full.Time(), full.Tag(), want.AppendJSON(nil), want.Time(), want.Tag())
	}
	// The same with only what the Differ says changed: the input patched
	// with its Edits, and its time and tag when it says they changed.
	patched := newInput(a)
	if d.Changed(red) {
		for _, e := range d.Edits(red) {
			if e.Value.Kind() == record.Absent {
				patched.Remove(e.Path)
			} else if err := patched.Set(e.Path, e.Value); err != nil {
				t.Fatalf("%s: set %s: %v", where, e.Path, err)
			}
		}
		if d.TimeChanged(red) {
			patched.SetTime(red.Time())
		}
		if d.TagChanged(red) {
			patched.SetTagValue(red.TagValue())
		}
	}
	if !record.ValueEqual(a, full.Root(), a, patched.Root()) || full.Time() != patched.Time() || string(full.Tag()) != string(patched.Tag()) {
		t.Errorf("%s: the full run left %s (time %d, tag %q)\nthe input patched from the Differ's edits %s (time %d, tag %q)",
			where, full.AppendJSON(nil), full.Time(), full.Tag(), patched.AppendJSON(nil), patched.Time(), patched.Tag())
	}
	return true
}

// project returns a record of in's values under the paths of acc: for
// each path, the maps on the way to it (empty but for what other paths
// put there) and the value at its end, or, where the path runs into a
// value that is not a map, that value. The time and the tag are in's
// when the program reads them, and others when it does not.
func project(in *record.Record, acc vm.Access) *record.Record {
	a := in.Arena()
	r := a.NewRecord()
	for _, p := range append(append([]record.Path(nil), acc.Reads...), acc.Writes...) {
		for i := 0; i <= len(p); i++ {
			v, ok := in.Get(p[:i])
			if !ok {
				break
			}
			if i == len(p) || v.Kind() != record.Map {
				if err := r.Set(p[:i], v); err != nil {
					panic(err)
				}
				break
			}
			if cur, ok := r.Get(p[:i]); !ok || cur.Kind() != record.Map {
				b := a.BeginMap(0)
				if err := r.Set(p[:i], b.Finish()); err != nil {
					panic(err)
				}
			}
		}
	}
	r.SetTime(1)
	if acc.ReadsTime {
		r.SetTime(in.Time())
	}
	if acc.ReadsTag {
		r.SetTagValue(in.TagValue())
	} else {
		r.SetTag([]byte("not.read"))
	}
	r.Commit()
	return r
}

// TestOTLPProjection runs OTLP policies over projections built as the
// Collector processor builds them: NewOTLPRecord (every fixed key at its
// default) and the values under the access sets set on it. The VM checks
// the view after a run over such a record as over a decoded one (an id
// that is not hex faults otlp_view), and the Differ reports the edits.
func TestOTLPProjection(t *testing.T) {
	const head = "policy \"p\"\nschema otlp {\n  attributes: { id: string?, ... }\n}\n"
	tests := []struct {
		src   string
		res   spec.Result
		edits string
	}{
		{"set .trace_id = .attributes.id ?? \"\"", spec.Result{Fault: spec.OTLPView}, ""},
		{"set .span_id = \"0102030405060708\"\nset .attributes.seen = true", spec.Result{}, ".attributes.seen=true .span_id=\"0102030405060708\""},
		{"set .resource.attributes.env = \"prod\"\nremove .attributes.id", spec.Result{}, ".attributes.id=absent .resource.attributes.env=\"prod\""},
		{"set .attributes.id = .attributes.id ?? \"\"", spec.Result{}, ""},
	}
	for _, tt := range tests {
		prog := compileSrc(t, head+tt.src+"\n")
		acc := prog.Access()
		a := record.NewArena()
		rec := a.NewOTLPRecord(record.Value{})
		for _, p := range acc.Paths() {
			if p.String() == ".attributes.id" || p.String() == ".attributes" {
				if err := rec.Set(record.MustParsePath(".attributes.id"), a.NewStringFrom("xyz")); err != nil {
					t.Fatal(err)
				}
			}
		}
		d := vm.NewDiffer(acc.Writes)
		d.Mark(rec)
		before := string(rec.AppendJSON(nil))
		res := prog.Run(rec)
		if res != tt.res {
			t.Errorf("%q: %v, want %v", tt.src, res, tt.res)
		}
		if res.Faulted() && (d.Changed(rec) || string(rec.AppendJSON(nil)) != before) {
			t.Errorf("%q: a fault left %s, want %s", tt.src, rec.AppendJSON(nil), before)
		}
		var got []string
		for _, e := range d.Edits(rec) {
			v := "absent"
			if e.Value.Kind() != record.Absent {
				v = string(a.AppendJSON(nil, e.Value))
			}
			got = append(got, e.Path.String()+"="+v)
		}
		if s := strings.Join(got, " "); s != tt.edits {
			t.Errorf("%q: edits %q, want %q", tt.src, s, tt.edits)
		}
	}
}
