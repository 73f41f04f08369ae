package policyrunprocessor

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
)

// TestParams: the processor's params reach, from the Collector's config,
// each policy that declares them, as constants of the load.
func TestParams(t *testing.T) {
	files := writePolicies(t,
		"policy \"a\"\nschema otlp\nparam env: string\nparam skip: array<string> = [\"DEBUG\"]\ndrop when .severity_text in skip\nset .attributes[\"env\"] = env\n",
		"policy \"b\"\nschema otlp\nparam env: string\nparam marker: string = \"x\"\nset .attributes[\"m\"] = marker + env\n",
	)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	conf := confmap.NewFromStringMap(map[string]any{
		"policies": []any{files[0], files[1]},
		"params":   map[string]any{"env": "prod", "skip": []any{"INFO"}},
	})
	if err := conf.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	sink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	in := one(lrec("a", nil, sev("DEBUG", 5)), lrec("b", nil, sev("INFO", 9)))
	if err := lp.ConsumeLogs(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	got := dump(sink.AllLogs()[0])
	if !strings.Contains(got, `body="a"`) || strings.Contains(got, `body="b"`) ||
		!strings.Contains(got, `env="prod"`) || !strings.Contains(got, `m="xprod"`) {
		t.Errorf("got\n%s", got)
	}
}

// TestParamErrors: every mistake in the params stops the processor at
// start, each naming the parameter.
func TestParamErrors(t *testing.T) {
	files := writePolicies(t,
		"policy \"a\"\nschema otlp\nparam env: string\nparam keep: int = 3\nset .attributes[\"env\"] = env\n",
		"policy \"b\"\nschema otlp\nparam tier: string\nset .attributes[\"tier\"] = tier\n",
	)
	cfg := &Config{Policies: files, Params: map[string]any{"keep": "three", "evn": "prod", "tier": "gold"}}
	err := cfg.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"E0610", "parameter env has no value", "E0612", `keep is the string "three"`,
		"no policy declares a parameter evn", "given at the processor's params"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in\n%v", want, err)
		}
	}
}
