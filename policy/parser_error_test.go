package policy

import (
	"slices"
	"strings"
	"testing"
)

// hasCode reports whether one of errs has code.
func hasCode(errs ErrorList, code string) bool {
	return slices.ContainsFunc(errs, func(e *Error) bool { return e.Code == code })
}

func errSummary(errs ErrorList) string {
	var parts []string
	for _, e := range errs {
		parts = append(parts, e.Pos.String()+" "+e.Code)
	}
	return strings.Join(parts, ", ")
}

// Each syntax error code, provoked by a small file: its position, and a
// piece of its message and hint.
func TestParseErrors(t *testing.T) {
	const h = "policy \"p\"\n"
	tests := []struct {
		src  string
		want string // "line:col CODE, ..."
		msg  string // substring of the first error's message
		hint string // substring of the first error's hint
	}{
		{h + "set .a = @", "2:10 E0006", "invalid character", ""},
		{h + "set .größe = 1", "2:8 E0006", "invalid character U+00F6", `quote others: ."größe"`},
		{h + "set .a = )", "2:10 E0023", "expected an expression, found ')'", ""},
		{h + "set .a = \"abc\n", "2:10 E0002", "not terminated", "raw string"},
		{h + "set .a = \"a\\qb\"", "2:12 E0003", `invalid escape sequence \q`, "raw string"},
		{h + "set .a = \"\\u00e9\"", "2:11 E0003", `\u must be followed by {HEX}`, `\u{e9}`},
		{h + "set .a = 99999999999999999999", "2:10 E0004", "out of range", "9223372036854775807"},
		{h + "set .a = 1e400", "2:10 E0004", "out of range", ""},
		{"set .a = 1", "1:1 E0005", "missing policy header", `policy "my-policy"`},
		{"", "1:1 E0005", "found end of file", ""},
		{h + "set .a = 1__0", "2:12 E0007", "'_' must separate", ""},
		{h + "set .a = 1e", "2:10 E0007", "exponent has no digits", ""},
		{h + "policy \"q\"", "2:1 E0008", "second policy header", ""},
		{h + "set .a = 1\nschema {\n}", "3:1 E0009", "schema must come before", "move the schema"},
		{h + "schema {\n}\nschema {\n}", "4:1 E0009", "second schema", ""},
		{h + "test \"t\" {\n  input {}\n  expect dropped\n}\nset .a = 1", "6:1 E0009", "statement after a test block", "above the first test"},
		{h + "if .a drop", "2:7 E0010", "expected '{' after the if condition, found keyword drop", "if C { ... }"},
		{h + "if .a = 1 {\n  drop\n}", "2:7 E0010", "found '='", "use == to compare"},
		{h + "if .a {\n} else drop", "3:8 E0010", "expected '{' after the else", "else {"},
		{h + "for k, v in .m drop", "2:16 E0010", "after the for clause", ""},
		{h + "schema [", "2:8 E0010", "expected '{' after schema, found '['", ""},
		{h + "schema otlp [", "2:13 E0010", "expected '{' after schema otlp, found '['", ""},
		{h + "schema otlp otlp", "2:13 E0010", "expected '{' after schema otlp, found identifier otlp", ""},
		{h + "schema int", "2:8 E0030", "unknown schema int", "the only named schema is otlp"},
		{h + "schema otel {\n  body: string\n}", "2:8 E0030", "unknown schema otel", "the only named schema is otlp"},
		{h + "schema OTLP", "2:8 E0030", "unknown schema OTLP", "the only named schema is otlp"},
		{h + "return 1", "2:1 E0031", "return outside a function", "drop or stop"},
		{h + "if .a {\n  return 1\n}", "3:3 E0031", "return outside a function", ""},
		{h + "fn f string {\n  return \"\"\n}", "2:6 E0032", "expected '(' after the function's name", "fn f(s: string) string"},
		{h + "fn f(s) string {\n  return s\n}", "2:7 E0032", "expected ':' and a type after the parameter s", "s: string"},
		{h + "fn f(s: string) {\n  return s\n}", "2:17 E0032", "expected the result type", "fn f(...) string"},
		{h + "fn f(a: int b: int) int {\n  return a\n}", "2:13 E0032", "expected ',' or ')'", "commas"},
		{h + "set .a = 1\nconst c = 1", "3:1 E0009", "const declarations come before the statements", "above the first statement"},
		{h + "set .a = 1\nfn f() int {\n  return 1\n}", "3:1 E0009", "fn declarations come before the statements", ""},
		{h + "const = 1", "2:1 E0028", "expected a statement", ""},
		{h + "const c == 1", "2:9 E0012", "expected '=' after the name in const", ""},
		{h + "fn if() int {\n  return 1\n}", "2:4 E0021", "reserved word", ""},
		{"module \"m\"\nschema {\n}", "2:1 E0034", "a schema in module \"m\"", "module holds import, const, fn and test only"},
		{"module \"m\"\nset .a = 1", "2:1 E0034", "a statement in module", ""},
		{"module \"m\"\nparam p: int", "2:1 E0034", "a param in module", ""},
		{"module \"m\" on_fault drop", "1:12 E0034", "a module has no on_fault", ""},
		{h + "import net", "2:8 E0035", "expected the module's path after import", ""},
		{h + "import \"n.policy\" as 1", "2:22 E0035", "expected a name after as", ""},
		{h + "test \"t\" {\n  input {}\n  assert 1 == 1\n  expect {}\n}", "4:3 E0020", "assert in a policy's test", "tests of a module"},
		{"module \"m\"\ntest \"t\" {\n  input {}\n  assert true\n}", "2:1 E0020", "of a module has input", "assert lines"},
		{h + "param env = \"prod\"", "2:11 E0033", "expected ':' and a type after the parameter env", "param env: string"},
		{h + "set .a = 1\nparam p: int", "3:1 E0009", "param declarations come before the statements", ""},
		{h + "test \"t\" input {}", "2:10 E0010", "after the test name", ""},
		{h + "if .a {\n  drop\n", "2:7 E0011", "never closed", "add a }"},
		{h + "set .a = f(.b\nset .c = 1", "2:14 E0011", "expected ')' to close the argument list opened at 2:11, found newline", ""},
		{h + "set .a = [1, 2\n", "2:15 E0011", "expected ']' to close the list", ""},
		{h + "schema {\n  a: int\nset .a = 1", "2:8 E0011", "never closed", ""},
		{h + "test \"t\" {\n  input {}\n  expect dropped\nset .a = 1", "2:10 E0011, 5:1 E0009", "never closed", ""},
		{h + "set .a == 1", "2:8 E0012", "expected '=' after the path in set, found '=='", "use = to assign; == compares"},
		{h + "set .a: 1", "2:7 E0012", "expected '=' after the path in set, found ':'", "not :"},
		{h + "set .count += 1", "2:12 E0012", "found '+'", "there is no +=: write set .count = .count + value"},
		{h + "set .a.b *= 2", "2:10 E0012", "found '*'", "write set .a.b = .a.b * value"},
		{h + "drop when .a in (\"x\", \"y\")", "2:17 E0017", "found parentheses", `x in ["a", "b"]`},
		{h + "drop when .a in (\"x\") && .b", "2:17 E0017", "found parentheses", ""},
		{h + "drop when .msg contains \"x\"", "2:16 E0022", "unexpected identifier contains", "contains is a function: write contains(s, x)"},
		{h + "drop when not .a", "2:15 E0022", "unexpected '.'", "write !x for not x"},
		{h + "set .a = .b > 1 ? 1 : 2", "2:17 E0022", "unexpected '?'", "there is no ?: operator"},
		{h + "let x == 1", "2:7 E0012", "expected '=' after the name in let", ""},
		{h + "drop if .a", "2:6 E0013", "expected when after drop, found if", "write drop when C"},
		{h + "stop if .a", "2:6 E0013", "expected when after stop", "write stop when C"},
		{h + "set a = 1", "2:5 E0014", "set needs a record path such as .a.b, found the name a", "starts with a dot: .a"},
		{h + "remove .a, x", "2:12 E0014", "remove needs a record path", ""},
		{h + "rename .a to b", "2:14 E0014", "rename needs a record path", ""},
		{h + "lift k prefix \"x\"", "2:6 E0014", "lift needs a record path", ""},
		{h + "set .a = %host", "2:10 E0015", "unknown metadata %host", ""},
		{h + "set .a = {a: 1}", "2:11 E0016", "map literal key a is not a quoted string", `"a": value`},
		{h + "set .a = {1: 1}", "2:11 E0016", "expected a quoted key", ""},
		{h + "drop when .a in .b", "2:17 E0017", "in needs a list literal", `x in ["a", "b"]`},
		{h + "schema {\n  a: integer\n}", "3:6 E0018", "unknown type integer", "did you mean int?"},
		{h + "schema {\n  a: numbr\n}", "3:6 E0018", "unknown type numbr", "bool int float"},
		{h + "schema {\n  a: Boolean\n}", "3:6 E0018", "unknown type Boolean", "did you mean bool?"},
		{h + "schema {\n  a: ?string\n}", "3:6 E0001", "expected a type, found '?'", "goes after it: string?"},
		// After map<string, string> no NEWLINE token ends the line ('>'
		// cannot end a statement): the next field's mistake is still found.
		{h + "schema {\n  m: map<string, string>\n  a: ?string\n  b: int\n}", "3:16 E0001, 4:6 E0001", "found ','", "map keys are always strings"},
		{h[:len(h)-1] + " on_fault ignore", "1:21 E0019", "expected drop or keep after on_fault", "on_fault drop"},
		{h + "test \"t\" {\n  expect dropped\n}", "2:1 E0020", `test "t" has no input`, "input {json}"},
		{h + "test \"t\" {\n  input {}\n}", "2:1 E0020", `test "t" has no expect`, ""},
		{h + "test \"t\" {\n}", "2:1 E0020", "no input and no expect", ""},
		{h + "test \"t\" {\n  input {}\n  wait \"1s\"\n  expect dropped\n}", "4:3 E0020", "wait with no input after it", ""},
		{h + "test \"t\" {\n  input {}\n  tag \"a\"\n  tag \"b\"\n  expect dropped\n}", "5:3 E0020", "second tag", ""},
		{h + "test \"t\" {\n  input {}\n  expect dropped\n  expect fault\n}", "5:3 E0020", "second expect", ""},
		{h + "test \"t\" {\n  input {}\n  output {}\n  expect dropped\n}", "4:3 E0020", "expected input, tag, param or expect", ""},
		{h + "let if = 1", "2:5 E0021", "if is a reserved word", "if_"},
		{h + "for in, v in .m {\n}", "2:5 E0021", "in is a reserved word", "policy set remove"},
		// One error for a reserved word used as a name: its uses read as
		// the name.
		{h + "let if = 1\nset .x = if + 1\ndrop when if > 2", "2:5 E0021", "if is a reserved word", ""},
		{h + "for _, in in .m {\n  set .x = in\n}", "2:8 E0021", "in is a reserved word", ""},
		{h + "set .x = if", "2:10 E0023", "expected an expression, found keyword if", ""},
		{h + "set .a = 1 2", "2:12 E0022", "unexpected number 2 after the set statement", ""},
		{h + "drop when .a = 1", "2:14 E0022", "unexpected '='", "use == to compare"},
		{h + "drop when .a and .b", "2:14 E0022", "identifier and", "&& || and !"},
		{h + "drop .a", "2:6 E0022", "unexpected '.' after drop", "drop when C"},
		{h + "set .a =", "2:9 E0023", "expected an expression, found end of file", ""},
		{h + "set .a = 1 +", "2:13 E0023", "expected an expression", ""},
		{h + "set .a = .b[]", "2:13 E0023", "expected an index", ""},
		{h + "for v in .arr {\n}", "2:5 E0024", "for needs two names", "for _, v in E"},
		{h + "schema {\n  a int\n}", "3:5 E0025", "expected ':' after the field name a", "name: type"},
		{h + "schema {\n  ...\n  a: int\n}", "3:3 E0025", "'...' must be the last line", ""},
		{h + "schema {\n  a: int b: int\n}", "3:10 E0025", "expected a newline after the field's type", ""},
		{h + "schema {\n  1: int\n}", "3:3 E0025", "expected a field name", ""},
		{"policy p", "1:8 E0026", "expected a string for the policy name", ""},
		{h + "lift .k prefix k", "2:16 E0026", "expected a string for the prefix", ""},
		{h + "test t {\n}", "2:6 E0026", "test name", ""},
		{h + "set .a = .b(1)", "2:12 E0027", "cannot call", "built-in functions"},
		{h + "else {\n}", "2:1 E0028", "expected a statement, found keyword else", "} else {"},
		{h + "x = 1", "2:1 E0028", "expected a statement", "let x = ..."},
		{h + ".a = 1", "2:1 E0028", "expected a statement", "set .a = value"},
		{h + "}", "2:1 E0028", "unexpected '}'", ""},
		{h + "// comment", "2:1 E0028", "expected a statement", "comments start with #"},
		{h + "set .a = .b\n  ?? 1", "3:3 E0028", "expected a statement, found '??'", "break the line after the operator"},
		// messages for common slips
		{h + "set .a = ..b", "2:11 E0001", "unexpected '.' after '.'", ".a.b"},
		{h + "rename .a .b", "2:11 E0001", "expected 'to' after the path in rename, found '.'", ""},
		{h + "remove .a .b", "2:11 E0001", "expected ',' between the paths", ""},
		{h + "set .a = .b.0", "2:12 E0001", "expected a field name right after '.'", ".a[0]"},
		{h + "set .a = [1\n  2]", "2:12 E0001", "expected ',' or ']' in the list, found newline", "commas"},
		{h + "set .a = {\"a\": 1\n  \"b\": 2}", "2:17 E0001", "expected ',' or '}' in the map literal, found newline", "commas"},
		{h + "set .a = {\"a\" = 1}", "2:15 E0001", "expected ':' after the key", `"key": value`},
		{h + "schema {\n  a: array[int]\n}", "3:11 E0001", "expected '<' after array", "array<string>"},
		{h + "schema {\n  a: int??\n}", "3:9 E0001", "optional once", ""},
		{h + "let .a = 1", "2:5 E0001", "expected a variable name after let", "use set"},
	}
	for _, tt := range tests {
		f, errs := ParseFile("x.policy", []byte(tt.src))
		if f == nil {
			t.Fatalf("%q: nil file", tt.src)
		}
		if got := errSummary(errs); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s\n%s", tt.src, got, tt.want, errs.Report("x.policy"))
			continue
		}
		e := firstErrorWithCode(errs, tt.want)
		if !strings.Contains(e.Msg, tt.msg) {
			t.Errorf("%q: message %q does not contain %q", tt.src, e.Msg, tt.msg)
		}
		if !strings.Contains(e.Hint, tt.hint) {
			t.Errorf("%q: hint %q does not contain %q", tt.src, e.Hint, tt.hint)
		}
		if !e.End.IsValid() || e.End.Offset < e.Pos.Offset {
			t.Errorf("%q: bad span %v-%v", tt.src, e.Pos, e.End)
		}
	}
}

