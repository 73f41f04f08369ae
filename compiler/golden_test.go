package compiler

import (
	"os"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// TestDisasmGolden compiles testdata/*.policy and compares the disassembly
// with testdata/*.disasm (go test -update rewrites them), so that a change
// in the generated code is seen in review.
func TestDisasmGolden(t *testing.T) {
	for _, fn := range golden.Glob(t, "testdata/*.policy") {
		src, err := os.ReadFile(fn)
		if err != nil {
			t.Fatal(err)
		}
		prog, diags := CompileFile(fn, src)
		if prog == nil {
			t.Errorf("%s: %v", fn, diags)
			continue
		}
		var b strings.Builder
		if err := prog.Disasm(&b); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, strings.TrimSuffix(fn, ".policy")+".disasm", []byte(b.String()))
	}
}
