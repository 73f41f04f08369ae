package compiler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/check"
)

// TestCompileLimit is the example of E0900 in docs/language.md: a policy
// that checks clean but needs more constants than the VM's code can hold.
func TestCompileLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("policy \"big\"\n")
	for i := range 33_000 {
		fmt.Fprintf(&b, "set .a = %d\n", i)
	}
	src := []byte(b.String())
	if _, _, ds := CheckFile("big.policy", src); len(ds) > 0 {
		t.Fatalf("the check reports %v", ds)
	}
	prog, ds := CompileFile("big.policy", src)
	if prog != nil || len(ds) != 1 || ds[0].Code != check.CodeCompile {
		t.Fatalf("CompileFile = %v, %v; want no program and one %s", prog != nil, ds, check.CodeCompile)
	}
	if !strings.Contains(ds[0].Msg, "too many constants") {
		t.Errorf("message %q does not name the limit", ds[0].Msg)
	}
	// policyrun check reports it too: check refuses what run refuses.
	if ds := Diagnose("big.policy", src); len(ds) != 1 || ds[0].Code != check.CodeCompile {
		t.Errorf("Diagnose = %v; want one %s", ds, check.CodeCompile)
	}
}
