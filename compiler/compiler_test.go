package compiler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/vmtest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

func compile(t *testing.T, src string) *vm.Program {
	t.Helper()
	prog, diags := CompileFile("t.policy", []byte(src), WithClock(spec.FixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))))
	if prog == nil {
		t.Fatalf("compile: %v", diags)
	}
	return prog
}

func runJSON(t *testing.T, prog *vm.Program, in string) (spec.Result, string) {
	t.Helper()
	a := record.NewArena()
	rec, err := a.DecodeJSON([]byte(in), record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	res := prog.Run(rec)
	return res, string(rec.AppendJSON(nil))
}

// runOutcome runs prog over the JSON record in and says what became of
// it — "keep" or "drop", and the fault if any — and what it wrote ("" when
// dropped).
func runOutcome(t *testing.T, prog *vm.Program, in string) (outcome, out string) {
	t.Helper()
	res, out := runJSON(t, prog, in)
	outcome = "keep"
	if res.Action == spec.Drop {
		outcome, out = "drop", ""
	}
	if res.Fault != spec.NoFault {
		outcome += " " + res.Fault.String()
	}
	return outcome, out
}

func TestRun(t *testing.T) {
	tests := []struct {
		name, src, in, out string
		res                spec.Result
	}{
		{"set", `set .a = 1 + 2`, `{}`, `{"a":3}`, spec.Result{}},
		{"drop when", `drop when .level == "debug"`, `{"level":"debug"}`, `{"level":"debug"}`, spec.Result{Action: spec.Drop}},
		{"keep", `drop when .level == "debug"`, `{"level":"info"}`, `{"level":"info"}`, spec.Result{}},
		{"if else", "schema {\n n: int\n ...\n}\nif .n > 1 {\n set .big = true\n} else {\n set .big = false\n}", `{"n":5}`, `{"n":5,"big":true}`, spec.Result{}},
		{"fault unchanged", "schema {\n n: int\n ...\n}\nset .a = 1\nset .b = 10 / .n", `{"n":0}`, `{"n":0}`, spec.Result{Fault: spec.DivisionByZero}},
		{"on_fault drop", "policy \"p\" on_fault drop\nschema {\n n: int\n ...\n}\nset .b = .n", `{"n":"x"}`, `{"n":"x"}`, spec.Result{Action: spec.Drop, Fault: spec.TypeMismatch}},
		{"for", "schema {\n xs: array<int>\n ...\n}\nset .sum = 0\nfor _, x in .xs {\n set .sum = .sum + x\n}", `{"xs":[1,2,3]}`, `{"xs":[1,2,3],"sum":6}`, spec.Result{}},
		{"lift", `lift .k prefix "k_"`, `{"k":{"a":1},"b":2}`, `{"b":2,"k_a":1}`, spec.Result{}},
		{"coalesce", `set .x = .a ?? .b ?? "none"`, `{"b":null}`, `{"b":null,"x":"none"}`, spec.Result{}},
		{"float field takes an int", "schema {\n f: float\n ...\n}\nset .g = .f / 2", `{"f":3}`, `{"f":3,"g":1.5}`, spec.Result{}},
		{"exists is true for a present null", "schema {\n n: int?\n ...\n}\nif exists(.n) {\n set .m = (.n ?? 0) + 1\n}", `{"n":null}`, `{"n":null,"m":1}`, spec.Result{}},
		{"exists narrows the path above", "schema {\n a: {n: int?}?\n ...\n}\nif exists(.a.n) {\n set .k = keys(.a)\n}", `{"a":{"n":null}}`, `{"a":{"n":null},"k":["n"]}`, spec.Result{}},
		{"dynamic key", "schema {\n k: string\n m: map<int>\n ...\n}\nset .v = .m[.k] ?? -1\nset .m[.k] = 7", `{"k":"b","m":{"a":1}}`, `{"k":"b","m":{"a":1,"b":7},"v":-1}`, spec.Result{}},
		{"now and tag", `set .t = now()` + "\nset .g = %tag", `{}`, `{"t":"2026-01-01T00:00:00Z","g":""}`, spec.Result{}},
	}
	for _, tt := range tests {
		src := tt.src
		if !strings.HasPrefix(src, "policy") {
			src = "policy \"t\"\n" + src
		}
		prog := compile(t, src)
		res, out := runJSON(t, prog, tt.in)
		if res != tt.res || out != tt.out {
			var b strings.Builder
			prog.Disasm(&b)
			t.Errorf("%s: got %v %s, want %v %s\n%s", tt.name, res, out, tt.res, tt.out, b.String())
		}
	}
}

func TestOptimisations(t *testing.T) {
	tests := []struct {
		name, src string
		op        string
		want      int
	}{
		{"a path read twice is loaded once", "schema {\n a: {b: int, c: int, ...}\n ...\n}\nset .x = .a.b + .a.b\nset .y = .a.c", "GETG", 1},
		{"a write reloads", "schema {\n n: int\n ...\n}\nset .x = .n\nset .n = 2\nset .y = .n", "GETG", 2},
		{"a read and its guard are one instruction", "schema {\n n: int\n ...\n}\nset .x = .n + 1", "GUARD", 0},
		{"constants fold", `set .x = 2 * 3 + 1` + "\n" + `set .s = "a" + "b"`, "MUL_INT", 0},
		{"dead code after drop", "drop\nset .x = 1", "SET", 0},
		{"typed comparison", "schema {\n s: string\n ...\n}\ndrop when .s == \"x\"", "EQ_STR", 1},
		{"short circuit", "schema {\n a: bool\n b: bool\n ...\n}\ndrop when .a && .b", "JF", 2},
		{"constant condition", "if 1 > 2 {\n set .x = 1\n}", "JF", 0},
		{"conditions are jumps", "schema {\n a: bool\n b: bool\n ...\n}\nif .a && !.b {\n set .x = 1\n}", "MOVE", 0},
		{"call arguments are loaded in place", "schema {\n p: string\n ...\n}\nset .x = lower(.p)", "MOVE", 0},
		{"a read used twice keeps its register", "schema {\n p: string\n ...\n}\nset .x = lower(.p)\nset .y = .p", "MOVE", 1},
		{"consecutive edits are one batch", "set .a = 1\nset .b = 2\nremove .c\nrename .d to .e", "EDITS", 1},
		{"a jump target splits a batch", "set .a = 1\nif .x == 1 {\n set .b = 2\n}\nset .c = 3\nset .d = 4", "EDITS", 1},
	}
	for _, tt := range tests {
		prog := compile(t, "policy \"t\"\n"+tt.src)
		if got := vmtest.CountOp(t, prog, tt.op); got != tt.want {
			var b strings.Builder
			prog.Disasm(&b)
			t.Errorf("%s: %d %s, want %d\n%s", tt.name, got, tt.op, tt.want, b.String())
		}
	}
}

func TestCompileFileErrors(t *testing.T) {
	prog, diags := CompileFile("bad.policy", []byte("policy \"b\"\nschema {\n status: int\n}\ndrop when .status == \"500\"\n"))
	if prog != nil || len(diags) == 0 || diags[0].Code != "E0301" {
		t.Errorf("got %v %v", prog, diags)
	}
}

// A schema otlp policy compiles to a program that says so; over a record
// holding the view it runs as any policy does.
func TestOTLPProgram(t *testing.T) {
	src := "policy \"o\"\nschema otlp {\n  attributes: map<string>\n}\n" +
		"drop when .severity_number < 9\nset .attributes[\"pod\"] = as_string(.resource.attributes[\"k8s.pod.name\"]) ?? \"\"\nset .severity_text = upper(.severity_text)\n"
	prog := compile(t, src)
	if !prog.OTLP() {
		t.Errorf("OTLP() = false for schema otlp")
	}
	var b strings.Builder
	if err := prog.Disasm(&b); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(b.String(), "\n"); !strings.Contains(first, ", schema otlp:") {
		t.Errorf("Disasm header %q does not say schema otlp", first)
	}
	res, out := runJSON(t, prog, `{"severity_number":9,"severity_text":"warn","attributes":{},"resource":{"attributes":{"k8s.pod.name":"p"}}}`)
	if want := `{"severity_number":9,"severity_text":"WARN","attributes":{"pod":"p"},"resource":{"attributes":{"k8s.pod.name":"p"}}}`; res != (spec.Result{}) || out != want {
		t.Errorf("got %v %s, want %s", res, out, want)
	}
	if res, _ := runJSON(t, prog, `{"severity_number":5}`); res.Action != spec.Drop {
		t.Errorf("got %v, want a drop", res)
	}
	if compile(t, "policy \"p\"\nschema {\n  severity_number: int\n  ...\n}\nset .otlp = 1\n").OTLP() {
		t.Errorf("OTLP() = true without schema otlp")
	}
}

// Diagnose reports what check does: a syntax error, and the checker's
// findings on the other lines (CheckFile stops at the syntax error).
func TestDiagnose(t *testing.T) {
	src := []byte("policy \"p\"\nschema {\n  n: int\n}\ndrop when .n == \"x\"\nset .a = (\n")
	_, _, ds := CheckFile("p.policy", src)
	all := Diagnose("p.policy", src)
	var codes []string
	for _, d := range all {
		codes = append(codes, fmt.Sprintf("%d:%s", d.Pos.Line, d.Code))
		if d.Filename != "p.policy" {
			t.Errorf("%v: filename %q", d, d.Filename)
		}
	}
	if len(all) != len(ds)+1 || !strings.HasPrefix(codes[0], "5:E03") {
		t.Errorf("Diagnose gave %v; CheckFile %v", codes, ds)
	}
}

// TestWithRandom: the option reaches the program's runs.
func TestWithRandom(t *testing.T) {
	id := func(seed uint64) string {
		prog, diags := CompileFile("t.policy", []byte("policy \"u\"\nset .id = uuid_v4()"), WithRandom(spec.SeededRandom(seed)))
		if prog == nil {
			t.Fatalf("compile: %v", diags)
		}
		_, out := runJSON(t, prog, `{}`)
		return out
	}
	if a, b, c := id(1), id(1), id(2); a != b || a == c {
		t.Errorf("seed 1: %s and %s, seed 2: %s; want the first two equal, the third not", a, b, c)
	}
}
