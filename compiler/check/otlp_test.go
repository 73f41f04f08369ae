package check

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/record"
)

// otlpCodes checks src, an OTLP policy body after its header, and returns
// its diagnostics as "line:col code" (lines counted from the header's 1).
func otlpCodes(t *testing.T, src string) (string, []string) {
	t.Helper()
	_, ds := checkSource("t.policy", []byte("policy \"t\"\n"+src+"\n"))
	var got []string
	var msgs []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d:%d %s", d.Pos.Line, d.Pos.Col, d.Code))
		msgs = append(msgs, d.Msg+" | "+d.Label+" | "+d.Hint)
	}
	return strings.Join(got, ", "), msgs
}

// The record of schema otlp is the closed object of the view's keys
// (TestOTLPViewTypes); a block changes only the keys it refines.
func TestOTLPRoot(t *testing.T) {
	tests := []struct {
		schema string
		key    string // the key refined, "" for none
		want   string // its type
	}{
		{"schema otlp {}", "", ""},
		{"schema otlp {\n}", "", ""},
		{"schema otlp {\n  body: string\n}", "body", "string"},
		{"schema otlp {\n  body: map<any>?\n}", "body", "map<any>?"},
		{"schema otlp {\n  attributes: map<string>\n}", "attributes", "map<string>"},
		{"schema otlp {\n  attributes: {\n    \"http.method\": string?\n    ...\n  }\n}", "attributes", `{"http.method": string?, ...}`},
		{"schema otlp {\n  attributes: { code: int }\n}", "attributes", "{code: int}"},
		{"schema otlp {\n  resource: { attributes: { \"k8s.pod.name\": string?, ... } }\n}", "resource",
			`{attributes: {"k8s.pod.name": string?, ...}, dropped_attributes_count: int, schema_url: string}`},
		{"schema otlp {\n  scope: { attributes: map<int> }\n}", "scope",
			"{name: string, version: string, attributes: map<int>, dropped_attributes_count: int, schema_url: string}"},
		{"schema otlp {\n  resource: {}\n}", "", ""},
	}
	base, ds := checkSource("t.policy", []byte("policy \"t\"\nschema otlp\n"))
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	for _, tt := range tests {
		info, ds := checkSource("t.policy", []byte("policy \"t\"\n"+tt.schema+"\n"))
		if len(ds) > 0 {
			t.Errorf("%q: %v", tt.schema, ds)
			continue
		}
		root := info.Root
		if root.Open || root.NumFields() != base.Root.NumFields() {
			t.Errorf("%q: the record is %s", tt.schema, root)
			continue
		}
		for _, bf := range base.Root.Fields() {
			f, found := root.Field(bf.Name)
			switch {
			case !found:
				t.Errorf("%q: no key %s", tt.schema, bf.Name)
			case bf.Name == tt.key:
				if f.Type.String() != tt.want {
					t.Errorf("%q: %s is %s, want %s", tt.schema, bf.Name, f.Type, tt.want)
				}
				if f.Decl.Line != 3 {
					t.Errorf("%q: %s declared at %v, want line 3", tt.schema, bf.Name, f.Decl)
				}
			case !types.Identical(f.Type, bf.Type):
				t.Errorf("%q: %s is %s, want the view's %s", tt.schema, bf.Name, f.Type, bf.Type)
			}
		}
	}
}

// The view's types come from record.OTLPView, key by key.
func TestOTLPViewTypes(t *testing.T) {
	info, ds := checkSource("t.policy", []byte("policy \"t\"\nschema otlp\n"))
	if len(ds) > 0 {
		t.Fatal(ds)
	}
	var walk func(view []record.ViewField, obj *types.Type, at string)
	walk = func(view []record.ViewField, obj *types.Type, at string) {
		if obj.NumFields() != len(view) || obj.Open {
			t.Errorf("%s: %s for %d keys", at, obj, len(view))
		}
		for i, vf := range view {
			f, found := obj.Field(vf.Name)
			if o, _ := obj.FieldOrder(vf.Name); !found || o != i {
				t.Errorf("%s%s: missing or out of order", at, vf.Name)
				continue
			}
			want := map[record.Kind]string{record.Absent: "any?", record.String: "string", record.Int: "int", record.Timestamp: "timestamp"}[vf.Kind]
			switch {
			case vf.Kind == record.Map && vf.Fields == nil:
				want = "map<any>"
			case vf.Kind == record.Map:
				walk(vf.Fields, f.Type, at+vf.Name+".")
				continue
			}
			if f.Type.String() != want {
				t.Errorf("%s%s is %s, want %s", at, vf.Name, f.Type, want)
			}
		}
	}
	walk(record.OTLPView(), info.Root, ".")
	if got := refinable(); got != "body, attributes, resource.attributes and scope.attributes" {
		t.Errorf("refinable() = %q", got)
	}
}