// firstErrorWithCode returns the error named by the first code of want,
// the one a test case is about when it lists several.
func firstErrorWithCode(errs ErrorList, want string) *Error {
	first, _, _ := strings.Cut(want, ", ")
	code := first[strings.IndexByte(first, ' ')+1:]
	for _, e := range errs {
		if e.Code == code {
			return e
		}
	}
	return errs[0]
}

// Every code in the table is produced by at least one case above.
func TestEveryCodeTested(t *testing.T) {
	// Collected from TestParseErrors's sources by reparsing them is circular;
	// instead list files that provoke each code directly.
	byCode := map[string]string{}
	for _, src := range []string{
		"policy \"p\"\nset .a = @", "policy \"p\"\nset .a = \"x", "policy \"p\"\nset .a = \"\\q\"",
		"policy \"p\"\nset .a = 99999999999999999999", "set .a = 1", "policy \"p\"\nset .a = 1__0",
		"policy \"p\"\npolicy \"q\"", "policy \"p\"\nset .a = 1\nschema {\n}", "policy \"p\"\nif .a drop",
		"policy \"p\"\nif .a {\n", "policy \"p\"\nset .a == 1", "policy \"p\"\ndrop if .a", "policy \"p\"\nset a = 1",
		"policy \"p\"\nset .a = %x", "policy \"p\"\nset .a = {a: 1}", "policy \"p\"\ndrop when .a in .b",
		"policy \"p\"\nschema {\n  a: integer\n}", "policy \"p\" on_fault x", "policy \"p\"\ntest \"t\" {\n}",
		"policy \"p\"\nlet if = 1", "policy \"p\"\nset .a = 1 2", "policy \"p\"\nset .a =", "policy \"p\"\nfor v in .a {\n}",
		"policy \"p\"\nschema {\n  a int\n}", "policy p", "policy \"p\"\nset .a = .b(1)", "policy \"p\"\nelse {\n}",
		"policy \"p\"\nrename .a .b", "policy \"p\"\nset .a = " + strings.Repeat("-", maxNest+1) + "1",
		"module \"m\"\nset .a = 1", "policy \"p\"\nimport 1",
		"policy \"p\"\nschema otel {\n}", "policy \"p\"\nreturn 1", "policy \"p\"\nfn f {\n}", "policy \"p\"\nparam p = 1",
		"policy \"p\"\ndedupe .msg within \"1m\"",
	} {
		_, errs := ParseFile("x", []byte(src))
		for _, e := range errs {
			byCode[e.Code] = src
		}
	}
	for _, c := range Codes {
		if _, ok := byCode[c.Code]; !ok {
			t.Errorf("no test provokes %s (%s)", c.Code, c.Meaning)
		}
	}
}

