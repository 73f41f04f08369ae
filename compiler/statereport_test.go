package compiler_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

// StateReport sums the keyed statements (dedupe, rate_limit) as the state
// package measures them, and reports nothing for a policy without keys,
// or with errors.
func TestStateReport(t *testing.T) {
	dedupe := state.Spec{Kind: state.Dedupe, MaxKeys: spec.DefaultMaxKeys}.Memory()
	rate := state.Spec{Kind: state.RateLimit, MaxKeys: 1000}.Memory()
	tests := []struct {
		name, src  string
		keys       int64
		bytes      int64
		statements int
	}{
		{"none", "policy \"p\"\nset .x = 1\n", 0, 0, 0},
		{"sample only", "policy \"p\"\nsample keep 1 in 10\n", 0, 0, 0},
		{"errors", "policy \"p\"\ndedupe by .msg within \"1m\"\nset .x = 1 + \"a\"\n", 0, 0, 0},
		{"dedupe", "policy \"p\"\ndedupe by .msg within \"1m\"\n", spec.DefaultMaxKeys, dedupe, 1},
		{"both", "policy \"p\"\ndedupe by .msg within \"1m\"\nrate_limit by .user to 10 per \"1s\" max_keys 1000\nsample keep 1 in 10\n",
			spec.DefaultMaxKeys + 1000, dedupe + rate, 2},
	}
	for _, tt := range tests {
		r := compiler.Analyze("p.policy", []byte(tt.src)).StateReport("dir/p.policy")
		if tt.statements == 0 {
			if r != nil {
				t.Errorf("%s: %+v, want no report", tt.name, r)
			}
			continue
		}
		if r == nil || r.StateKeys != tt.keys || r.StateBytes != tt.bytes || len(r.Statements) != tt.statements ||
			r.BytesPerKey != (tt.bytes+tt.keys-1)/tt.keys || r.File != "dir/p.policy" || r.Line != 1 || r.Code != compiler.CodeStateMemory {
			t.Errorf("%s: %+v, want %d keys, %d bytes, %d statements", tt.name, r, tt.keys, tt.bytes, tt.statements)
		}
	}
}

// The report's text is a diagnostic's first line and a line a statement;
// in JSON it follows the diagnostics in their array.
func TestStateReportWrite(t *testing.T) {
	src := "policy \"p\"\ndedupe by .msg within \"1m\" max_keys 1000\ndrop\nset .x = 1\n"
	an := compiler.Analyze("p.policy", []byte(src))
	r := an.StateReport("p.policy")
	var text bytes.Buffer
	r.WriteText(&text)
	want := "p.policy:1:1: info[I0001]: policy \"p\" keeps at most 1000 keys of state, "
	if !strings.HasPrefix(text.String(), want) || !strings.Contains(text.String(), "\n  = line 2: dedupe, max_keys 1000: ") {
		t.Errorf("text:\n%s", &text)
	}
	var js bytes.Buffer
	if err := compiler.WriteJSON(&js, an.Diagnostics, []*compiler.StateReport{r}); err != nil {
		t.Fatal(err)
	}
	var all []struct{ Code, Severity string }
	if err := json.Unmarshal(js.Bytes(), &all); err != nil {
		t.Fatalf("%v\n%s", err, &js)
	}
	if len(all) != len(an.Diagnostics)+1 || len(an.Diagnostics) == 0 || all[len(all)-1].Code != "I0001" || all[0].Severity != "warning" {
		t.Errorf("JSON:\n%s", &js)
	}
	js.Reset()
	if compiler.WriteJSON(&js, nil, nil); strings.TrimSpace(js.String()) != "[]" {
		t.Errorf("nothing to write: %q", &js)
	}
}
