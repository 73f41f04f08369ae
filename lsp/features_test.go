package lsp

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// cursor splits src at its '|': the text, and the cursor's offset.
func cursor(src string) (string, int) {
	i := strings.IndexByte(src, '|')
	return src[:i] + src[i+1:], i
}

func completionLabels(t *testing.T, src string) []string {
	t.Helper()
	text, off := cursor(src)
	s := &server{w: &writer{w: io.Discard}, docs: map[string]*document{}}
	list := s.completion(newDocument("file:///t.policy", 1, text), off).(completionList)
	var out []string
	for _, it := range list.Items {
		out = append(out, it.Label)
	}
	return out
}

const schemaAB = "policy \"p\"\nschema {\n  a: {b: int, \"c d\": string}\n  n: array<{m: bool}>\n  ...\n}\n"

func TestCompletionContexts(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string // exactly, or nil for none
	}{
		{schemaAB + "let x = .a\nset .y = x.|\n", []string{"b", "c d"}},
		{schemaAB + "set .y = .a.b|\n", []string{"b", "c d"}}, // a name being typed
		{schemaAB + "set .y = .n[0].|\n", []string{"m"}},      // through an index
		{schemaAB + "set .y = .a.\"c d\".|\n", nil},           // a string has no fields
		{schemaAB + "set .y = parse_url(.u ?? \"\").|\n", []string{"scheme", "user", "host", "port", "path", "query", "fragment"}},
		{schemaAB + "set .|\n", []string{"a", "n"}},
		{schemaAB + "set .y = nocall(.a).|\n", nil},     // not the record's fields     // no '=' yet: the schema's fields
		{schemaAB + "set .a.|\n", []string{"b", "c d"}}, // read from the text
		{schemaAB + "# see .|\n", nil},                  // a comment
		{schemaAB + "set .y = \"x.|\"\n", nil},          // a string
		{schemaAB + "set .y = \"x.|\n", nil},            // an unterminated one
		{schemaAB + "set .y = 1.|\n", nil},              // a number
		{schemaAB + "set .y = %|\n", []string{"time", "tag"}},
		{"policy \"p\"\nschema {\n  a: |\n}\n", []string{"bool", "int", "float", "string", "bytes", "timestamp", "null", "any", "array", "map", "otlp"}},
	} {
		got := completionLabels(t, tc.src)
		if !slices.Equal(got, tc.want) {
			t.Errorf("completion at %q = %v, want %v", tc.src[len(schemaAB)-1:], got, tc.want)
		}
	}
}

// Locals in scope: the lets before the cursor in its block and the
// blocks around it, the fors' variables inside their bodies.
func TestCompletionLocals(t *testing.T) {
	src := "policy \"p\"\nlet top = 1\nfor k, v in . {\n  let inner = k\n  if true {\n    let deep = 2\n    set .a = |\n  }\n  let after = 3\n}\nlet later = 4\n"
	got := completionLabels(t, src)
	for _, w := range []string{"top", "k", "v", "inner", "deep"} {
		if !slices.Contains(got, w) {
			t.Errorf("locals lack %s: %v", w, got)
		}
	}
	for _, w := range []string{"after", "later"} {
		if slices.Contains(got, w) {
			t.Errorf("locals have %s, not yet in scope: %v", w, got)
		}
	}
	got = completionLabels(t, strings.Replace(src, "    set .a = |\n", "", 1)+"set .b = |\n")
	if slices.Contains(got, "k") || slices.Contains(got, "inner") || !slices.Contains(got, "later") {
		t.Errorf("locals after the for: %v", got)
	}
}

