package conformance

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/internal/testkit/vmtest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// TestFusedReadsAgreeAcrossBackends runs policies whose reads the compiler fuses into GETG
// (and some it must not fuse) on the VM and on every backend: outcome and
// output must agree, a failing guard faults type_mismatch and leaves the
// record as it came in.
func TestFusedReadsAgreeAcrossBackends(t *testing.T) {
	tests := []struct {
		name, src string
		lines     []string
		minGETG   int // at least this many fused reads
	}{
		{"typed read", "schema {\n n: int\n ...\n}\nset .x = .n + 1\n",
			[]string{`{"n":1}`, `{"n":"s"}`, `{"n":1.5,"z":2}`, `{}`}, 1},
		{"nested read", "schema {\n a: {b: string, ...}\n ...\n}\nset .x = upper(.a.b)\nset .a.c = 1\n",
			[]string{`{"a":{"b":"q"}}`, `{"a":{"b":1}}`, `{"a":[1]}`, `{"a":null}`}, 1},
		{"optional read", "schema {\n x: string?\n ...\n}\nset .y = .x ?? \"d\"\n",
			[]string{`{"x":"v"}`, `{}`, `{"x":null}`, `{"x":2}`}, 0},
		{"any read", "set .y = .x ?? \"d\"\nset .z = type_of(.w)\n",
			[]string{`{"x":"v"}`, `{}`, `{"x":null,"w":[1]}`, `{"x":2}`}, 0},
		{"read after edit", "schema {\n n: int\n ...\n}\nset .m = .n\nset .n = \"s\"\nset .k = .n\n",
			[]string{`{"n":1}`, `{"n":"s"}`}, 1},
		{"read after a branch", "schema {\n n: int\n s: string\n ...\n}\nif .n > 1 {\n set .a = 1\n} else {\n set .b = 2\n}\nset .c = .s\n",
			[]string{`{"n":2,"s":"x"}`, `{"n":0,"s":"x"}`, `{"n":0,"s":3}`, `{"n":"0","s":"x"}`}, 2}, // .s is read at the join: a jump target
		{"read in a loop", "schema {\n xs: array<int>\n s: string\n ...\n}\nfor i, x in .xs {\n set .last = .s + to_string(x)\n}\n",
			[]string{`{"xs":[1,2],"s":"a"}`, `{"xs":[1],"s":1}`, `{"xs":[],"s":1}`, `{"xs":"no","s":"a"}`}, 1},
	}
	for _, tt := range tests {
		src := "policy \"g\"\n" + tt.src
		prog, diags := compiler.CompileFile("g.policy", []byte(src))
		if prog == nil {
			t.Fatalf("%s: %v", tt.name, diags)
		}
		// A read of an undeclared field has no guard: nothing to fuse.
		// (A declared optional one is guarded absent|null|T and fused.)
		if !strings.Contains(src, "schema") && vmtest.CountOp(t, prog, "GET") == 0 {
			t.Errorf("%s: an unguarded read was fused", tt.name)
		}
		if n := vmtest.CountOp(t, prog, "GETG"); n < tt.minGETG {
			var b strings.Builder
			prog.Disasm(&b)
			t.Errorf("%s: %d GETG, want at least %d\n%s", tt.name, n, tt.minGETG, b.String())
		}
		f, info := checkPolicy(t, "g.policy", []byte(src))
		for _, line := range tt.lines {
			a := record.NewArena()
			rec, err := a.DecodeJSON([]byte(line), record.Owned)
			if err != nil {
				t.Fatal(err)
			}
			res := vm.NewMachine(prog).Run(rec)
			vmOut := string(rec.AppendJSON(nil))
			if res.Fault == spec.TypeMismatch && vmOut != line {
				t.Errorf("%s on %s: type_mismatch left %s", tt.name, line, vmOut)
			}
			vmOutcome := res.String()
			for _, b := range backends {
				r, err := b.Load(f, info, spec.Options{})
				if err != nil {
					t.Fatal(err)
				}
				res, out, err := vmtest.RunJSON(t, r, line)
				if err != nil {
					t.Fatal(err)
				}
				if outcome := res.String(); outcome != vmOutcome || out != vmOut {
					t.Errorf("%s on %s: %s: %s %s, vm: %s %s", tt.name, line, b.Name, outcome, out, vmOutcome, vmOut)
				}
			}
		}
	}
}

// TestGETGFaultsAsGetGuard runs GETG and the GET, GUARD pair it replaces,
// assembled by hand, over every kind and a spread of masks (the optional
// reads' absent bit included): their faults must be the same.
func TestGETGFaultsAsGetGuard(t *testing.T) {
	paths := []vm.Path{{Steps: record.MustParsePath(".v")}, {Steps: record.MustParsePath(".m.k")}, {Steps: record.MustParsePath(".arr[-1]")}}
	lines := []string{`{"v":1}`, `{"v":"s","m":{"k":null}}`, `{"v":1.5,"arr":[true]}`, `{"v":null,"m":{"k":[1]}}`,
		`{"v":{"a":1},"arr":[{"x":1}]}`, `{"v":[],"m":{"k":{}}}`, `{"v":false,"m":{"k":"x"},"arr":[2]}`, `{}`}
	masks := []uint16{0, 1 << record.Absent, 1 << record.Int, 1<<record.Int | 1<<record.Float,
		1<<record.String | 1<<record.Absent | 1<<record.Null, 1 << record.Map, 1 << record.Array, 1 << record.Bool, 0x3ff}
	for pi := range paths {
		for _, mask := range masks {
			fused, err := vm.New(vm.Code{Name: "f", NumRegs: 1, Paths: paths,
				Instrs: []vm.Instr{{Op: vm.GETG, A: 0, B: uint16(pi), C: mask}, {Op: vm.KEEP}}})
			if err != nil {
				t.Fatal(err)
			}
			pair, err := vm.New(vm.Code{Name: "p", NumRegs: 1, Paths: paths,
				Instrs: []vm.Instr{{Op: vm.GET, A: 0, B: uint16(pi)}, {Op: vm.GUARD, A: 0, B: mask}, {Op: vm.KEEP}}})
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range lines {
				a := record.NewArena()
				r1, err := a.DecodeJSON([]byte(line), record.Referenced)
				if err != nil {
					t.Fatal(err)
				}
				r2, err := a.DecodeJSON([]byte(line), record.Referenced)
				if err != nil {
					t.Fatal(err)
				}
				g1, g2 := fused.Run(r1), pair.Run(r2)
				if g1 != g2 {
					t.Errorf("%v mask %#x on %s: GETG %v, GET+GUARD %v", paths[pi].Steps, mask, line, g1, g2)
				}
				v, _ := r1.Get(paths[pi].Steps)
				if want := mask&(1<<v.Kind()) == 0; (g1.Fault == spec.TypeMismatch) != want {
					t.Errorf("%v mask %#x on %s: GETG %v", paths[pi].Steps, mask, line, g1)
				}
			}
		}
	}
}