// One file with many unrelated mistakes reports every one, at its place:
// recovery at the next line, statement keyword or closing brace works.
func TestParseErrorRecovery(t *testing.T) {
	src := `policy "many"

schema {
  a: int
  b: strng
  c: map<int>
}

set .a == 1
drop if .a > 2
if .x drop
set .s = "abc\q"
let if = 1
set .c = f(.b
rename .a .b
set .d = {a: 1}
if .ok {
  set .e = = 2
  remove .f .g
} else {
  stop when .x = 1
}
for v in .arr {
  set .h = v
}
set .n = 99999999999999999999
set .m = %foo
set .fine = 1

test "t" {
  input {"a": 1}
  output {}
}
set .z = 1
`
	f, errs := ParseFile("many.policy", []byte(src))
	want := "5:6 E0018, 9:8 E0012, 10:6 E0013, 11:7 E0010, 12:14 E0003, 13:5 E0021, 14:14 E0011, 15:11 E0001, 16:11 E0016, " +
		"18:12 E0023, 19:13 E0001, 21:16 E0022, 23:5 E0024, 26:10 E0004, 27:10 E0015, 30:1 E0020, 32:3 E0020, 34:1 E0009"
	if got := errSummary(errs); got != want {
		t.Errorf("errors:\n got %s\nwant %s\n%s", got, want, errs.Report("many.policy"))
	}
	// The tree is still there: the good statements and the test parsed.
	if f.Schema == nil || len(f.Schema.Type.Fields) != 3 || len(f.Tests) != 1 {
		t.Fatalf("best-effort tree lost parts: schema %v, %d tests", f.Schema, len(f.Tests))
	}
	found := false
	for _, s := range f.Stmts {
		if set, ok := s.(*SetStmt); ok && dump(set.Target) == "(field . fine)" {
			found = true
		}
	}
	if !found {
		t.Errorf("set .fine = 1 lost after the errors")
	}
}

