package difftest

import (
	"testing"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// Check parses and checks a generated policy; ok is false when it has
// errors (the generator writes some ill-typed policies, which are skipped).
func parseCheck(src string) (*policy.File, *check.Info, []diag.Diagnostic, bool) {
	f, errs := policy.ParseFile("diff.policy", []byte(src))
	if len(errs) > 0 {
		return nil, nil, nil, false
	}
	info, diags := check.Check(f)
	for _, d := range diags {
		if d.Severity == diag.Error {
			return f, info, diags, false
		}
	}
	return f, info, diags, true
}

// Most generated policies must check, or the differential test would
// say little.
func TestGeneratorYield(t *testing.T) { checkYield(t, "Policy", "", Policy, 120) }

func TestOTLPGeneratorYield(t *testing.T) { checkYield(t, "OTLPPolicy", "OTLP ", OTLPPolicy, 150) }

// checkYield wants gen (named name) to give the same policy for a seed
// each time, and at least min of the policies of 200 seeds to check.
func checkYield(t *testing.T, name, kind string, gen func(seed uint64) string, min int) {
	t.Helper()
	ok := 0
	for seed := range uint64(200) {
		src := gen(seed)
		if src != gen(seed) {
			t.Fatal(name + " is not deterministic")
		}
		if _, _, diags, good := parseCheck(src); good {
			ok++
		} else if seed < 5 {
			t.Logf("seed %d rejected:\n%s\n%v", seed, src, diags)
		}
	}
	if ok < min {
		t.Errorf("only %d of 200 generated %spolicies check", ok, kind)
	}
	t.Logf("%d of 200 generated %spolicies check", ok, kind)
}

func TestRecordsDecode(t *testing.T) {
	a := record.NewArena()
	for seed := range uint64(500) {
		if _, err := a.DecodeJSON(Record(seed), record.Owned); err != nil {
			t.Fatalf("seed %d: %v: %s", seed, err, Record(seed))
		}
	}
}

func TestOTLPRecordsDecode(t *testing.T) {
	a := record.NewArena()
	for seed := range uint64(500) {
		body := OTLPBody(seed)
		if _, err := a.DecodeOTLPView(OTLPRecord(seed, body), record.Owned); err != nil {
			t.Fatalf("seed %d: %v: %s", seed, err, OTLPRecord(seed, body))
		}
		for _, v := range OTLPGroup(seed, body, 4) {
			if _, err := a.DecodeOTLPView(v, record.Owned); err != nil {
				t.Fatalf("seed %d, group: %v: %s", seed, err, v)
			}
		}
	}
}