func TestOTLPAccepts(t *testing.T) {
	const schema = `schema otlp {
  body: string?
  attributes: {
    "http.method": string?
    ...
  }
  resource: {
    attributes: {
      "k8s.pod.name": string?
      ...
    }
  }
}
`
	tests := []string{
		`drop when .severity_number < 9`,
		`drop when .severity_text == "DEBUG" || .flags != 0`,
		`set .attributes["pod"] = .resource.attributes["k8s.pod.name"] ?? ""`,
		`set .attributes.scope = .scope.name + "@" + .scope.version`,
		`set .resource.attributes["env"] = "prod"`,
		`set .resource.attributes.team = 1`,
		`set .scope.attributes["n"] = 1`,
		`set .attributes.x = 1`,
		`set .attributes["a b"] = [1, 2]`,
		`remove .attributes.y`,
		`remove .attributes["http.method"], .resource.attributes["k8s.pod.name"]`,
		`set .severity_number = 9`,
		`set .severity_text = upper(.severity_text)`,
		`set .trace_id = ""`,
		`set .observed_time = %time`,
		`set %time = .observed_time`,
		`set %time = now()`,
		`set .body = upper(.body ?? "")`,
		`set .body = {"msg": .body, "n": 1}`,
		`set .attributes = {"only": 1}`,
		`set .resource = {"attributes": {"a": "b"}, "schema_url": ""}`,
		`rename .attributes.lvl to .attributes.level`,
		`rename .attributes["http.method"] to .attributes.method`,
		`lift .attributes.nested prefix "n_"`,
		`for k, v in .attributes {⏎  set .body = k⏎}`,
		`for k, v in .resource.attributes {⏎  set .attributes[k] = v⏎}`,
		`let otlp = .span_id⏎set .attributes.span = otlp`,
		`set .dropped_attributes_count = .dropped_attributes_count + 1`,
		`set .attributes.n = len(.attributes)`,
		`drop when exists(.attributes["http.method"])`,
		`set .attributes.x ?= "x"`,
		// a test input gives the view's timestamps as the view's JSON does
		`drop when .observed_time > %time⏎test "t" {⏎  input {"observed_time": "2026-01-01T00:00:00.5Z"}⏎  expect dropped⏎}`,
		`drop when .observed_time > %time⏎test "t" {⏎  input {"observed_time": 1767225600000000000}⏎  expect dropped⏎}`,
	}
	for _, body := range tests {
		src := schema + "\n" + strings.ReplaceAll(body, "⏎", "\n")
		if got, msgs := otlpCodes(t, src); got != "" {
			t.Errorf("%s: %s\n%s", body, got, strings.Join(msgs, "\n"))
		}
	}
}