func TestHoverAndDefinitionOTLP(t *testing.T) {
	text, off := cursor("policy \"o\"\nschema otlp {\n  attributes: {\n    \"http.route\": string?\n    ...\n  }\n}\nset .r = .attributes.\"http.ro|ute\" ?? \"\"\nset .s = .severity_number\n")
	s := &server{w: &writer{w: io.Discard}, docs: map[string]*document{}}
	d := newDocument("file:///o.policy", 1, text)
	h, _ := s.hover(d, off).(hover)
	if !strings.Contains(h.Contents.Value, `.attributes."http.route": string?`) || !strings.Contains(h.Contents.Value, "declared at line 4") {
		t.Errorf("hover %q", h.Contents.Value)
	}
	locs, _ := s.definition(d, off).([]Location)
	if len(locs) != 1 || locs[0].Range != (Range{Position{3, 4}, Position{3, 16}}) {
		t.Errorf("definition %+v", locs)
	}
	sev := strings.Index(text, "severity_number") + 2
	if h, _ := s.hover(d, sev).(hover); !strings.Contains(h.Contents.Value, ".severity_number: int") {
		t.Errorf("hover on a key of the view: %q", h.Contents.Value)
	}
	if locs := s.definition(d, sev); locs != nil {
		t.Errorf("definition of a key the schema does not declare: %+v", locs)
	}
}

// Hover shows the narrowed type; definition of a field the schema does not
// declare goes to the set that made it.
func TestHoverNarrowedAndSetDefinition(t *testing.T) {
	text := "policy \"p\"\nschema {\n  a: string?\n}\nif .a != null {\n  set .b = .a\n}\nset .c = 1\nset .d = .c\n"
	s := &server{w: &writer{w: io.Discard}, docs: map[string]*document{}}
	d := newDocument("file:///p.policy", 1, text)
	inner := strings.Index(text, "= .a") + 3
	if h, _ := s.hover(d, inner).(hover); !strings.Contains(h.Contents.Value, ".a: string\n") {
		t.Errorf("hover inside the if: %q", h.Contents.Value)
	}
	if h, _ := s.hover(d, strings.Index(text, ".a !=")+1).(hover); !strings.Contains(h.Contents.Value, ".a: string?") {
		t.Errorf("hover in the condition: %q", h.Contents.Value)
	}
	locs, _ := s.definition(d, strings.LastIndex(text, ".c")+1).([]Location)
	if len(locs) != 1 || locs[0].Range.Start.Line != 7 {
		t.Errorf("definition of .c: %+v", locs)
	}
}

// Hover on a parameter, at a use or at its declaration, shows its
// declaration and where its value comes from; a constant its type.
func TestHoverParamsAndConsts(t *testing.T) {
	text := "policy \"p\"\nparam env: string\nparam keep: int = 3\nconst limit = keep * 2\nset .e = env\nset .k = keep + limit\n"
	s := &server{w: &writer{w: io.Discard}, docs: map[string]*document{}}
	d := newDocument("file:///p.policy", 1, text)
	for _, tt := range []struct {
		at   int
		want string
	}{
		{strings.Index(text, "= env") + 3, "param env: string"},
		{strings.Index(text, "env:") + 1, "param env: string"},
		{strings.Index(text, "= keep +") + 3, "param keep: int = 3"},
		{strings.Index(text, "keep +") + 1, "declared at line 3: its value is given when the policy is loaded"},
		{strings.LastIndex(text, "limit") + 1, "const limit: int"},
	} {
		h, _ := s.hover(d, tt.at).(hover)
		if !strings.Contains(h.Contents.Value, tt.want) {
			t.Errorf("hover at %d: %q, want %q", tt.at, h.Contents.Value, tt.want)
		}
	}
	// Definition goes to the declared name, of a parameter or a constant.
	for at, want := range map[int]Range{
		strings.Index(text, "= env") + 3:     {Position{1, 6}, Position{1, 9}},
		strings.LastIndex(text, "limit") + 1: {Position{3, 6}, Position{3, 11}},
	} {
		if locs, _ := s.definition(d, at).([]Location); len(locs) != 1 || locs[0].Range != want {
			t.Errorf("definition at %d: %+v, want %+v", at, locs, want)
		}
	}
}
