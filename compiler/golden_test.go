package compiler

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden disassembly in testdata")

// TestDisasmGolden compiles testdata/*.policy and compares the disassembly
// with testdata/*.disasm (go test -update rewrites them), so that a change
// in the generated code is seen in review.
func TestDisasmGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.policy")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, fn := range files {
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
		golden := strings.TrimSuffix(fn, ".policy") + ".disasm"
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s: disassembly changed (go test -update to accept):\n%s", fn, b.String())
		}
	}
}
