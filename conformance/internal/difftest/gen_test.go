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

func TestGeneratorYield(t *testing.T) {
	ok := 0
	for seed := range uint64(200) {
		src := Policy(seed)
		if src != Policy(seed) {
			t.Fatal("Policy is not deterministic")
		}
		if _, _, diags, good := parseCheck(src); good {
			ok++
		} else if seed < 5 {
			t.Logf("seed %d rejected:\n%s\n%v", seed, src, diags)
		}
	}
	// Most generated policies must check, or the differential test would
	// say little.
	if ok < 120 {
		t.Errorf("only %d of 200 generated policies check", ok)
	}
	t.Logf("%d of 200 generated policies check", ok)
}

func TestRecordsDecode(t *testing.T) {
	a := record.NewArena()
	for seed := range uint64(500) {
		if _, err := a.DecodeJSON(Record(seed), record.Owned); err != nil {
			t.Fatalf("seed %d: %v: %s", seed, err, Record(seed))
		}
	}
}

func TestOTLPGeneratorYield(t *testing.T) {
	ok := 0
	for seed := range uint64(200) {
		src := OTLPPolicy(seed)
		if src != OTLPPolicy(seed) {
			t.Fatal("OTLPPolicy is not deterministic")
		}
		if _, _, diags, good := parseCheck(src); good {
			ok++
		} else if seed < 5 {
			t.Logf("seed %d rejected:\n%s\n%v", seed, src, diags)
		}
	}
	if ok < 150 {
		t.Errorf("only %d of 200 generated OTLP policies check", ok)
	}
	t.Logf("%d of 200 generated OTLP policies check", ok)
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
