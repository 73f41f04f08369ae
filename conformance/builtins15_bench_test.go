package conformance

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/conformance/internal/exprbaseline"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/policytest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// builtins15Src is issue 15's benchmark policy: parse_syslog, parse_grok,
// format and a merge into the root, over records with a syslog line, an
// access-log line and a JSON field. Its expr-lang baseline is
// exprbaseline.Builtins15; its test block is in TestBuiltins15.
const builtins15Src = `policy "builtins-15"

schema {
  syslog: string
  access: string
  user: string
  status: int
  extra: string
  ...
}

let s = parse_syslog(.syslog) ?? {}
let g = parse_grok(.access, "%{IPORHOST:client} %{USER:ident} %{USER:auth} \\[%{HTTPDATE:ts}\\] \"%{WORD:method} %{NOTSPACE:path} HTTP/%{NUMBER:httpversion}\" %{NUMBER:code} %{NUMBER:size}") ?? {}
set .app = as_string(s["appname"]) ?? "unknown"
set .severity = as_string(s["severity"]) ?? "none"
set .method = g["method"] ?? "-"
set .summary = format("%s %s %s -> %d", .user, g["method"] ?? "-", g["path"] ?? "-", .status)
set . = merge(., as_map(parse_json(.extra)) ?? {})
remove .extra
`

// builtins15Lines are n records for it (seed 1).
func builtins15Lines(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 15))
	apps := []string{"checkout", "cart", "search", "auth"}
	methods := []string{"GET", "POST", "PUT", "DELETE"}
	var out [][]byte
	for i := range n {
		app, m := apps[rng.IntN(len(apps))], methods[rng.IntN(len(methods))]
		status := []int{200, 201, 404, 500, 502}[rng.IntN(5)]
		out = append(out, fmt.Appendf(nil, `{"syslog":"<%d>1 2026-11-30T10:%02d:%02dZ web%02d %s %d ID%d - request %d done","access":"10.0.%d.%d - user%d [30/Nov/2026:10:00:%02d +0000] \"%s /api/v1/%s/%d HTTP/1.1\" %d %d","user":"user%d","status":%d,"extra":"{\"region\":\"eu-%d\",\"retries\":%d}"}`,
			8+rng.IntN(16*8-8), i/60%60, i%60, rng.IntN(20), app, 1000+rng.IntN(9000), rng.IntN(100), i,
			rng.IntN(256), rng.IntN(256), rng.IntN(1000), i%60, m, app, rng.IntN(100000), status, rng.IntN(100000),
			rng.IntN(1000), status, rng.IntN(3), rng.IntN(4)))
	}
	return out
}

// TestBuiltins15 holds the three programs to one result on the benchmark's
// records: the policy on both backends (its test block) and the expr
// baseline, which gives the same keys and values.
func TestBuiltins15(t *testing.T) {
	f, info := checkPolicy(t, "builtins-15.policy", []byte(builtins15Src+builtins15Test))
	for _, r := range policytest.RunFile(f, info, backends) {
		if !r.Passed() {
			t.Fatalf("%s: %v", r.Name(), r.Failures)
		}
	}
	prog, err := compiler.Compile(f, info)
	if err != nil {
		t.Fatal(err)
	}
	base, err := exprbaseline.Builtins15()
	if err != nil {
		t.Fatal(err)
	}
	var er exprbaseline.Runner
	a := record.NewArena()
	for i, l := range builtins15Lines(50) {
		rec, err := a.DecodeJSON(l, record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		if res := prog.Run(rec); res.Fault != spec.NoFault || res.Action != spec.Keep {
			t.Fatalf("line %d: %v", i, res)
		}
		out, _, err := er.Run(base, l)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := normalJSON(t, rec.AppendJSON(nil)), normalJSON(t, out); !reflect.DeepEqual(got, want) {
			t.Fatalf("line %d: vm %v\nexpr %v", i, got, want)
		}
	}
}

// BenchmarkBuiltins15 runs the policy on the VM, transpiled to Lua and as
// its expr-lang baseline, side by side over the same records, as
// BenchmarkBackends does for the B1 policies.
func BenchmarkBuiltins15(b *testing.B) {
	f, info := checkPolicy(b, "builtins-15.policy", []byte(builtins15Src))
	prog, err := compiler.Compile(f, info)
	if err != nil {
		b.Fatal(err)
	}
	tp, err := lua.Compile(f, info, spec.Options{})
	if err != nil {
		b.Fatal(err)
	}
	base, err := exprbaseline.Builtins15()
	if err != nil {
		b.Fatal(err)
	}
	lines := builtins15Lines(500)
	b.Run("vm", func(b *testing.B) {
		m := vm.NewMachine(prog)
		runBackendBatch(b, lines, func(rec *record.Record) { m.Run(rec) })
	})
	b.Run("lua_transpiled", func(b *testing.B) {
		r := newRunner(b, tp.NewRunner)
		runBackendBatch(b, lines, func(rec *record.Record) {
			if _, err := r.Run(rec); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("expr", func(b *testing.B) {
		var r exprbaseline.Runner
		ls := lines
		timePerRecord(b, &ls, nil, func(l []byte) {
			if _, _, err := r.Run(base, l); err != nil {
				b.Fatal(err)
			}
		})
	})
}

const builtins15Test = `
test "one record" {
  input  {"syslog": "<34>1 2026-11-30T10:00:00Z web01 checkout 4711 ID47 - payment failed", "access": "10.0.0.7 - alice [30/Nov/2026:10:00:00 +0000] \"POST /api/pay HTTP/1.1\" 502 123", "user": "alice", "status": 502, "extra": "{\"region\": \"eu\", \"retries\": 2}"}
  expect {"syslog": "<34>1 2026-11-30T10:00:00Z web01 checkout 4711 ID47 - payment failed", "access": "10.0.0.7 - alice [30/Nov/2026:10:00:00 +0000] \"POST /api/pay HTTP/1.1\" 502 123", "user": "alice", "status": 502, "app": "checkout", "severity": "crit", "method": "POST", "summary": "alice POST /api/pay -> 502", "region": "eu", "retries": 2}
}
`