func TestOTLPRejects(t *testing.T) {
	tests := []struct {
		src  string // after the header, line 2 on
		want string // line:col code, ...
		msg  string // in the first diagnostic's message, label or hint
	}{
		// reads of the view
		{"schema otlp\ndrop when .severty_text == \"x\"", "3:11 E0201", "did you mean .severity_text?"},
		{"schema otlp\ndrop when .severity_number == \"ERROR\"", "3:11 E0301", "cannot compare int with string"},
		{"schema otlp\nset .attributes.t = .trace_id + 1", "3:21 E0303", "cannot add string and int"},
		{"schema otlp\nset .attributes.t = .span_id * 2", "3:21 E0303", ""},
		{"schema otlp\ndrop when .resource.nme == \"\"", "3:20 E0201", "other values are in .resource.attributes"},
		{"schema otlp\ndrop when .scope.nmae == \"\"", "3:17 E0201", "did you mean .scope.name?"},
		{"schema otlp\ndrop when .level == \"x\"", "3:11 E0201", "only the keys of the OTLP view"},
		{"schema otlp\nset .attributes.n = .observed_time + 1", "3:21 E0303", ""},
		{"schema otlp\nset .attributes.b = upper(.body)", "3:27 E0308", ""},
		{"schema otlp {\n  attributes: { code: int }\n}\ndrop when .attributes.cod == 1", "5:22 E0201", "did you mean .attributes.code?"},
		{"schema otlp {\n  attributes: { code: int }\n}\ndrop when .attributes.code == \"1\"", "5:11 E0301", ""},
		// the block
		{"schema otlp {\n  severity_number: string\n}", "3:3 E0104", "refines only body, attributes, resource.attributes and scope.attributes"},
		{"schema otlp {\n  trace_id: string\n}", "3:3 E0104", "cannot refine trace_id"},
		{"schema otlp {\n  foo: int\n}", "3:3 E0103", "attributes: { foo: ... }"},
		{"schema otlp {\n  severty_text: string\n}", "3:3 E0103", "did you mean severity_text?"},
		{"schema otlp {\n  \"k8s.pod.name\": string\n}", "3:3 E0103", `attributes: { "k8s.pod.name": ... }`},
		{"schema otlp {\n  attributes: map<string>?\n}", "3:15 E0104", "never absent"},
		{"schema otlp {\n  attributes: string\n}", "3:15 E0104", "refined by an object or a map type"},
		{"schema otlp {\n  attributes: array<string>\n}", "3:15 E0104", ""},
		{"schema otlp {\n  resource: map<string>\n}", "3:13 E0104", "resource: { attributes: { ... } }"},
		{"schema otlp {\n  resource: { attributes: map<string> }?\n}", "3:13 E0104", ""},
		{"schema otlp {\n  resource: {\n    schema_url: int\n  }\n}", "4:5 E0104", "cannot refine resource.schema_url"},
		{"schema otlp {\n  resource: {\n    pod: string\n  }\n}", "4:5 E0103", "resource: { attributes: { pod: ... } }"},
		{"schema otlp {\n  scope: {\n    attributes: int\n  }\n}", "4:17 E0104", "scope.attributes"},
		{"schema otlp {\n  scope: {\n    name: int\n  }\n}", "4:5 E0104", ""},
		{"schema otlp {\n  body: string\n  ...\n}", "4:3 E0104", "cannot be opened"},
		{"schema otlp {\n  resource: {\n    ...\n  }\n}", "4:5 E0104", ""},
		{"schema otlp {\n  body: string\n  body: int\n}", "4:3 E0101", ""},
		{"schema otlp {\n  attributes: {\n    a: int\n    a: int\n  }\n}", "5:5 E0101", ""},
		{"schema otlp {\n  attributes: {\n    a: integer\n  }\n}", "4:8 E0018", ""},
		// writes
		{"schema otlp\nset .foo = 1", "3:5 E0210", "keep other values in the attributes: .attributes.foo"},
		{"schema otlp\nset .severty_text = \"x\"", "3:5 E0210", "did you mean .severity_text?"},
		{"schema otlp\nset .resource.pod = \"x\"", "3:5 E0210", ".resource.attributes.pod"},
		{"schema otlp\nset .severity_number = \"9\"", "3:5 E0210", "the OTLP view's .severity_number is int"},
		{"schema otlp\nset .observed_time = \"2026\"", "3:5 E0210", "parse_time"},
		{"schema otlp\nset .severity_text = .attributes[\"x\"]", "3:22 E0308", "as_string"},
		{"schema otlp\nset .severity_text = .attributes[\"x\"] ?? \"\"", "3:22 E0308", "as_string"},
		{"schema otlp {\n  attributes: { lvl: string? }\n}\nset .severity_text = .attributes.lvl", "5:22 E0307", `.attributes.lvl ?? ""`},
		{"schema otlp\nset .attributes = \"x\"", "3:5 E0210", "map<any>"},
		{"schema otlp\nset .attributes = .attributes[\"m\"]", "3:5 E0210", ""},
		{"schema otlp\nset .resource = {\"attributes\": {}, \"nme\": 1}", "3:5 E0210", "no key .resource.nme"},
		{"schema otlp\nset .resource = {\"schema_url\": 1}", "3:5 E0210", "the OTLP view's .resource.schema_url is string"},
		{"schema otlp\nset .scope = \"x\"", "3:5 E0210", ""},
		{"schema otlp\nset . = {\"foo\": 1}", "3:5 E0210", "cannot replace an OTLP record"},
		{"schema otlp\nset . = {\"body\": \"x\"}", "3:5 E0210", "cannot replace an OTLP record"},
		{"schema otlp\nset . = .attributes", "3:5 E0210", "cannot replace an OTLP record"},
		{"schema otlp\nlet k = \"a\"\nset .[k] = 1", "4:5 E0210", "known only at run time"},
		{"schema otlp\nrename .attributes.sev to .severity_number", "3:27 E0210", "is int"},
		{"schema otlp\nrename .attributes.x to .x", "3:25 E0210", ".attributes.x"},
		{"schema otlp\nset .event_name ?= \"x\"", "3:5 W0005", "never absent"},
		{"schema otlp\nlift .attributes", "3:6 E0210", "its keys would go into the record"},
		{"schema otlp\nlift .resource.attributes", "3:6 E0210", "its keys would go into .resource"},
		// tests: the view types a test input
		{"schema otlp\ndrop when .severity_number > 9\ntest \"t\" {\n  input {\"severity_number\": \"x\"}\n  expect dropped\n}",
			"5:29 W0006", "the OTLP view gives .severity_number type int"},
		{"schema otlp\ndrop when .observed_time > %time\ntest \"t\" {\n  input {\"observed_time\": true}\n  expect dropped\n}",
			"5:27 W0006", "the OTLP view gives .observed_time type timestamp"},
	}
	for _, tt := range tests {
		got, msgs := otlpCodes(t, tt.src)
		if got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s\n%s", tt.src, got, tt.want, strings.Join(msgs, "\n"))
			continue
		}
		if !strings.Contains(msgs[0], tt.msg) {
			t.Errorf("%q: %q does not say %q", tt.src, msgs[0], tt.msg)
		}
	}
}

// Without schema otlp, the view's keys are ordinary: no view, no checks.
func TestOTLPOnlyWithSchema(t *testing.T) {
	for _, src := range []string{
		"set .foo = 1\nset .severity_number = \"x\"\nlift .attributes",
		"schema {\n  severity_number: string\n  ...\n}\nset .foo = .severity_number",
		"let otlp = 1\nset .otlp = otlp",
	} {
		if got, msgs := otlpCodes(t, src); got != "" {
			t.Errorf("%q: %s\n%s", src, got, strings.Join(msgs, "\n"))
		}
	}
}
