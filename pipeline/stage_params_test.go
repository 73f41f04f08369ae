package pipeline

import (
	"bytes"
	"sort"
	"strings"
	"testing"
)

const paramPolicy = `policy "params"

param env: string
param skip: array<string> = ["/healthz"]
param prefix: string = "^/api/"

drop when .path in skip
set .env = env
set .api = matches(as_string(.path) ?? "", prefix)
`

// TestStageParams runs one policy as two stages with different params on
// each backend: each stage sees its own values, and the backends agree.
func TestStageParams(t *testing.T) {
	in := `{"path":"/healthz"}` + "\n" + `{"path":"/api/x"}` + "\n" + `{"path":"/ready"}` + "\n"
	want := `{"path":"/api/x","env":"edge","api":false}` + "\n" + `{"path":"/ready","env":"edge","api":false}` + "\n"
	for _, backend := range []string{"vm", "lua"} {
		t.Run(backend, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, dir, "in.log", in)
			writeFile(t, dir, "p.policy", paramPolicy)
			filters := "  filters:\n" +
				"    - name: policy\n      file: p.policy\n      backend: " + backend + "\n      params:\n        env: prod\n" +
				"    - name: policy\n      file: p.policy\n      backend: " + backend + "\n      params:\n        env: edge\n        skip: []\n        prefix: ^/v\n"
			cfg := tailConfig(t, dir, filters+toStdout, "in.log", "parser: json", "exit_on_eof: true", "poll_interval: 10ms")
			var out bytes.Buffer
			runPipeline(t, cfg, Options{Stdout: &out})
			// The first stage drops /healthz and sets env prod and api;
			// the second overwrites env and api with its own values.
			if out.String() != want {
				t.Errorf("out = %q, want %q", out.String(), want)
			}
		})
	}
}

// TestStageParamErrors: every mistake in a stage's params is an error
// before anything runs, each naming the parameter and the config's line.
func TestStageParamErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "p.policy", paramPolicy)
	filters := "  filters:\n    - name: policy\n      file: p.policy\n      params:\n        evn: prod\n        skip: /healthz\n"
	cfg := tailConfig(t, dir, filters+toNull, "in.log")
	_, err := New(cfg, Options{})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"E0610", "parameter env has no value", "E0611", "no parameter evn", "did you mean env?",
		"E0612", `skip is the string "/healthz"`, "pipeline.yaml line 12"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %v", want, err)
		}
	}
}

// TestParamsExample runs examples/params: one policy as two filters, each
// on its service's records with its own params.
func TestParamsExample(t *testing.T) {
	cfg := loadExample(t, "params")
	var out bytes.Buffer
	runPipeline(t, cfg, Options{Stdout: &out})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	sort.Strings(lines)
	want := []string{
		`{"path":"/cart?token=***","ip":"10.1.2.0","status":200,"env":"prod","alert":false}`,
		`{"path":"/checkout","ip":"10.1.2.0","status":503,"env":"prod","alert":true}`,
		`{"path":"/healthz","ip":"192.168.0.0","status":200,"env":"staging","alert":false}`,
		`{"path":"/v1/orders","ip":"192.168.0.0","status":404,"env":"staging","alert":true}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
