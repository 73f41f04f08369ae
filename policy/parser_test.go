package policy

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dump writes a node as a compact S-expression, so that tests can state the
// shape of a tree in one line.
func dump(n Node) string {
	var b strings.Builder
	dumpTo(&b, n)
	return b.String()
}

// checkDump parses src after a policy header, followed by tail, and
// compares the dumps of the nodes part picks from the file, joined by
// "; ", with want. It returns the file, or nil when src does not parse.
func checkDump[N Node](t *testing.T, src, tail, want string, part func(*File) []N) *File {
	t.Helper()
	f, errs := ParseFile("x.policy", []byte("policy \"p\"\n"+src+"\n"+tail))
	if len(errs) > 0 {
		t.Errorf("%q: %v", src, errs.Report("x"))
		return nil
	}
	var parts []string
	for _, n := range part(f) {
		parts = append(parts, dump(n))
	}
	if got := strings.Join(parts, "; "); got != want {
		t.Errorf("%q:\n got %s\nwant %s", src, got, want)
	}
	return f
}

func stmtsOf(f *File) []Stmt { return f.Stmts }

func dumpTo(b *strings.Builder, n Node) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	// seq writes open, the n items separated by sep, and close.
	seq := func(open, sep, close string, n int, item func(i int)) {
		w("%s", open)
		for i := range n {
			if i > 0 {
				w("%s", sep)
			}
			item(i)
		}
		w("%s", close)
	}
	// sexp writes (head part part …).
	sexp := func(head string, parts ...Node) {
		w("(%s", head)
		for _, p := range parts {
			w(" ")
			dumpTo(b, p)
		}
		w(")")
	}
	// opt is x as parts of sexp: none when it is nil.
	opt := func(x Expr) []Node {
		if x == nil {
			return nil
		}
		return []Node{x}
	}
	switch n := n.(type) {
	case nil:
		w("nil")
	case *RootExpr:
		w(".")
	case *MetaExpr:
		w("%%%s", n.Name)
	case *Ident:
		if n == nil {
			w("nil")
			return
		}
		w("%s", n.Name)
	case *FieldExpr:
		w("(field ")
		dumpTo(b, n.X)
		if n.Quoted {
			w(" %q)", n.Name)
		} else {
			w(" %s)", n.Name)
		}
	case *IndexExpr:
		sexp("index", n.X, n.Index)
	case *CallExpr:
		var args []Node
		for _, a := range n.Args {
			args = append(args, a)
		}
		name := n.Fun.Name
		if n.Qual != nil {
			name = n.Qual.Name + "." + name
		}
		sexp("call "+name, args...)
	case *BinaryExpr:
		sexp(fmt.Sprint(n.Op), n.X, n.Y)
	case *UnaryExpr:
		w("(%s", n.Op)
		dumpTo(b, n.X)
		w(")")
	case *ParenExpr:
		sexp("paren", n.X)
	case *BasicLit:
		switch n.Kind {
		case LitNull:
			w("null")
		case LitBool:
			w("%v", n.Bool)
		case LitInt:
			w("int:%d", n.Int)
		case LitFloat:
			w("float:%v", n.Float)
		case LitString:
			w("str:%q", n.Str)
		}
	case *ListLit:
		seq("[", " ", "]", len(n.Elems), func(i int) { dumpTo(b, n.Elems[i]) })
	case *MapLit:
		seq("{", " ", "}", len(n.Entries), func(i int) {
			w("%q:", n.Entries[i].Key.Str)
			dumpTo(b, n.Entries[i].Value)
		})
	case *BadExpr:
		w("BAD")
	case *SetStmt:
		w("(set ")
		dumpTo(b, n.Target)
		w(" %s ", n.Op)
		dumpTo(b, n.Value)
		w(")")
	case *RemoveStmt:
		var targets []Node
		for _, t := range n.Targets {
			targets = append(targets, t)
		}
		sexp("remove", targets...)
	case *RenameStmt:
		sexp("rename", n.From, n.To)
	case *LiftStmt:
		w("(lift ")
		dumpTo(b, n.Target)
		if n.Prefix != nil {
			w(" %q", n.Prefix.Str)
		}
		w(")")
	case *DropStmt:
		sexp("drop", opt(n.Cond)...)
	case *StopStmt:
		sexp("stop", opt(n.Cond)...)
	case *IfStmt:
		w("(if ")
		dumpTo(b, n.Cond)
		w(" ")
		dumpTo(b, n.Body)
		if n.Else != nil {
			w(" else ")
			dumpTo(b, n.Else)
		}
		w(")")
	case *Block:
		seq("{", "; ", "}", len(n.Stmts), func(i int) { dumpTo(b, n.Stmts[i]) })
	case *LetStmt:
		sexp("let "+n.Name.Name, n.Value)
	case *ForStmt:
		sexp("for "+n.Key.Name+" "+n.Value.Name, n.X, n.Body)
	case *BadStmt:
		w("BADSTMT")
	case *ReturnStmt:
		sexp("return", n.Value)
	case *ConstDecl:
		sexp("const "+n.Name.Name, n.Value)
	case *FuncDecl:
		w("(fn %s (", n.Name.Name)
		for i, prm := range n.Params {
			if i > 0 {
				w(" ")
			}
			w("%s:", prm.Name.Name)
			dumpTo(b, prm.Type)
			if prm.Default != nil {
				w("=")
				dumpTo(b, prm.Default)
			}
		}
		w(") ")
		dumpTo(b, n.Result)
		w(" ")
		dumpTo(b, n.Body)
		w(")")
	case *NamedType:
		w("%s", n.Name)
	case *ArrayType:
		w("array<")
		dumpTo(b, n.Elem)
		w(">")
	case *MapType:
		w("map<")
		dumpTo(b, n.Elem)
		w(">")
	case *OptionalType:
		dumpTo(b, n.Elem)
		w("?")
	case *ObjectType:
		if n == nil {
			w("nil")
			return
		}
		close := "}"
		if n.Open {
			close = " ...}"
		}
		seq("{", " ", close, len(n.Fields), func(i int) {
			f := n.Fields[i]
			if f.Quoted {
				w("%q:", f.Name)
			} else {
				w("%s:", f.Name)
			}
			dumpTo(b, f.Type)
		})
	case *BadType:
		w("BADTYPE")
	default:
		w("?%T", n)
	}
}

