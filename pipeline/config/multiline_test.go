package config

import (
	"strings"
	"testing"
	"time"
)

// TestMultiline checks an input's multiline section: the rules it names,
// built-in and the service's (defined after the pipeline, as YAML
// allows), in its order, and the defaults docs/pipeline.md gives (flush
// 4s, max_lines 500), written out here rather than read from the
// constants.
func TestMultiline(t *testing.T) {
	tests := []struct {
		name     string
		section  string
		rules    []string
		flush    time.Duration
		maxLines int
	}{
		{
			name:     "defaults",
			section:  "multiline: {parsers: [java, python, go]}",
			rules:    []string{"java", "python", "go"},
			flush:    4 * time.Second,
			maxLines: 500,
		},
		{
			name:     "a user rule among built-in ones, as one string",
			section:  "multiline: {parsers: \"go, app ,java\", flush: 1s, max_lines: 40}",
			rules:    []string{"go", "app", "java"},
			flush:    time.Second,
			maxLines: 40,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n      parser: cri\n      " + tt.section +
				"\n  outputs:\n    - name: null\nservice:\n  multiline_parsers:\n    - name: app\n      start: '^\\d{4}-'\n      continue: '^\\s'\n"
			cfg, err := Parse("p.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			ml := cfg.Inputs[0].Multiline
			var names []string
			for _, r := range ml.Rules {
				names = append(names, r.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.rules, ",") || ml.Flush != tt.flush || ml.MaxLines != tt.maxLines {
				t.Errorf("multiline = rules %v, flush %v, max_lines %d; want %v, %v, %d", names, ml.Flush, ml.MaxLines, tt.rules, tt.flush, tt.maxLines)
			}
		})
	}
	cfg, err := Parse("p.yaml", []byte("pipeline:\n  inputs:\n    - name: tail\n      path: a.log\n  outputs:\n    - name: null\n"))
	if err != nil || cfg.Inputs[0].Multiline != nil {
		t.Errorf("without the section: %v, %+v", err, cfg.Inputs[0].Multiline)
	}
}

// TestMultilineErrors checks that every problem of the multiline sections
// is reported at once, each at its line.
func TestMultilineErrors(t *testing.T) {
	src := `service:
  multiline_parsers:
    - name: app
      start: '^(\d'
    - name: nothing
    - name: java
      start: '^x'
    - name: app
      continue: '^\s'
    - start: '^y'
    - name: empty
      continue: ''
pipeline:
  inputs:
    - name: tail
      path: a.log
      multiline:
        parsers: [java, pyton, java, app]
        flush: 0
        max_lines: -1
    - name: tail
      path: b.log
      parser: json
      multiline: {parsers: [go]}
    - name: tail
      path: c.log
      multiline: {flush: 1s}
    - name: otlp
      multiline: {parsers: [go]}
  outputs:
    - name: null
`
	want := []string{
		`p.yaml:4: multiline parser app: start "^(\\d": error parsing regexp: missing closing )`,
		`p.yaml:5: multiline parser nothing: a multiline rule needs start or continue (a regular expression), or both`,
		`p.yaml:6: multiline parser java: the name of a built-in one (java, python, go); give yours another`,
		`p.yaml:8: multiline parser app is already defined at line 3`,
		`p.yaml:10: a multiline parser needs a name`,
		`p.yaml:12: multiline parser empty: continue is empty`,
		`p.yaml:18: unknown multiline parser "pyton" (known: java, python, go)`,
		`p.yaml:18: multiline parser java is listed twice`,
		`p.yaml:19: multiline flush must be more than 0`,
		`p.yaml:20: multiline max_lines must be more than 0`,
		`p.yaml:24: multiline joins the lines of parser raw, cri or docker, not json`,
		`p.yaml:27: multiline needs parsers`,
		`p.yaml:29: input otlp: unknown key "multiline"`,
	}
	_, err := Parse("p.yaml", []byte(src))
	list, ok := err.(ErrorList)
	if !ok {
		t.Fatalf("error %v (%T), want an ErrorList", err, err)
	}
	if len(list) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(list), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(list[i].Error(), w) {
			t.Errorf("error %d = %q\nwant %q…", i, list[i].Error(), w)
		}
	}
}
