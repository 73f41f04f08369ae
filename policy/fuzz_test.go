package policy

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// FuzzParse checks that the parser never panics or hangs, and that every
// file it accepts formats to text that parses back to the same tree and
// formats to itself. The seed corpus in testdata/fuzz/FuzzParse runs as
// an ordinary test; the golden inputs are seeds too.
func FuzzParse(f *testing.F) {
	golden.Seed(f, filepath.Join("testdata", "format", "*.input"))
	f.Fuzz(func(t *testing.T, src []byte) {
		file, errs := ParseFile("fuzz.policy", src)
		if file == nil {
			t.Fatal("nil file")
		}
		for _, e := range errs {
			if e.Code == "" || e.Msg == "" || !e.Pos.IsValid() || e.Pos.Offset > len(src) {
				t.Fatalf("malformed error %+v", e)
			}
		}
		if len(errs) > 0 {
			return
		}
		once, err := Format(file, src)
		if err != nil {
			t.Fatalf("Format of a file that parsed: %v", err)
		}
		again, errs := ParseFile("fuzz.policy", once)
		if len(errs) > 0 {
			t.Fatalf("formatted output does not parse: %v\ninput:\n%s\noutput:\n%s", errs.Report("out"), src, once)
		}
		if d := sameTree(file, again); d != "" {
			t.Fatalf("formatting changed the tree (%s)\ninput:\n%s\noutput:\n%s", d, src, once)
		}
		twice, err := Format(again, once)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("not idempotent\ninput:\n%q\nonce:\n%s\ntwice:\n%s", src, once, twice)
		}
	})
}

// FuzzFormatGenerated formats generated policies (see gen) for fuzzed
// seeds: every one must parse, format, reparse to the same tree and format
// to the same text again.
func FuzzFormatGenerated(f *testing.F) {
	for seed := int64(0); seed < 8; seed++ {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed int64) {
		checkGenerated(t, seed)
	})
}
