package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/testkit/golden"
)

// Each testdata/format/NAME.input formats to NAME.golden.
func TestFormatGolden(t *testing.T) {
	n := golden.Files(t, filepath.Join("testdata", "format", "*.input"), ".golden", func(t *testing.T, in string, src []byte) []byte {
		got, err := FormatSource(in, src)
		if err != nil {
			t.Fatalf("FormatSource: %v", err)
		}
		checkIdempotent(t, in, got)
		return got
	})
	if n < 15 {
		t.Errorf("only %d golden cases", n)
	}
}

// checkIdempotent formats once-formatted text again and wants it unchanged.
func checkIdempotent(t *testing.T, name string, formatted []byte) {
	t.Helper()
	again, err := FormatSource(name, formatted)
	if err != nil {
		t.Fatalf("%s: formatted output does not parse: %v\n%s", name, err, formatted)
	}
	if !bytes.Equal(again, formatted) {
		t.Errorf("%s: formatting is not idempotent:\n%s", name, golden.Diff(formatted, again))
	}
}

// moduleRoot walks up from the package directory to the directory of go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found")
		}
		dir = parent
	}
}

// Every .policy file in the repository's testdata, conformance and examples
// directories (other packages add them over time) formats idempotently:
// formatting twice gives what formatting once gave, and the formatted text
// parses to the same statements, schema and tests.
func TestFormatIdempotentRepository(t *testing.T) {
	root := moduleRoot(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".policy" {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		inScope := false
		for _, p := range parts[:len(parts)-1] {
			if p == "testdata" || p == "conformance" || p == "examples" {
				inScope = true
			}
		}
		if !inScope {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, errs := ParseFile(rel, src)
		if len(errs) > 0 {
			// Files written to exercise syntax errors are not formattable.
			t.Logf("%s: skipped, syntax errors: %v", rel, errs)
			return nil
		}
		once, err := Format(f, src)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		checkIdempotent(t, rel, once)
		g, _ := ParseFile(rel, once)
		if sameTree(f, g) != "" {
			t.Errorf("%s: formatting changed the tree: %s", rel, sameTree(f, g))
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no policy files found below %s", root)
	}
	t.Logf("%d policy files formatted twice", n)
}

// sameTree compares two parses of (possibly differently laid out) source
// by their dumped statements, schema, tests, header and comments; it
// returns what differs, or "".
func sameTree(a, b *File) string {
	if a.Name != b.Name || a.Module != b.Module || a.OnFault != b.OnFault || a.OnFaultPos.IsValid() != b.OnFaultPos.IsValid() {
		return "header"
	}
	if len(a.Imports) != len(b.Imports) {
		return "import count"
	}
	for i, x := range a.Imports {
		y := b.Imports[i]
		if x.Path.Str != y.Path.Str || (x.Name == nil) != (y.Name == nil) || x.Name != nil && x.Name.Name != y.Name.Name {
			return "import " + x.Path.Raw
		}
	}
	if (a.Schema == nil) != (b.Schema == nil) || a.Schema != nil && (dump(a.Schema.Type) != dump(b.Schema.Type) || a.Schema.IsOTLP() != b.Schema.IsOTLP()) {
		return "schema"
	}
	if len(a.Decls) != len(b.Decls) {
		return "declaration count"
	}
	for i := range a.Decls {
		if x, y := dump(a.Decls[i]), dump(b.Decls[i]); x != y {
			return "declaration " + x + " became " + y
		}
	}
	if len(a.Stmts) != len(b.Stmts) {
		return "statement count"
	}
	for i := range a.Stmts {
		if x, y := dump(a.Stmts[i]), dump(b.Stmts[i]); x != y {
			return "statement " + x + " became " + y
		}
	}
	if len(a.Tests) != len(b.Tests) {
		return "test count"
	}
	for i := range a.Tests {
		x, y := a.Tests[i], b.Tests[i]
		if x.Name != y.Name || dump(x.Input) != dump(y.Input) || dump(x.Want) != dump(y.Want) || x.Expect != y.Expect ||
			(x.Tag == nil) != (y.Tag == nil) || x.Tag != nil && x.Tag.Str != y.Tag.Str || len(x.Asserts) != len(y.Asserts) {
			return "test " + x.Name
		}
		for j := range x.Asserts {
			if dump(x.Asserts[j].Cond) != dump(y.Asserts[j].Cond) {
				return "test " + x.Name + ": assert " + dump(x.Asserts[j].Cond)
			}
		}
	}
	if len(a.Comments) != len(b.Comments) {
		return "comment count"
	}
	for i := range a.Comments {
		// The formatter drops what the scanner skips at a comment's end.
		if strings.TrimRight(a.Comments[i].Text, " \t\r") != b.Comments[i].Text {
			return "comment " + a.Comments[i].Text
		}
	}
	return ""
}

// The golden inputs keep their meaning through formatting.
func TestFormatKeepsTree(t *testing.T) {
	for _, in := range golden.Glob(t, filepath.Join("testdata", "format", "*.input")) {
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		f, errs := ParseFile(in, src)
		if len(errs) > 0 {
			t.Fatalf("%s: %v", in, errs)
		}
		out, err := Format(f, src)
		if err != nil {
			t.Fatal(err)
		}
		g, errs := ParseFile(in, out)
		if len(errs) > 0 {
			t.Fatalf("%s: output does not parse: %v", in, errs)
		}
		if d := sameTree(f, g); d != "" {
			t.Errorf("%s: %s", in, d)
		}
	}
}

func TestFormatRefusesErrors(t *testing.T) {
	_, err := FormatSource("bad.policy", []byte("policy \"p\"\nset .a == 1\n"))
	errs, ok := err.(ErrorList)
	if !ok || len(errs) != 1 || errs[0].Code != CodeAssignOp {
		t.Fatalf("FormatSource error = %v", err)
	}
	f, _ := ParseFile("bad.policy", []byte("policy \"p\"\nset .a = )\n"))
	if _, err := Format(f, nil); err == nil {
		t.Errorf("Format of a tree with a BadExpr succeeded")
	}
}

// Small layout rules, one per case.
func TestFormatSnippets(t *testing.T) {
	const h = "policy \"p\"\n\n"
	tests := []struct{ in, want string }{
		{"policy \"p\"", "policy \"p\"\n"},
		{"policy `raw`", "policy \"raw\"\n"},
		{h + "set .a=1", h + "set .a = 1\n"},
		{h + "set .\"a\\u{41}\" = 1", h + "set .\"aA\" = 1\n"},
		{h + "if .a { drop }", h + "if .a {\n  drop\n}\n"},
		{h + "if .a {}", h + "if .a {\n}\n"},
		{h + "set .a = [\n]", h + "set .a = []\n"},
		{h + "set .a = [1,\n2]", h + "set .a = [\n  1,\n  2\n]\n"},
		{h + "set .a = f(\n1)", h + "set .a = f(\n  1\n)\n"},
		{h + "set .a = 1 # c", h + "set .a = 1 # c\n"},
		{h + "set .a = 1 #   spaced   ", h + "set .a = 1 #   spaced\n"},
		{h + "set # c\n  .a = 1", ""},
		{"policy \"p\"\nschema {}\nset .a = 1", "policy \"p\"\n\nschema {}\n\nset .a = 1\n"},
		{"policy \"p\"\nschema otlp\nset .a = 1", "policy \"p\"\n\nschema otlp\n\nset .a = 1\n"},
		{"policy \"p\"\nschema  otlp  # c\nset .a = 1", "policy \"p\"\n\nschema otlp # c\n\nset .a = 1\n"},
		{"policy \"p\"\nschema otlp{\n}", "policy \"p\"\n\nschema otlp {}\n"},
		{"policy \"p\"\nschema otlp\n{ body: string }", "policy \"p\"\n\nschema otlp {\n  body: string\n}\n"},
		{"policy \"p\"\nschema otlp {\n  resource: {attributes: {\"k8s.pod.name\": string?, ...}}\n}",
			"policy \"p\"\n\nschema otlp {\n  resource: {\n    attributes: {\n      \"k8s.pod.name\": string?\n      ...\n    }\n  }\n}\n"},
		{"policy \"p\"\ntest \"a\" {\n  input {}\n  expect fault\n}\ntest \"b\" {\n  input {}\n  expect fault\n}",
			"policy \"p\"\n\ntest \"a\" {\n  input  {}\n  expect fault\n}\n\ntest \"b\" {\n  input  {}\n  expect fault\n}\n"},
		{"policy \"p\"\ntest \"a\" {\n  input {\"a\": [1, 2]}\n  expect [{\"a\": 1},\n{\"a\": 2}]\n}",
			"policy \"p\"\n\ntest \"a\" {\n  input  {\"a\": [1, 2]}\n  expect [\n    {\"a\": 1},\n    {\"a\": 2}\n  ]\n}\n"},
		{h + "split   .events # one per event", h + "split .events # one per event\n"},
		{h + "split .a[\"b c\"]\nset .x = .a", ""},
		{"policy \"p\"\ntest \"a\" {\n  input {}\n  expect  [ ]\n}",
			"policy \"p\"\n\ntest \"a\" {\n  input  {}\n  expect []\n}\n"},
	}
	for _, tt := range tests {
		got, err := FormatSource("x.policy", []byte(tt.in))
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		want := tt.want
		if want == "" {
			want = tt.in + "\n"
		}
		if string(got) != want {
			t.Errorf("%q:\n got %q\nwant %q", tt.in, got, want)
		}
		checkIdempotent(t, tt.in, got)
	}
}
