package policy

import (
	"strings"
	"testing"
)

// TestReportEscapes: a syntax error that quotes the source (here a string
// holding an escape sequence) is reported with the control characters
// escaped, as diagnostics are.
func TestReportEscapes(t *testing.T) {
	_, errs := ParseFile("x.policy", []byte("policy \"p\"\nset .a = 1 \"\x1b[2J\"\n"))
	rep := errs.Report("x\x07.policy")
	want := "x\\x07.policy:2:12: error[E0022]: unexpected string \"\\x1b[2J\" after the set statement"
	if !strings.HasPrefix(rep, want) || strings.ContainsAny(rep, "\x1b\x07") {
		t.Errorf("Report = %q, want it to start with %q", rep, want)
	}
}
