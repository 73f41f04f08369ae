package check

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/testkit/golden"
	"github.com/policyrun/policyrun/policy"
)

func mustParse(t *testing.T, src string) *policy.File {
	t.Helper()
	f, errs := policy.ParseFile("t.policy", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("syntax errors: %v\n%s", errs, src)
	}
	return f
}

// findExpr returns the last expression on line whose source text is text.
func findExpr(f *policy.File, line int, text string) policy.Expr {
	var found policy.Expr
	policy.Inspect(f, func(n policy.Node) bool {
		if e, ok := n.(policy.Expr); ok && e.Pos().Line == line && exprText(e) == text {
			found = e
		}
		return true
	})
	return found
}

func TestFiveMistakes(t *testing.T) {
	src := `policy "five"

schema {
  status: int
  user: string?
  kubernetes: {
    namespace_name: string
  }
  ...
}

drop when .status == "500"
set .ns = .kubernetes.namespace
set .u = upper(.user)
set .x = .status + "1"
drop when matches(.user ?? "", "(")
set .ok = true
`
	_, ds := Check(mustParse(t, src))
	want := []string{"12:11 E0301", "13:22 E0201", "14:16 E0307", "15:10 E0303", "16:32 E0405"}
	var got []string
	for _, d := range ds {
		got = append(got, fmt.Sprintf("%d:%d %s", d.Pos.Line, d.Pos.Col, d.Code))
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	for _, d := range ds {
		if d.Filename != "t.policy" || d.Msg == "" || d.Hint == "" {
			t.Errorf("incomplete diagnostic %+v", d)
		}
	}
}

// TestTypes checks the type the checker gives an expression after flow
// typing and narrowing. Each policy body follows a fixed schema; the
// expression is found by its text on the last line.
func TestTypes(t *testing.T) {
	const head = `policy "t"

schema {
  status: int
  lat: float
  user: string?
  tags: array<string>
  labels: map<string>
  k: {
    pod: string
    ann: map<string>?
  }
  extra: any?
  ...
}
`
	tests := []struct {
		body, expr, want string
	}{
		{`set .a = .status`, ".status", "int"},
		{`set .a = .user`, ".user", "string?"},
		{`set .a = .user ?? "x"`, `.user ?? "x"`, "string"},
		{`set .a = .lat ?? 0`, "", ""},
		{`set .a = .other`, ".other", "any?"},
		{`set .a = .labels["x"]`, `.labels["x"]`, "string?"},
		{`set .a = .labels.x`, `.labels.x`, "string?"},
		{`set .a = .tags[0]`, `.tags[0]`, "string?"},
		{`set .a = .k.ann["x"]`, `.k.ann["x"]`, "string?"},
		{`set .a = .k`, `.k`, "{pod: string, ann: map<string>?}"},
		{`set .a = .status + .lat`, `.status + .lat`, "float"},
		{`set .a = .status / 2`, `.status / 2`, "int"},
		{`set .a = [1, 2.5]`, `[...]`, "array<float>"},
		{`set .a = [1, "x"]`, `[...]`, "array<any>"},
		{`set .a = []`, `[...]`, "array<never>"},
		{`set .a = {"x": 1}`, `{...}`, "{x: int}"},
		{`set .a = as_map(.extra) ?? {}`, `as_map(.extra) ?? {...}`, "map<any>"},
		{`set .a = as_float(.extra) ?? 0`, `as_float(.extra) ?? 0`, "float"},
		{`set .a = coalesce(.user, .labels["u"], "z")`, `coalesce(.user, .labels["u"], "z")`, "string"},
		{`set .a = capture(.k.pod, "(?P<x>a)")`, `capture(.k.pod, "(?P<x>a)")`, "map<string>?"},
		{"set .status = \"s\"\nset .a = .status", ".status", "string"},
		{"remove .status\nset .a = .status", ".status", "int?"},
		{"set .user ?= \"x\"\nset .a = .user", ".user", "string"},
		{"if .status > 1 {\n  set .n = 1\n}\nset .a = .n", ".n", "any?"}, // the open record may hold any .n
		{"if .status > 1 {\n  set .status = 1\n} else {\n  remove .status\n}\nset .a = .status", ".status", "int?"},
		{"if .status > 1 {\n  set .n = 1\n} else {\n  set .n = 2\n}\nset .a = .n", ".n", "int"},
		{"if .status > 1 {\n  set .n = 1\n} else {\n  set .n = \"x\"\n}\nset .a = .n", ".n", "any"},
		// exists(P) proves P present, not non-null: P stays optional, the
		// paths above it are not optional.
		{"if exists(.user) {\n  set .a = .user\n}", ".user", "string?"},
		{"if exists(.k.ann[\"x\"]) {\n  set .a = .k.ann\n}", ".k.ann", "map<string>"},
		{"if exists(.k.ann[\"x\"]) {\n  set .a = .k.ann[\"x\"]\n}", `.k.ann["x"]`, "string?"},
		{"if exists(.extra) {\n  set .a = .extra\n}", ".extra", "any"},
		{"if .user != null {\n  set .a = .user\n}", ".user", "string"},
		{"if .user == null {\n} else {\n  set .a = .user\n}", ".user", "string"},
		{"if !exists(.user) {\n  drop\n}\nset .a = .user", ".user", "string?"},
		{"drop when .user == null\nset .a = .user", ".user", "string"},
		{"if !exists(.user) {\n  set .user = \"d\"\n}\nset .a = .user", ".user", "string?"},
		{"if .user == null {\n  set .user = \"d\"\n}\nset .a = .user", ".user", "string"},
		{"if is_string(.extra) {\n  set .a = .extra\n}", ".extra", "string"},
		{"if is_map(.extra) {\n  set .a = .extra\n}", ".extra", "map<any>"},
		{"set .a = is_int(.extra) && .extra > 1", ".extra", "int"},
		{"set .a = !exists(.user) || .user == \"\"", ".user", "string?"},
		{"set .a = .user == null || .user == \"\"", ".user", "string"},
		{"if exists(.user) {\n  set .user = 1\n  set .a = .user\n}", ".user", "int"},
		{"if exists(.user) {\n  remove .user\n  set .a = .user\n}", ".user", "string?"},
		{"rename .user to .who\nset .a = .who", ".who", "any?"},
		{"rename .user to .status\nset .a = .status", ".status", "any"},
		{"rename .user to .lat\nset .a = .lat", ".lat", "any"},
		{"rename .status to .code\nset .a = .code", ".code", "int"},
		{"lift .k prefix \"k_\"\nset .a = .k_pod", ".k_pod", "string"},
		{"lift .k prefix \"k_\"\nset .a = .k", ".k", "{pod: string, ann: map<string>?}?"},
		{"set .n = 0\nfor k, v in .labels {\n  set .n = \"s\"\n}\nset .a = .n", ".n", "any"},
		{"for k, v in .labels {\n  set .a = v\n}", "v", "string"},
		{"for i, v in .tags {\n  set .a = i\n}", "i", "int"},
		{"for k, v in .k {\n  set .a = v\n}", "v", "any?"},
		{"let m = capture(.k.pod, `(?P<x>a)`)\nif m != null {\n  set .a = m\n}", "m", "map<string>"},
		{"set .a = %time", "%time", "timestamp"},
		{"set .x.y.z = 1\nset .a = .x", ".x", "{y: {z: int, ...}, ...}"},
		{"set .labels.new = 1\nset .a = .labels", ".labels", "map<any>"},
	}
	for _, tt := range tests {
		if tt.expr == "" {
			continue
		}
		src := head + tt.body + "\n"
		f := mustParse(t, src)
		info, ds := Check(f)
		for _, d := range ds {
			if d.Severity == diag.Error {
				t.Errorf("%q: unexpected %s", tt.body, d)
			}
		}
		line := strings.Count(src, "\n")
		if !strings.Contains(strings.Split(src, "\n")[line-1], tt.expr) {
			// The expression sits on an earlier line (inside a block).
			for l := line; l > 0; l-- {
				if findExpr(f, l, tt.expr) != nil {
					line = l
					break
				}
			}
		}
		e := findExpr(f, line, tt.expr)
		if e == nil {
			t.Errorf("%q: no expression %q", tt.body, tt.expr)
			continue
		}
		if got := info.Types[e].String(); got != tt.want {
			t.Errorf("%q: type of %s = %s, want %s", tt.body, tt.expr, got, tt.want)
		}
	}
}

func TestInfo(t *testing.T) {
	src := `policy "info"

schema {
  user: string?
  level: string
  ...
}

let m = capture(.level, ` + "`(?P<ip>\\d+)`" + `)
if .user != null {
  set .u = upper(.user)
}
drop when .level in ["a", "b", "a"]
set .ip = m["ip"] ?? ""
`
	f := mustParse(t, src)
	info, ds := Check(f)
	if len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	if got := info.Root.String(); got != "{user: string?, level: string, ...}" {
		t.Errorf("Root = %s", got)
	}
	user := findExpr(f, 11, ".user")
	if info.Types[user].String() != "string" || info.Guards[user].String() != "string?" {
		t.Errorf(".user narrowed %s, guard %s", info.Types[user], info.Guards[user])
	}
	call := findExpr(f, 11, "upper(.user)").(*policy.CallExpr)
	if info.Calls[call] == nil || info.Calls[call].ID != builtin.Upper {
		t.Errorf("Calls[upper] = %v", info.Calls[call])
	}
	pat := findExpr(f, 9, "`(?P<ip>\\d+)`")
	if re := info.Regexps[pat]; re == nil || re.String() != `(?P<ip>\d+)` {
		t.Errorf("Regexps = %v", info.Regexps)
	}
	in := findExpr(f, 13, `.level in [...]`).(*policy.BinaryExpr)
	if set := info.InSets[in]; set == nil || fmt.Sprint(set.Values) != "[a b]" || set.Elem.String() != "string" {
		t.Errorf("InSets = %+v", info.InSets[in])
	}
	var def, use *Local
	for id, l := range info.Defs {
		if id.Name == "m" {
			def = l
		}
	}
	for id, l := range info.Uses {
		if id.Name == "m" {
			use = l
		}
	}
	if def == nil || def != use || def.Type.String() != "map<string>?" || def.Kind != LetVar {
		t.Errorf("m: def %+v, use %+v", def, use)
	}
}

// TestEveryExprTyped checks that the clean golden policies leave no
// expression the back ends will evaluate without a type in Info.Types.
func TestEveryExprTyped(t *testing.T) {
	for _, file := range golden.Glob(t, "testdata/ok_*.policy") {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, errs := policy.ParseFile(file, src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", file, errs)
		}
		info, diags := Check(f)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", file, diags)
		}
		skip := map[policy.Node]bool{}
		for _, s := range f.Stmts {
			policy.Inspect(s, func(n policy.Node) bool {
				switch n := n.(type) {
				case *policy.CallExpr:
					skip[n.Fun] = true
				case *policy.MapLit:
					for _, e := range n.Entries {
						skip[e.Key] = true
					}
				case *policy.SetStmt:
					skipPathParents(n.Target, skip)
				case *policy.RenameStmt:
					skipPathParents(n.To, skip)
				case *policy.StateStmt:
					if n.Count != nil {
						skipPathParents(n.Count, skip)
					}
				case *policy.ForStmt:
					skip[n.Key], skip[n.Value] = true, true
				case *policy.LetStmt:
					skip[n.Name] = true
				}
				return true
			})
			policy.Inspect(s, func(n policy.Node) bool {
				if e, ok := n.(policy.Expr); ok && !skip[n] && info.Types[e] == nil {
					t.Errorf("%s:%s: %s has no type", file, e.Pos(), exprText(e))
				}
				return true
			})
		}
	}
}

// skipPathParents marks the path steps above a write target: a write does
// not read them.
func skipPathParents(e policy.Expr, skip map[policy.Node]bool) {
	for {
		switch x := e.(type) {
		case *policy.FieldExpr:
			e = x.X
		case *policy.IndexExpr:
			e = x.X
		default:
			skip[e] = true
			return
		}
		skip[e] = true
	}
}