func TestErrorListFormat(t *testing.T) {
	_, errs := ParseFile("x.policy", []byte("policy \"p\"\nset .a == 1\ndrop if .b\n"))
	if len(errs) != 2 {
		t.Fatalf("got %d errors", len(errs))
	}
	if got, want := errs[0].Error(), "2:8: error[E0012]: expected '=' after the path in set, found '=='"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := errs.Error(); !strings.HasSuffix(got, "(and 1 more errors)") {
		t.Errorf("ErrorList.Error() = %q", got)
	}
	rep := errs.Report("x.policy")
	if !strings.HasPrefix(rep, "x.policy:2:8: error[E0012]: ") || !strings.Contains(rep, "  = help: use = to assign") ||
		!strings.Contains(rep, "x.policy:3:6: error[E0013]") {
		t.Errorf("Report:\n%s", rep)
	}
	if ErrorList(nil).Err() != nil || errs.Err() == nil {
		t.Errorf("Err() must be nil exactly when the list is empty")
	}
}

// Deep nesting is an error, not a stack overflow.
func TestParseTooDeep(t *testing.T) {
	n := maxNest + 10
	tests := []string{
		"policy \"p\"\nset .a = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n",
		"policy \"p\"\nset .a = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n",
		"policy \"p\"\nset .a = " + strings.Repeat("!", n) + "true\n",
		"policy \"p\"\nset .a = " + strings.Repeat("{\"a\": ", n) + "1" + strings.Repeat("}", n) + "\n",
		"policy \"p\"\nschema {\n  a: " + strings.Repeat("array<", n) + "int" + strings.Repeat(">", n) + "\n}\n",
		"policy \"p\"\nschema {\n  a: " + strings.Repeat("{b: ", n) + "int" + strings.Repeat("}", n) + "\n}\n",
		"policy \"p\"\n" + strings.Repeat("if .a {\n", n) + strings.Repeat("}\n", n),
		"policy \"p\"\nif .a {\n}" + strings.Repeat(" else if .a {\n}", n) + "\n",
	}
	for i, src := range tests {
		if _, errs := ParseFile("deep.policy", []byte(src)); !hasCode(errs, CodeTooDeep) {
			t.Errorf("case %d: no %s among %v", i, CodeTooDeep, errs)
		}
	}
	// Just under the limit parses.
	ok := "policy \"p\"\nset .a = " + strings.Repeat("(", maxNest-10) + "1" + strings.Repeat(")", maxNest-10) + "\n"
	if _, errs := ParseFile("ok.policy", []byte(ok)); len(errs) > 0 {
		t.Errorf("nesting under the limit: %v", errs[0])
	}
}

