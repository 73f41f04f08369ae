package compiler

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/vmtest"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

const hoistSchema = "schema {\n level: string\n msg: string\n env: string?\n a: {b: string?, ...}?\n ...\n}\n"

// TestDropFirst checks which drops are tested ahead of the edits before
// them: the code comes to the DROP before any edit when they are.
func TestDropFirst(t *testing.T) {
	tests := []struct {
		name, src string
		first     bool
	}{
		{"the chain, then the policy", "set .env ?= \"prod\"\nset .pipeline = \"b1\"\nremove .trace_id\nrename .msg to .message\ndrop when .level == \"debug\"", true},
		{"an int constant", "set .n = 3\ndrop when .level == \"debug\"", true},
		{"the condition reads a key set", "set .env = \"prod\"\ndrop when .env == \"prod\"", false},
		{"the condition reads a key set ?=", "set .env ?= \"prod\"\ndrop when (.env ?? \"\") == \"prod\"", false},
		{"the condition reads a key removed", "remove .level\ndrop when (.level ?? \"\") == \"debug\"", false},
		{"the condition reads a renamed key", "rename .msg to .level\ndrop when .level == \"debug\"", false},
		{"the condition reads a rename's source", "rename .level to .lvl\ndrop when (.level ?? \"\") == \"debug\"", false},
		{"the condition reads the root", "set .x = \"y\"\ndrop when len(.) > 3", false},
		{"the condition's computed key reads a key set", "set .env = \"b\"\ndrop when (.a[.env ?? \"b\"] ?? \"\") == \"x\"", false},
		{"the condition reads under a key removed", "remove .a\ndrop when (.a.b ?? \"\") == \"x\"", false},
		{"a value that is not a constant", "set .x = .msg\ndrop when .level == \"debug\"", false},
		{"a nested set, which can fault", "set .a.c = \"x\"\ndrop when .level == \"debug\"", false},
		{"a let", "let x = lower(.msg)\nset .y = x\ndrop when .level == \"debug\"", false},
		{"a conditional edit", "if .msg == \"a\" {\n set .x = \"y\"\n}\ndrop when .level == \"debug\"", false},
		{"a drop first already", "drop when .level == \"debug\"\nset .x = \"y\"", true},
	}
	for _, tt := range tests {
		src := "policy \"t\"\n" + hoistSchema + tt.src
		prog := compile(t, src)
		if got := dropTestedFirst(t, prog); got != tt.first {
			var b strings.Builder
			prog.Disasm(&b)
			t.Errorf("%s: drop tested first %v, want %v\n%s", tt.name, got, tt.first, b.String())
		}
	}
}

// dropTestedFirst reports whether prog's code comes to its DROP before
// any edit (its condition's reads may go ahead of edits either way: see
// sinkEdits).
func dropTestedFirst(t *testing.T, prog *vm.Program) bool {
	t.Helper()
	for _, op := range vmtest.Ops(t, prog) {
		switch op {
		case "DROP":
			return true
		case "SET", "SETQ", "REMOVE", "RENAME", "LIFT", "EDITS", "SETTAG", "SETTIME", "SETROOT":
			return false
		}
	}
	return false
}

// TestDropFirstGrowth checks that edits storing more than a run may
// before the record is measured are not moved past the drop.
func TestDropFirstGrowth(t *testing.T) {
	long := strings.Repeat("x", 100)
	src := "policy \"t\"\n" + hoistSchema + "set .x = \"" + long + "\"\ndrop when .level == \"debug\"\n"
	for _, tt := range []struct {
		maxRecord int
		first     bool
	}{
		{16 << 20, true},
		{4 * 99, false}, // a quarter of it is less than the string
	} {
		prog, diags := CompileFile("t.policy", []byte(src), WithLimits(spec.Limits{MaxRecord: tt.maxRecord}))
		if prog == nil {
			t.Fatalf("compile: %v", diags)
		}
		if got := dropTestedFirst(t, prog); got != tt.first {
			t.Errorf("MaxRecord %d: drop tested first %v, want %v", tt.maxRecord, got, tt.first)
		}
	}
}

// TestDropFirstResults runs a policy whose drop is tested first over the
// records where the order could show: dropped, kept and edited, and a
// fault in the condition (the record kept as it came, on_fault keep, or
// dropped, on_fault drop).
func TestDropFirstResults(t *testing.T) {
	const body = "schema {\n level: string\n ...\n}\n" +
		"set .env ?= \"prod\"\nremove .trace_id\nrename .msg to .message\ndrop when .level == \"debug\"\nset .n = 1\n"
	for _, tt := range []struct {
		onFault, in, res, out string
	}{
		{"", `{"level":"debug","msg":"m","trace_id":"t"}`, "drop", ""},
		{"", `{"level":"info","msg":"m","trace_id":"t"}`, "keep", `{"level":"info","env":"prod","message":"m","n":1}`},
		{"", `{"level":"info","env":"dev"}`, "keep", `{"level":"info","env":"dev","n":1}`},
		{"", `{"level":7,"msg":"m","trace_id":"t"}`, "keep type_mismatch", `{"level":7,"msg":"m","trace_id":"t"}`},
		{" on_fault drop", `{"level":7,"msg":"m"}`, "drop type_mismatch", ""},
	} {
		src := "policy \"t\"" + tt.onFault + "\n" + body
		prog := compile(t, src)
		if !dropTestedFirst(t, prog) {
			t.Fatal("the drop is not tested first")
		}
		got, out := runOutcome(t, prog, tt.in)
		if got != tt.res || out != tt.out {
			t.Errorf("%s%s: %s %s, want %s %s", tt.in, tt.onFault, got, out, tt.res, tt.out)
		}
	}
}
