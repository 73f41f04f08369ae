package compiler

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// TestDisasmGolden compiles testdata/*.policy and compares the disassembly
// with testdata/*.disasm (go test -update rewrites them), so that a change
// in the generated code is seen in review.
func TestDisasmGolden(t *testing.T) {
	golden.Files(t, "testdata/*.policy", ".disasm", func(t *testing.T, fn string, src []byte) []byte {
		prog, diags := CompileFile(fn, src)
		if prog == nil {
			t.Fatalf("%s: %v", fn, diags)
		}
		var b strings.Builder
		if err := prog.Disasm(&b); err != nil {
			t.Fatal(err)
		}
		return []byte(b.String())
	})
}