// Common slips from other languages: each is reported once, and nothing
// after it is reported by mistake.
func TestParseErrorRecoveryTypos(t *testing.T) {
	src := `policy "typos"
// a C comment
set .a = "unterminated
if .a == 1 {
  drop
} elif .b {
  set .x == 1
}
.c = 1
set .d = contains(.log "x")
drop when .level == 'debug'
test "t" {
  input {"a": "x, "b": 1}
  expect dropped
}
test "u" {
  input {"a": 1}
  expect {"a": 1,}
}
`
	f, errs := ParseFile("typos.policy", []byte(src))
	want := "2:1 E0028, 3:10 E0002, 6:3 E0022, 7:10 E0012, 9:1 E0028, 10:24 E0001, 11:21 E0006, 13:21 E0002"
	if got := errSummary(errs); got != want {
		t.Errorf("errors:\n got %s\nwant %s\n%s", got, want, errs.Report("typos.policy"))
	}
	if len(f.Tests) != 2 || f.Tests[1].Name != "u" || f.Tests[0].Expect != ExpectDropped {
		t.Errorf("the test blocks were not recovered: %d tests", len(f.Tests))
	}
	if errs[2].Hint != "write } else if C {" {
		t.Errorf("elif hint: %q", errs[2].Hint)
	}
}
