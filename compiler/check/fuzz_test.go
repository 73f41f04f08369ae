package check

import (
	"bytes"
	"testing"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// FuzzCheck parses and checks any input and renders the diagnostics: no
// panic, no hang. The golden policies are the seed corpus.
func FuzzCheck(f *testing.F) {
	golden.Seed(f, "testdata/*.policy")
	f.Add([]byte("policy \"x\"\nfor a, b in .x {\n for c, d in .y {\n  for e, g in .z {\n   set .w = .w + 1\n  }\n }\n}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		info, ds := checkSource("fuzz.policy", src)
		var b bytes.Buffer
		if err := diag.WriteText(&b, src, ds); err != nil {
			t.Fatal(err)
		}
		if err := diag.WriteJSON(&b, ds); err != nil {
			t.Fatal(err)
		}
		if err := diag.WriteGitHub(&b, ds); err != nil {
			t.Fatal(err)
		}
		if info == nil {
			return
		}
		for e, typ := range info.Types {
			if e == nil || typ == nil {
				t.Fatalf("nil entry in Info.Types")
			}
		}
	})
}
