package compiler

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/vmtest"
)

const sinkSchema = "schema {\n level: string\n msg: string\n lat: float\n n: int\n a: {b: int?, ...}?\n env: string?\n k: {c: int, ...}\n ...\n}\n"

// TestSinkEdits checks which edits join the next edit past the
// computations between them (one EDITS), and which stay apart.
func TestSinkEdits(t *testing.T) {
	tests := []struct {
		name, src string
		runs      int // EDITS instructions
		single    int // edits left on their own
	}{
		{"B1 policy 8", "set .env ?= \"prod\"\nset .p = \"b1\"\nremove .t\nrename .msg to .message\nset .slow = .lat > 200.0\nset .e = contains(.message, \"x\")", 1, 1},
		{"a read of another key", "set .x = 1\nset .y = .n + 1", 1, 0},
		{"a read of a nested key of another", "set .x = 1\nset .y = .k.c * 2", 1, 0},
		{"a default, which jumps", "set .x = 1\nset .y = (.a.b ?? 0) * 2", 0, 2},
		{"a read of the key set", "set .x = 1\nset .y = (.x ?? 0) + 1", 0, 2},
		{"a read of the key removed", "remove .n\nset .y = .n ?? 0", 0, 2},
		{"a read of a rename's target", "rename .msg to .m\nset .y = .m ?? \"\"", 0, 2},
		{"a read of a rename's source", "rename .msg to .m\nset .y = .msg ?? \"\"", 0, 2},
		{"a call in between", "set .x = 1\nset .y = lower(.level)", 0, 2},
		{"a nested edit before", "set .a.c = 1\nset .y = .n + 1", 0, 2},
		{"a branch in between", "set .x = 1\nif .n > 1 {\n set .y = 2\n}", 0, 2},
		{"a dynamic key", "set .[.level] = 1\nset .y = .n + 1", 0, 2},
		{"the root read", "set .x = 1\nset .y = len(.)", 0, 2},
	}
	for _, tt := range tests {
		src := "policy \"t\"\n" + sinkSchema + tt.src
		prog := compile(t, src)
		ops := vmtest.Ops(t, prog)
		runs, single := 0, 0
		for _, op := range ops {
			switch op {
			case "EDITS":
				runs++
			case "SET", "SETQ", "REMOVE", "RENAME":
				single++
			}
		}
		if runs != tt.runs || single != tt.single {
			t.Errorf("%s: %d runs, %d single edits; want %d, %d\n%s", tt.name, runs, single, tt.runs, tt.single, strings.Join(ops, " "))
		}
	}
}

// TestSinkEditsResults runs policies whose edits sink over records where
// the order could show: the values the moved reads see, a fault among
// them (the record kept as it came), and a jump into the moved block.
func TestSinkEditsResults(t *testing.T) {
	for _, tt := range []struct {
		src, in, res, out string
	}{
		{"set .env ?= \"prod\"\nremove .t\nrename .msg to .message\nset .slow = .lat > 200.0",
			`{"msg":"m","t":1,"lat":250.5}`, "keep", `{"lat":250.5,"env":"prod","message":"m","slow":true}`},
		{"set .env ?= \"prod\"\nremove .t\nrename .msg to .message\nset .slow = .lat > 200.0",
			`{"msg":"m","t":1,"lat":"slow"}`, "keep type_mismatch", `{"msg":"m","t":1,"lat":"slow"}`},
		{"set .x = 1\nset .y = 10 / (.n - 4)",
			`{"n":4}`, "keep division_by_zero", `{"n":4}`},
		{"drop when .level == \"debug\"\nset .x = .n\nset .y = .n * 2",
			`{"level":"info","n":3}`, "keep", `{"level":"info","n":3,"x":3,"y":6}`},
		{"drop when .level == \"debug\"\nset .x = .n\nset .y = .n * 2",
			`{"level":"debug","n":3}`, "drop", ``},
		{"set .n = 5\nset .y = .k.c + 1\nset .z = .n",
			`{"n":1,"k":{"c":2}}`, "keep", `{"n":5,"k":{"c":2},"y":3,"z":5}`},
		{"set .x = 1\nset .y = .k.c + 1",
			`{"k":{"c":"two"}}`, "keep type_mismatch", `{"k":{"c":"two"}}`},
	} {
		prog := compile(t, "policy \"t\"\n"+sinkSchema+tt.src)
		got, out := runOutcome(t, prog, tt.in)
		if got != tt.res || out != tt.out {
			t.Errorf("%s over %s: %s %s, want %s %s", strings.ReplaceAll(tt.src, "\n", "; "), tt.in, got, out, tt.res, tt.out)
		}
	}
}