func mustParse(t *testing.T, src string) *File {
	t.Helper()
	f, errs := ParseFile("test.policy", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("ParseFile(%q): %v", src, errs.Report("test.policy"))
	}
	return f
}

func TestParseExpr(t *testing.T) {
	tests := []struct{ src, want string }{
		// paths
		{".", "."},
		{".a", "(field . a)"},
		{".a.b.c", "(field (field (field . a) b) c)"},
		{`."key with spaces"`, `(field . "key with spaces")`},
		{`.a."b c".d`, `(field (field (field . a) "b c") d)`},
		{".a[0]", "(index (field . a) int:0)"},
		{`.a["k"]`, `(index (field . a) str:"k")`},
		{`.a[.b ?? "x"].c`, `(index (field . a) (?? (field . b) str:"x"))`[:0] + `(field (index (field . a) (?? (field . b) str:"x")) c)`},
		{".tag.input.set", "(field (field (field . tag) input) set)"},
		{`f(x)[k].y`, "(field (index (call f x) k) y)"},
		{"%tag", "%tag"},
		{"%time", "%time"},
		{"x", "x"},
		// literals
		{"1_000", "int:1000"},
		{"9223372036854775807", "int:9223372036854775807"},
		{"-9223372036854775808", "(-int:-9223372036854775808)"},
		{"1.5", "float:1.5"},
		{"1e3", "float:1000"},
		{`"a\tb\u{e9}"`, `str:"a\tbé"`},
		{"`\\d+`", `str:"\\d+"`},
		{"true", "true"},
		{"false", "false"},
		{"null", "null"},
		{"[]", "[]"},
		{"[1, 2.5, \"x\", [true], {}]", `[int:1 float:2.5 str:"x" [true] {}]`},
		{"[1, 2,]", "[int:1 int:2]"},
		{`{"a": 1, "b": {"c": [null]}}`, `{"a":int:1 "b":{"c":[null]}}`},
		{"{\n  \"a\": 1,\n  \"b\": -2\n}", `{"a":int:1 "b":(-int:2)}`},
		{"[\n  1,\n  2\n]", "[int:1 int:2]"},
		// calls
		{"now()", "(call now)"},
		{`contains(.log, "healthz")`, `(call contains (field . log) str:"healthz")`},
		{"f(a,\n  b)", "(call f a b)"},
		{"f(\n  a\n)", "(call f a)"},
		// precedence, lowest first: ?? || && comparisons + * unary postfix
		{"a ?? b || c", "(?? a (|| b c))"},
		{"a ?? b ?? c", "(?? a (?? b c))"},
		{"a || b && c", "(|| a (&& b c))"},
		{"a && b == c", "(&& a (== b c))"},
		{"a == b + c", "(== a (+ b c))"},
		{"a + b * c", "(+ a (* b c))"},
		{"a - b - c", "(- (- a b) c)"},
		{"a / b % c", "(% (/ a b) c)"},
		{"-a * b", "(* (-a) b)"},
		{"!a && !!b", "(&& (!a) (!(!b)))"},
		{"-f(x).y", "(-(field (call f x) y))"},
		{"(a + b) * c", "(* (paren (+ a b)) c)"},
		{"a < b", "(< a b)"},
		{"a <= b", "(<= a b)"},
		{"a > b", "(> a b)"},
		{"a >= b", "(>= a b)"},
		{"a != b", "(!= a b)"},
		{`.x in ["a", "b"]`, `(in (field . x) [str:"a" str:"b"])`},
		{`.x in ([1])`, `(in (field . x) (paren [int:1]))`},
		{`.x in [1] && .y`, `(&& (in (field . x) [int:1]) (field . y))`},
		{"a + %tag % 2", "(+ a (% %tag int:2))"},
		{"a &&\n  b", "(&& a b)"},
		{"(a\n  + b)", "(paren (+ a b))"},
		{`as_map(parse_json(.log)) ?? {}`, "(?? (call as_map (call parse_json (field . log))) {})"},
	}
	for _, tt := range tests {
		f, errs := ParseFile("x.policy", []byte("policy \"p\"\nset .out = "+tt.src+"\n"))
		if len(errs) > 0 {
			t.Errorf("%q: %v", tt.src, errs)
			continue
		}
		if len(f.Stmts) != 1 {
			t.Errorf("%q: %d statements", tt.src, len(f.Stmts))
			continue
		}
		if got := dump(f.Stmts[0].(*SetStmt).Value); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

func TestParseStmts(t *testing.T) {
	tests := []struct{ src, want string }{
		{"set .a = 1", "(set (field . a) = int:1)"},
		{"set .a ?= 1", "(set (field . a) ?= int:1)"},
		{"set . = {}", "(set . = {})"},
		{"set %tag = \"t\"", `(set %tag = str:"t")`},
		{"set .a.b[0] = x", "(set (index (field (field . a) b) int:0) = x)"},
		{"remove .a", "(remove (field . a))"},
		{"remove .a, .b.c, .\"d e\"", `(remove (field . a) (field (field . b) c) (field . "d e"))`},
		{"remove .a,\n  .b", "(remove (field . a) (field . b))"},
		{"rename .a to .b", "(rename (field . a) (field . b))"},
		{"rename .to to .from", "(rename (field . to) (field . from))"},
		{"lift .k", "(lift (field . k))"},
		{`lift .k prefix "k8s_"`, `(lift (field . k) "k8s_")`},
		{"drop", "(drop)"},
		{"drop when .a == 1", "(drop (== (field . a) int:1))"},
		{"stop", "(stop)"},
		{"stop when !.b", "(stop (!(field . b)))"},
		{"let x = .a", "(let x (field . a))"},
		{"let to = 1", "(let to int:1)"},
		{"for k, v in .m {\n  set .x = v\n}", "(for k v (field . m) {(set (field . x) = v)})"},
		{"for _, v in [1, 2] {\n}", "(for _ v [int:1 int:2] {})"},
		{"if .a {\n  drop\n}", "(if (field . a) {(drop)})"},
		{"if .a { drop }", "(if (field . a) {(drop)})"},
		{"if .a {\n  drop\n} else {\n  stop\n}", "(if (field . a) {(drop)} else {(stop)})"},
		{"if .a {\n} else if .b {\n  drop\n} else {\n}", "(if (field . a) {} else (if (field . b) {(drop)} else {}))"},
		{"if .a {\n}\nelse {\n}", "(if (field . a) {} else {})"},
		{"if .a\n{\n}", "(if (field . a) {})"},
		{"if .a {\n  if .b {\n    set .c = 1\n    remove .d\n  }\n}", "(if (field . a) {(if (field . b) {(set (field . c) = int:1); (remove (field . d))})})"},
		{"set .a = 1 # c\n# own\ndrop # d", "(set (field . a) = int:1); (drop)"},
		{"drop when .a &&\n  .b", "(drop (&& (field . a) (field . b)))"},
		{"\n\nset .a = 1\n\n\nset .b = 2\n", "(set (field . a) = int:1); (set (field . b) = int:2)"},
	}
	for _, tt := range tests {
		checkDump(t, tt.src, "", tt.want, stmtsOf)
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		src     string
		name    string
		onFault OnFault
		faultAt string
	}{
		{`policy "a"`, "a", OnFaultKeep, "-"},
		{`policy "a b" on_fault drop`, "a b", OnFaultDrop, "1:23"},
		{`policy "x" on_fault keep`, "x", OnFaultKeep, "1:21"},
		{"# lead comment\n\npolicy `raw`", "raw", OnFaultKeep, "-"},
	}
	for _, tt := range tests {
		f := mustParse(t, tt.src)
		if f.Name != tt.name || f.OnFault != tt.onFault || f.OnFaultPos.String() != tt.faultAt {
			t.Errorf("%q: got %q %v %v", tt.src, f.Name, f.OnFault, f.OnFaultPos)
		}
	}
	f := mustParse(t, "policy \"p\"\n")
	if f.Policy.String() != "1:1" || f.NamePos.String() != "1:8" {
		t.Errorf("positions: policy %v name %v", f.Policy, f.NamePos)
	}
}

func TestParseSchema(t *testing.T) {
	tests := []struct{ src, want string }{
		{"schema {}", "{}"},
		{"schema {\n}", "{}"},
		{"schema {\n  ...\n}", "{ ...}"},
		{"schema {\n  a: int\n  b: string?\n}", "{a:int b:string?}"},
		{"schema { a: int, b: bool }", "{a:int b:bool}"},
		{"schema {\n  a: bool\n  b: int\n  c: float\n  d: string\n  e: bytes\n  f: timestamp\n  g: null\n  h: any\n}",
			"{a:bool b:int c:float d:string e:bytes f:timestamp g:null h:any}"},
		{"schema {\n  a: array<int>\n  b: map<string>\n  c: array<map<int?>>?\n}", "{a:array<int> b:map<string> c:array<map<int?>>?}"},
		{"schema {\n  k: {\n    pod: string\n    labels: map<string>\n    ...\n  }\n  ...\n}", "{k:{pod:string labels:map<string> ...} ...}"},
		{"schema {\n  \"a b\": int\n  tag: string\n  input: int\n  set: any\n}", `{"a b":int tag:string input:int set:any}`},
		{"schema {\n  o: {}?\n}", "{o:{}?}"},
		{"schema\n{\n  a: int\n}", "{a:int}"},
	}
	for _, tt := range tests {
		f := mustParse(t, "policy \"p\"\n"+tt.src+"\n")
		if f.Schema == nil {
			t.Errorf("%q: no schema", tt.src)
			continue
		}
		if got := dump(f.Schema.Type); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

// schema otlp: otlp is a keyword right after schema only.
func TestParseSchemaOTLP(t *testing.T) {
	tests := []struct {
		src  string
		otlp string // the position of otlp, "" for a plain schema
		typ  string // the block, "nil" when there is none
		end  string // where the schema ends
	}{
		{"schema otlp", "2:8", "nil", "2:12"},
		{"schema otlp # no refinements", "2:8", "nil", "2:12"},
		{"schema otlp {}", "2:8", "{}", "2:15"},
		{"schema otlp {\n  body: string?\n}", "2:8", "{body:string?}", "4:2"},
		{"schema otlp\n{\n  body: string\n}", "2:8", "{body:string}", "5:2"},
		{"schema otlp {\n  attributes: {\n    \"http.method\": string?\n    ...\n  }\n  resource: { attributes: map<string> }\n}", "2:8",
			`{attributes:{"http.method":string? ...} resource:{attributes:map<string>}}`, "8:2"},
		{"schema {\n  otlp: int\n}", "", "{otlp:int}", "4:2"},
	}
	for _, tt := range tests {
		f := mustParse(t, "policy \"p\"\n"+tt.src+"\nset .a = 1\n")
		s := f.Schema
		if s == nil {
			t.Errorf("%q: no schema", tt.src)
			continue
		}
		otlp := ""
		if s.OTLP.IsValid() {
			otlp = s.OTLP.String()
		}
		if otlp != tt.otlp || s.IsOTLP() != (tt.otlp != "") || f.IsOTLP() != s.IsOTLP() {
			t.Errorf("%q: otlp at %q (IsOTLP %v), want %q", tt.src, otlp, s.IsOTLP(), tt.otlp)
		}
		if got := dump(s.Type); got != tt.typ {
			t.Errorf("%q: block %s, want %s", tt.src, got, tt.typ)
		}
		if got := s.End().String(); got != tt.end {
			t.Errorf("%q: ends at %s, want %s", tt.src, got, tt.end)
		}
		if len(f.Stmts) != 1 {
			t.Errorf("%q: %d statements after the schema", tt.src, len(f.Stmts))
		}
	}
	if f := mustParse(t, "policy \"p\"\nset .a = 1\n"); f.IsOTLP() {
		t.Errorf("a file without a schema is OTLP")
	}
	// Anywhere else otlp is a name.
	for _, src := range []string{
		"let otlp = 1\nset .otlp = otlp",
		"for otlp, v in .m {\n  set .x[otlp] = v\n}",
		"set .a = otlp(1)",
		"drop when .schema.otlp == 1",
	} {
		f := mustParse(t, "policy \"p\"\n"+src+"\n")
		if f.Schema != nil {
			t.Errorf("%q: parsed a schema", src)
		}
	}
}

// The contextual keywords (docs/language.md) are keywords only where the
// grammar expects them, and name locals everywhere else.
func TestParseContextualKeywords(t *testing.T) {
	tests := []struct{ src, want string }{
		{"let tag = 1\nset .x = tag", "(let tag int:1); (set (field . x) = tag)"},
		{"let prefix = \"p_\"\nlift .k prefix \"k_\"\nset .p = prefix", `(let prefix str:"p_"); (lift (field . k) "k_"); (set (field . p) = prefix)`},
		{"let input = .log\nset .n = len(input)", "(let input (field . log)); (set (field . n) = (call len input))"},
		{"let when = true\ndrop when when", "(let when true); (drop when)"},
		{"let to = .a\nrename .a to .b", "(let to (field . a)); (rename (field . a) (field . b))"},
		{"for expect, dropped in .m {\n  set .x[expect] = dropped\n}", "(for expect dropped (field . m) {(set (index (field . x) expect) = dropped)})"},
		{"let fault = 1\nlet on_fault = fault + 1", "(let fault int:1); (let on_fault (+ fault int:1))"},
		{"let test = 1\nlet schema = test", "(let test int:1); (let schema test)"},
		{"let keep = 1\nlet otlp = keep", "(let keep int:1); (let otlp keep)"},
		{"set .x = [\n  tag,\n  test,\n  schema\n]", "(set (field . x) = [tag test schema])"},
		{"set .x = f(\n  input\n)", "(set (field . x) = (call f input))"},
		// %tag after a contextual keyword is metadata, as after a keyword
		{"drop when %tag == \"x\"", `(drop (== %tag str:"x"))`},
		{"let tag = 2\nset .m = tag % 2", "(let tag int:2); (set (field . m) = (% tag int:2))"},
		// a line may break after when, prefix and to, as after a keyword
		{"drop when\n  .a == 1", "(drop (== (field . a) int:1))"},
		{"lift .k prefix\n  \"p_\"", `(lift (field . k) "p_")`},
		{"rename .a to\n  .b", "(rename (field . a) (field . b))"},
		// const, fn and return are names where no declaration or return
		// can start
		{"let const = 1\nlet fn = const\nlet return = fn", "(let const int:1); (let fn const); (let return fn)"},
		{"set .x = fn(const)", "(set (field . x) = (call fn const))"},
	}
	for _, tt := range tests {
		f := checkDump(t, tt.src, "", tt.want, stmtsOf)
		if f == nil {
			continue
		}
		if f.Schema != nil || len(f.Tests) > 0 {
			t.Errorf("%q: parsed a schema or a test", tt.src)
		}
	}
	// In a test block the words are keywords; the lines may break after
	// them.
	f := mustParse(t, "policy \"p\"\nlet tag = 1\n\ntest \"t\" {\n  input\n    {\"a\": 1}\n  tag \"k\"\n  expect\n    dropped\n}\n")
	if len(f.Tests) != 1 || dump(f.Tests[0].Input) != `{"a":int:1}` || f.Tests[0].Tag.Str != "k" || f.Tests[0].Expect != ExpectDropped {
		t.Errorf("test block: %+v", f.Tests)
	}
}

// Declarations come after the header, in any order with the schema, and
// keep their source order.
func TestParseDecls(t *testing.T) {
	tests := []struct{ src, want string }{
		{"const a = 1", "(const a int:1)"},
		{"const re = `\\d+`\nconst l = [1, 2]", `(const re str:"\\d+"); (const l [int:1 int:2])`},
		{"fn f() int {\n  return 1\n}", "(fn f () int {(return int:1)})"},
		{"fn f(s: string, n: int = 3) string {\n  let t = truncate(s, n)\n  return t\n}",
			"(fn f (s:string n:int=int:3) string {(let t (call truncate s n)); (return t)})"},
		{"fn f(\n  s: string?,\n  m: map<int>\n) {a: int} {\n  return {\"a\": 1}\n}",
			`(fn f (s:string? m:map<int>) {a:int} {(return {"a":int:1})})`},
		{"fn f(x: int) bool {\n  if x > 1 {\n    return true\n  } else {\n    return false\n  }\n}",
			"(fn f (x:int) bool {(if (> x int:1) {(return true)} else {(return false)})})"},
		{"fn f(x: int) int {\n  return -x\n}\nconst c = f", "(fn f (x:int) int {(return (-x))}); (const c f)"},
	}
	for _, tt := range tests {
		f := checkDump(t, tt.src, "set .x = 1\n", tt.want, func(f *File) []Decl { return f.Decls })
		if f == nil {
			continue
		}
		if len(f.Stmts) != 1 {
			t.Errorf("%q: %d statements, want 1", tt.src, len(f.Stmts))
		}
	}
	f := mustParse(t, "policy \"p\"\nconst a = 1\nschema {\n  x: int\n}\nfn f() int {\n  return a\n}\nset .x = f()\n")
	if f.Schema == nil || len(f.Decls) != 2 {
		t.Errorf("schema between declarations: schema %v, %d declarations", f.Schema != nil, len(f.Decls))
	}
}

func TestParseTests(t *testing.T) {
	src := `policy "p"
set .a = 1

test "one" {
  input  {"log": "x", "n": -1.5}
  tag    "kube.var"   # optional
  expect {"log": "x"}
}

test "two" {
  input {}
  expect dropped
}
test "three" {
  expect fault
  input [1, {"a": null}]
}
test "multi" {
  input {
    "a": [
      1,
      2
    ]
  }
  expect {
    "a": [1, 2]
  }
}
test "records" {
  input {"a": [1, 2]}
  expect [
    {"a": 1},
    {"a": 2}
  ]
}
test "none" {
  input {"a": []}
  expect []
}
`
	f := mustParse(t, src)
	if len(f.Tests) != 6 {
		t.Fatalf("%d tests", len(f.Tests))
	}
	type want struct {
		name, input, tag string
		expect           ExpectKind
		want             string
	}
	wants := []want{
		{"one", `{"log":str:"x" "n":(-float:1.5)}`, "kube.var", ExpectRecord, `{"log":str:"x"}`},
		{"two", "{}", "", ExpectDropped, "nil"},
		{"three", `[int:1 {"a":null}]`, "", ExpectFault, "nil"},
		{"multi", `{"a":[int:1 int:2]}`, "", ExpectRecord, `{"a":[int:1 int:2]}`},
		{"records", `{"a":[int:1 int:2]}`, "", ExpectRecords, `[{"a":int:1} {"a":int:2}]`},
		{"none", `{"a":[]}`, "", ExpectRecords, `[]`},
	}
	for i, w := range wants {
		tt := f.Tests[i]
		tag := ""
		if tt.Tag != nil {
			tag = tt.Tag.Str
		}
		if tt.Name != w.name || dump(tt.Input) != w.input || tag != w.tag || tt.Expect != w.expect || dump(tt.Want) != w.want {
			t.Errorf("test %d: got %q %s %q %v %s", i, tt.Name, dump(tt.Input), tag, tt.Expect, dump(tt.Want))
		}
	}
	one := f.Tests[0]
	if one.Test.String() != "4:1" || one.NamePos.String() != "4:6" || one.Lbrace.String() != "4:12" ||
		one.InputPos.String() != "5:3" || one.ExpectPos.String() != "7:3" || one.Rbrace.String() != "8:1" ||
		one.Tag.Pos().String() != "6:10" || one.Input.Pos().String() != "5:10" {
		t.Errorf("test positions: %v %v %v %v %v %v %v", one.Test, one.NamePos, one.Lbrace, one.InputPos, one.ExpectPos, one.Rbrace, one.Tag.Pos())
	}
	if len(f.Comments) != 1 || f.Comments[0].Text != "# optional" || f.Comments[0].Hash.String() != "6:23" {
		t.Errorf("comments: %+v", f.Comments)
	}
}

// Positions of the nodes that diagnostics point at.
func TestParsePositions(t *testing.T) {
	src := "policy \"p\"\nschema {\n  a: map<int>?\n}\nset .a.\"b\"[0] = f(.x, 2) ?? -1\nif .c {\n  drop when %tag == `t`\n}\n"
	f := mustParse(t, src)
	set := f.Stmts[0].(*SetStmt)
	ix := set.Target.(*IndexExpr)
	fb := ix.X.(*FieldExpr)
	fa := fb.X.(*FieldExpr)
	bin := set.Value.(*BinaryExpr)
	call := bin.X.(*CallExpr)
	neg := bin.Y.(*UnaryExpr)
	ifs := f.Stmts[1].(*IfStmt)
	drop := ifs.Body.Stmts[0].(*DropStmt)
	cmp := drop.Cond.(*BinaryExpr)
	fd := f.Schema.Type.Fields[0]
	opt := fd.Type.(*OptionalType)
	checks := []struct {
		what string
		got  Pos
		want string
	}{
		{"schema", f.Schema.Pos(), "2:1"},
		{"schema end", f.Schema.End(), "4:2"},
		{"field", fd.Pos(), "3:3"},
		{"field type", opt.Pos(), "3:6"},
		{"question", opt.Question, "3:14"},
		{"field end", fd.End(), "3:15"},
		{"set", set.Pos(), "5:1"},
		{".a dot", fa.Dot, "5:5"},
		{".a name", fa.NamePos, "5:6"},
		{".b dot", fb.Dot, "5:7"},
		{".b name", fb.NamePos, "5:8"},
		{"index", ix.Lbrack, "5:11"},
		{"target end", ix.End(), "5:14"},
		{"op", set.OpPos, "5:15"},
		{"call", call.Pos(), "5:17"},
		{"lparen", call.Lparen, "5:18"},
		{"rparen", call.Rparen, "5:24"},
		{"??", bin.OpPos, "5:26"},
		{"-", neg.OpPos, "5:29"},
		{"set end", set.End(), "5:31"},
		{"if", ifs.Pos(), "6:1"},
		{"block", ifs.Body.Lbrace, "6:7"},
		{"drop", drop.Pos(), "7:3"},
		{"meta", cmp.X.Pos(), "7:13"},
		{"==", cmp.OpPos, "7:18"},
		{"raw", cmp.Y.Pos(), "7:21"},
		{"drop end", drop.End(), "7:24"},
		{"if end", ifs.End(), "8:2"},
		{"eof", f.EOF, "9:1"},
	}
	for _, c := range checks {
		if c.got.String() != c.want {
			t.Errorf("%s at %v, want %s", c.what, c.got, c.want)
		}
	}
	if fa.Dot != fa.X.Pos() {
		t.Errorf("the dot of .a is the root's position")
	}
}

func TestParseIntRange(t *testing.T) {
	f := mustParse(t, "policy \"p\"\nset .a = -9223372036854775808\nset .b = 9_223_372_036_854_775_807\n")
	lit := f.Stmts[0].(*SetStmt).Value.(*UnaryExpr).X.(*BasicLit)
	if lit.Int != math.MinInt64 || -lit.Int != math.MinInt64 {
		t.Errorf("MinInt64 literal: %d", lit.Int)
	}
	if v := f.Stmts[1].(*SetStmt).Value.(*BasicLit).Int; v != math.MaxInt64 {
		t.Errorf("MaxInt64 literal: %d", v)
	}
	_, errs := ParseFile("x", []byte("policy \"p\"\nset .a = 9223372036854775808\n"))
	if len(errs) != 1 || errs[0].Code != CodeNumberRange {
		t.Errorf("MaxInt64+1: %v", errs)
	}
}

// Parsing every construct at once: the file at the top of docs/language.md,
// read from there.
func TestParseLanguageExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "language.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(doc), "\n```\n")
	src, _, _ := strings.Cut(block, "```\n")
	f := mustParse(t, src)
	if f.Name != "k8s-lift" || len(f.Stmts) != 3 || len(f.Tests) != 1 || !f.Schema.Type.Open || len(f.Schema.Type.Fields) != 3 {
		t.Fatalf("unexpected file: %s %d stmts %d tests", f.Name, len(f.Stmts), len(f.Tests))
	}
	want := `(drop (&& (== (field . stream) str:"stderr") (call contains (field . log) str:"healthz")))`
	if got := dump(f.Stmts[0]); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
