package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/otelcol"
)

// The distribution has the components docs/collector.md lists, each with
// its module, and nothing else.
func TestComponents(t *testing.T) {
	f, err := components()
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string][]string{
		"receivers":  {"file_log", "otlp"},
		"processors": {"batch", "filter", "memory_limiter", "policyrun", "transform"},
		"exporters":  {"debug", "file", "load_balancing", "nop", "otlp_http"},
		"extensions": {"file_storage"},
	} {
		var got []string
		var modules map[component.Type]string
		switch kind {
		case "receivers":
			got, modules = typesOf(f.Receivers), f.ReceiverModules
		case "processors":
			got, modules = typesOf(f.Processors), f.ProcessorModules
		case "exporters":
			got, modules = typesOf(f.Exporters), f.ExporterModules
		case "extensions":
			got, modules = typesOf(f.Extensions), f.ExtensionModules
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", kind, got, want)
		}
		for typ, mod := range modules {
			if mod == "" {
				t.Errorf("%s: %s has no module", kind, typ)
			}
		}
		for _, typ := range got {
			if _, ok := modules[component.MustNewType(typ)]; !ok {
				t.Errorf("%s: %s has no module", kind, typ)
			}
		}
	}
	if f.Telemetry == nil {
		t.Error("no telemetry factory")
	}
}

// builder-config.yaml lists the components of the distribution, each at
// the module and version the components command names: ocb builds the
// same Collector as go build (the processor, from this checkout, aside).
func TestBuilderConfig(t *testing.T) {
	f, err := components()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, modules := range []map[component.Type]string{f.ReceiverModules, f.ProcessorModules, f.ExporterModules, f.ExtensionModules} {
		for _, mod := range modules {
			if !strings.Contains(mod, "(this repository)") {
				want[mod] = true
			}
		}
	}
	src, err := os.ReadFile("../../builder-config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	section := ""
	for _, line := range strings.Split(string(src), "\n") {
		if line != "" && line[0] != ' ' && line[0] != '#' {
			section = strings.TrimSuffix(line, ":")
		}
		mod, ok := strings.CutPrefix(strings.TrimSpace(line), "- gomod: ")
		if ok && section != "providers" && !strings.HasPrefix(mod, "github.com/policyrun/") {
			got[mod] = true
		}
	}
	for mod := range want {
		if !got[mod] {
			t.Errorf("builder-config.yaml lacks %s", mod)
		}
	}
	for mod := range got {
		if !want[mod] {
			t.Errorf("builder-config.yaml has %s, which the distribution lacks", mod)
		}
	}
}

// typesOf lists the types of the factories, not the deprecated aliases
// that MakeFactoryMap also keys them by.
func typesOf[F component.Factory](m map[component.Type]F) []string {
	var out []string
	for t, f := range m {
		if f.Type() == t {
			out = append(out, t.String())
		}
	}
	slices.Sort(out)
	return out
}

// validate runs `otelcol-policyrun validate --config path` in the test.
func validate(t *testing.T, path string) error {
	t.Helper()
	cmd := otelcol.NewCommand(settings())
	cmd.SetArgs([]string{"validate", "--config", "file:" + path})
	cmd.SetOut(new(strings.Builder))
	cmd.SetErr(new(strings.Builder))
	return cmd.Execute()
}

// The example's config validates (its policy compiles), from otelcol/ as
// the README runs it.
func TestExampleValidates(t *testing.T) {
	t.Chdir("../..")
	if err := validate(t, "../examples/collector/config.yaml"); err != nil {
		t.Fatal(err)
	}
}

// A config whose policy does not compile does not validate, and the error
// shows the diagnostics.
func TestValidateBadPolicy(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "bad.policy")
	config := filepath.Join(dir, "config.yaml")
	write := func(name, s string) {
		if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(policy, "policy \"bad\"\nschema otlp\ndrop when .severity_number == \"ERROR\"\n")
	write(config, `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:0
processors:
  policyrun:
    policies: [`+policy+`]
exporters:
  debug: {}
service:
  pipelines:
    logs:
      receivers: [otlp]
      processors: [policyrun]
      exporters: [debug]
`)
	err := validate(t, config)
	if err == nil || !strings.Contains(err.Error(), "error[E0301]: cannot compare int with string") ||
		!strings.Contains(err.Error(), policy+":3:11") {
		t.Fatalf("got %v", err)
	}
}
