package policyrunprocessor

import (
	"context"
	"github.com/policyrun/policyrun/spec"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	policysrc "github.com/policyrun/policyrun/policy"
)

// TestModulesLoadedOnce: the policies of one processor that import one
// module share it, the module read (so parsed and checked) once, and
// each runs its functions.
func TestModulesLoadedOnce(t *testing.T) {
	files := writePolicies(t,
		"policy \"a\"\nschema otlp\nimport \"m.policy\"\nset .attributes[\"a\"] = m.tag(\"a\")\n",
		"policy \"b\"\nschema otlp\nimport \"m.policy\" as mm\nset .attributes[\"b\"] = mm.tag(\"b\")\n",
		"policy \"c\"\nschema otlp\nimport \"m.policy\"\nset .attributes[\"c\"] = m.tag(\"c\")\n",
	)
	mod := "module \"m\"\n\nfn tag(s: string) string {\n  return \"<\" + s + \">\"\n}\n"
	if err := os.WriteFile(filepath.Join(filepath.Dir(files[0]), "m.policy"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	reads := map[string]int{}
	read := func(path string) ([]byte, error) {
		reads[filepath.Base(path)]++
		return policysrc.ReadFile(path)
	}
	if _, _, err := compilePolicies(files, nil, spec.Limits{}, read); err != nil {
		t.Fatal(err)
	}
	if reads["m.policy"] != 1 || len(reads) != 1 {
		t.Errorf("modules read %v, want m.policy once", reads)
	}

	sink := new(consumertest.LogsSink)
	lp, err := NewFactory().CreateLogs(context.Background(), processortest.NewNopSettings(Type), &Config{Policies: files}, sink)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.ConsumeLogs(context.Background(), one(lrec("x", nil))); err != nil {
		t.Fatal(err)
	}
	got := dump(sink.AllLogs()[0])
	for _, want := range []string{`a="<a>"`, `b="<b>"`, `c="<c>"`} {
		if !strings.Contains(got, want) {
			t.Errorf("no %s in\n%s", want, got)
		}
	}
}
