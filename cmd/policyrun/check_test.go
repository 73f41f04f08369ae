package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

const (
	cleanPolicy = "policy \"ok\"\n\nset .x = 1\n"
	badPolicy   = "policy \"bad\"\n\nschema {\n  status: int\n  ...\n}\n\ndrop when .status == \"500\"\nset .y = upper(.user)\n"
	warnPolicy  = "policy \"warn\"\n\ndrop\nset .x = 1\n"
	syntaxError = "policy \"syn\"\n\ndrop if .x\n"
)

func TestCheckExitCodes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"clean.policy": cleanPolicy, "bad.policy": badPolicy, "warn.policy": warnPolicy,
		"sub/syntax.policy": syntaxError, "notes.txt": "not a policy",
	})
	p := func(n string) string { return filepath.Join(dir, n) }
	tests := []struct {
		args []string
		code int
		tail string // the summary line on stderr (text format)
	}{
		{[]string{"check", p("clean.policy")}, 0, "0 errors, 0 warnings in 1 file"},
		{[]string{"check", p("bad.policy")}, 1, "2 errors, 0 warnings in 1 file"},
		{[]string{"check", p("warn.policy")}, 0, "0 errors, 1 warning in 1 file"},
		{[]string{"check", "--strict", p("warn.policy")}, 1, "0 errors, 1 warning in 1 file"},
		{[]string{"check", dir}, 1, "3 errors, 1 warning in 4 files"},
		{[]string{"check", p("missing.policy")}, 2, ""},
		{[]string{"check"}, 2, ""},
		{[]string{"check", "--format", "xml", p("clean.policy")}, 2, ""},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(tt.args...)
		if code != tt.code {
			t.Errorf("%v: exit %d, want %d\n%s", tt.args[1:], code, tt.code, stderr)
		}
		if tt.tail != "" && !strings.HasSuffix(strings.TrimSpace(stderr), tt.tail) {
			t.Errorf("%v: stderr %q, want it to end with %q", tt.args[1:], stderr, tt.tail)
		}
	}
}

func TestCheckText(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.policy": badPolicy})
	_, out, _ := runCLI("check", filepath.Join(dir, "bad.policy"))
	wantAll(t, "output", out,
		"error[E0301]: cannot compare int with string",
		"bad.policy:8:11",
		" 8 | drop when .status == \"500\"",
		"   |           ^^^^^^^^^^^^^^^^ .status is int (declared at line 4)",
		"   = help: compare with the number 500",
		"error[E0308]",
	)
}

func TestCheckJSON(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.policy": badPolicy, "syn.policy": syntaxError, "ok.policy": cleanPolicy})
	code, out, _ := runCLI("check", "--format", "json", dir)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	var ds []struct {
		File, Severity, Code, Message, Hint string
		Line, Col, EndLine, EndCol          int `json:"-"`
	}
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var codes []string
	for _, d := range ds {
		codes = append(codes, filepath.Base(d.File)+":"+d.Code)
	}
	if got := strings.Join(codes, " "); got != "bad.policy:E0301 bad.policy:E0308 syn.policy:E0013" {
		t.Errorf("codes %s", got)
	}
	_, out, _ = runCLI("check", "--format", "json", filepath.Join(dir, "ok.policy"))
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("clean JSON output %q", out)
	}
}

func TestCheckGitHub(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.policy": badPolicy})
	_, out, stderr := runCLI("check", "--format", "github", filepath.Join(dir, "bad.policy"))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "::error file=") || !strings.Contains(lines[0], ",line=8,col=11,endLine=8,endColumn=26,title=E0301::cannot compare int with string") {
		t.Errorf("github output:\n%s", out)
	}
	if stderr != "" {
		t.Errorf("github format wrote to stderr: %q", stderr)
	}
}

// TestCheckSyntaxCascade: a line with a syntax error reports that error
// only, not the checker's view of what the parser recovered; the other
// lines are still checked.
func TestCheckSyntaxCascade(t *testing.T) {
	src := `policy "p"

schema {
  msg: string
  level: string
  status: int
}

drop when .msg contains "x"
drop when not .level
drop when .level in ("a", "b")
set .n = .msg + 1
`
	dir := writeFiles(t, map[string]string{"c.policy": src})
	_, out, _ := runCLI("check", "--format", "json", filepath.Join(dir, "c.policy"))
	var ds []struct {
		Line int
		Code string
	}
	if err := json.Unmarshal([]byte(out), &ds); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var got []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d:%s", d.Line, d.Code))
	}
	want := "9:E0022 10:E0022 11:E0017 12:E0303"
	if strings.Join(got, " ") != want {
		t.Errorf("diagnostics %s, want %s\n%s", strings.Join(got, " "), want, out)
	}
}

// TestCheckStateMemory: check reports the worst-case state memory of a
// policy with dedupe or rate_limit, in text and in JSON, as the state
// package measures it, and nothing for a policy without.
func TestCheckStateMemory(t *testing.T) {
	dir := writeFiles(t, map[string]string{"dd.policy": `policy "dd"
dedupe by .msg within "1m" count .n
rate_limit by .user to 10 per "1s" max_keys 1000
sample keep 1 in 10
`, "ok.policy": cleanPolicy})
	want := state.Spec{Kind: state.Dedupe, MaxKeys: spec.DefaultMaxKeys}.Memory() + state.Spec{Kind: state.RateLimit, MaxKeys: 1000}.Memory()
	code, out, _ := runCLI("check", dir)
	if code != 0 || !strings.Contains(out, fmt.Sprintf("info[I0001]: policy \"dd\" keeps at most 101000 keys of state, %d bytes", want)) ||
		!strings.Contains(out, "= line 3: rate_limit, max_keys 1000") || strings.Contains(out, "ok.policy") {
		t.Errorf("exit %d, text:\n%s", code, out)
	}
	_, out, _ = runCLI("check", "--format", "json", dir)
	var rs []struct {
		File, Severity, Code string
		StateBytes           int64 `json:"state_bytes"`
		StateKeys            int64 `json:"state_keys"`
	}
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rs) != 1 || rs[0].Code != "I0001" || rs[0].Severity != "info" || rs[0].StateBytes != want || rs[0].StateKeys != 101000 {
		t.Errorf("JSON %+v", rs)
	}
}
