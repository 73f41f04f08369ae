package conformance

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/policyrun/policyrun/conformance/internal/exprbaseline"
	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// The baselines of B1: each of the nine policies as the VM runs it, as the
// Lua transpiler runs it, as a hand-written Fluent Bit Lua filter
// (baselines/lua) and as an expr-lang program over encoding/json maps
// (internal/exprbaseline). They must give the same records.

// baseCase is one B1 policy with its four implementations.
type baseCase struct {
	b1Policy   // and its program on the VM
	transpiled *lua.Program
	script     *luascript.Script
	expr       *exprbaseline.Baseline
}

func baseCases(tb testing.TB) []baseCase {
	tb.Helper()
	exprs, err := exprbaseline.All()
	if err != nil {
		tb.Fatal(err)
	}
	var out []baseCase
	for i, p := range b1Policies(tb) {
		f, info := checkPolicy(tb, p.file, p.src)
		tp, err := lua.Compile(f, info, spec.Options{})
		if err != nil {
			tb.Fatal(err)
		}
		script := filepath.Join("baselines", "lua", p.name+".lua")
		ssrc, err := os.ReadFile(script)
		if err != nil {
			tb.Fatal(err)
		}
		s, err := luascript.Load(script, ssrc, "cb")
		if err != nil {
			tb.Fatal(err)
		}
		if exprs[i].Name != p.name {
			tb.Fatalf("expr baseline %d is %s, want %s", i, exprs[i].Name, p.name)
		}
		if exprs[i].Kind != p.kind {
			tb.Fatalf("%s: expr baseline runs on %s records, the policy on %s", p.name, exprs[i].Kind, p.kind)
		}
		out = append(out, baseCase{b1Policy: p, transpiled: tp, script: s, expr: exprs[i]})
	}
	return out
}

// newRunner returns a runner that newR makes (a Lua program's or script's
// NewRunner), closed when the test or benchmark ends.
func newRunner[R interface{ Close() }](tb testing.TB, newR func() (R, error)) R {
	tb.Helper()
	r, err := newR()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(r.Close)
	return r
}

// genLines returns n generated B1 lines of kind for seed.
func genLines(tb testing.TB, kind string, seed uint64, n int) [][]byte {
	g, err := gen.New(kind, seed)
	if err != nil {
		tb.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = g.Append(nil)
	}
	return out
}

// normalJSON decodes a JSON record into Go values in which every number is
// a float64, so that records compare by value and without key order (Lua
// tables and Go maps keep none; a Fluent Bit filter writes 3 for 3.0).
func normalJSON(tb testing.TB, b []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%v: %s", err, b)
	}
	return m
}

// TestBaselinesAgree runs every B1 record through the four backends of each
// policy and requires the same drops and the same records.
func TestBaselinesAgree(t *testing.T) {
	lines := map[string][][]byte{
		"flat": genLines(t, "flat", 7, 400),
		"k8s":  genLines(t, "k8s", 7, 200),
	}
	for _, c := range baseCases(t) {
		t.Run(c.name, func(t *testing.T) {
			m := vm.NewMachine(c.prog)
			tr := newRunner(t, c.transpiled.NewRunner)
			sr := newRunner(t, c.script.NewRunner)
			var er exprbaseline.Runner
			a := record.NewArena()
			kept := 0
			for _, line := range lines[c.kind] {
				type out struct {
					dropped bool
					rec     map[string]any
				}
				run := func(f func(*record.Record) (bool, string)) out {
					a.Reset()
					rec, err := a.DecodeJSON(line, record.Owned)
					if err != nil {
						t.Fatal(err)
					}
					dropped, fault := f(rec)
					if fault != "" {
						t.Fatalf("fault %s on %s", fault, line)
					}
					if dropped {
						return out{dropped: true}
					}
					return out{rec: normalJSON(t, rec.AppendJSON(nil))}
				}
				want := run(func(rec *record.Record) (bool, string) {
					res := m.Run(rec)
					if res.Fault != spec.NoFault {
						return false, res.String()
					}
					return !res.Kept(), ""
				})
				got := map[string]out{
					"lua_transpiled": run(func(rec *record.Record) (bool, string) {
						res, err := tr.Run(rec)
						if err != nil {
							return false, err.Error()
						}
						return res.Action == spec.Drop, res.Fault.String()
					}),
					"lua_handwritten": run(func(rec *record.Record) (bool, string) {
						res, _ := sr.Run(rec)
						return res.Action == spec.Drop, res.Fault.String()
					}),
				}
				eo, dropped, err := er.Run(c.expr, line)
				if err != nil {
					t.Fatal(err)
				}
				if dropped {
					got["expr"] = out{dropped: true}
				} else {
					got["expr"] = out{rec: normalJSON(t, eo)}
				}
				for name, g := range got {
					if !reflect.DeepEqual(g, want) {
						t.Fatalf("%s differs from the VM on %s\n got %v\nwant %v", name, line, g, want)
					}
				}
				if !want.dropped {
					kept++
				}
			}
			if c.name != "2-drop-all" && kept == 0 {
				t.Errorf("every record was dropped: the comparison says little")
			}
		})
	}
}
