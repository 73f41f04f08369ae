package policy

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// gen writes random valid policies with random layout: line breaks wherever
// the newline rule allows one, comments at the end of any line and on lines
// of their own, blank lines, odd spacing. Byte-level fuzzing seldom reaches
// a file that parses; this reaches the formatter with every construct.
type gen struct {
	r     *rand.Rand
	b     strings.Builder
	depth int // bracket depth: inside brackets any newline is allowed
}

func (g *gen) p(s string) { g.b.WriteString(s) }

func (g *gen) chance(n int) bool { return g.r.Intn(n) == 0 }

// sp writes the space between two tokens: usually one space, sometimes
// none or several.
func (g *gen) sp() {
	switch g.r.Intn(6) {
	case 0:
		g.p("   ")
	case 1:
		g.p("\t")
	default:
		g.p(" ")
	}
}

// br writes a place where a newline is allowed: maybe a trailing comment
// and a newline with an own-line comment, or just a space.
func (g *gen) br() {
	if !g.chance(4) {
		g.sp()
		return
	}
	if g.chance(3) {
		g.p(" # c" + fmt.Sprint(g.r.Intn(100)))
	}
	g.p("\n")
	if g.chance(4) {
		g.p("  # own\n")
	}
	g.p(strings.Repeat(" ", g.r.Intn(5)))
}

// brIn is br for a position that is only a line-break point inside
// brackets (before a closing bracket or an operator).
func (g *gen) brIn() {
	if g.depth > 0 {
		g.br()
	} else if g.chance(3) {
		g.sp()
	}
}

func (g *gen) path() {
	g.p(".")
	if g.chance(8) {
		return
	}
	names := []string{"a", "b", "log", "tag", "input", "x_1", `"key with spaces"`, `"ключ"`}
	g.p(names[g.r.Intn(len(names))])
	for g.chance(3) {
		switch g.r.Intn(3) {
		case 0:
			g.p("." + names[g.r.Intn(len(names))])
		case 1:
			g.p("[" + fmt.Sprint(g.r.Intn(3)) + "]")
		default:
			g.p(`["k"]`)
		}
	}
}

// names are the locals: plain names and the contextual keywords, which
// name locals outside their places.
var names = []string{"x", "k", "v", "tag", "input", "prefix", "when", "to", "test", "schema", "expect", "dropped", "fault", "on_fault", "keep", "otlp"}

func (g *gen) name() string { return names[g.r.Intn(len(names))] }

func (g *gen) lit() {
	lits := []string{"1", "0", "1_000", "2.5", "1e3", `"s"`, `"a\tb\u{e9}"`, "`raw\\d`", "true", "false", "null", "-1", "-2.5", "`two\nlines`"}
	g.p(lits[g.r.Intn(len(lits))])
}

func (g *gen) expr(d int) {
	if d <= 0 {
		switch g.r.Intn(5) {
		case 0:
			g.lit()
		case 1:
			g.path()
		case 2:
			if g.chance(3) {
				g.p([]string{"%tag", "%time"}[g.r.Intn(2)])
			} else {
				g.p(g.name())
			}
		default:
			g.path()
		}
		return
	}
	switch g.r.Intn(9) {
	case 0, 1, 2:
		g.expr(d - 1)
		ops := []string{"??", "||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%"}
		g.brIn()
		g.p(ops[g.r.Intn(len(ops))])
		g.br()
		g.expr(d - 1)
	case 3:
		// Parenthesized: the right of in must stay a list literal whatever
		// operator the generator puts after it.
		g.p("(")
		g.depth++
		g.expr(d - 1)
		g.p(" in ")
		g.list(0)
		g.depth--
		g.p(")")
	case 4:
		g.p([]string{"!", "-"}[g.r.Intn(2)])
		g.expr(d - 1)
	case 5:
		g.depth++
		g.p("(")
		g.brIn()
		g.expr(d - 1)
		g.brIn()
		g.p(")")
		g.depth--
	case 6:
		g.p([]string{"f", "contains", "now", "len"}[g.r.Intn(4)])
		g.items("(", ")", false, func() { g.expr(d - 1) })
		if g.chance(4) {
			g.p(`["k"].y`)
		}
	case 7:
		g.list(d - 1)
	default:
		g.mapLit(d - 1)
	}
}

// items writes open, up to three items separated by commas (and maybe
// line breaks), a trailing comma by chance where trailing is set, and close.
func (g *gen) items(open, close string, trailing bool, item func()) {
	g.p(open)
	g.depth++
	n := g.r.Intn(4)
	if n > 0 {
		g.brIn()
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			g.p(",")
			g.br()
		}
		item()
	}
	if n > 0 && trailing && g.chance(6) {
		g.p(",")
	}
	if n > 0 {
		g.brIn()
	}
	g.depth--
	g.p(close)
}

func (g *gen) list(d int) { g.items("[", "]", true, func() { g.expr(d) }) }

func (g *gen) mapLit(d int) {
	g.items("{", "}", false, func() {
		g.p([]string{`"a"`, `"b c"`, "`raw`", `""`}[g.r.Intn(4)] + ":")
		g.sp()
		g.expr(d)
	})
}

// end ends a statement line: maybe a trailing comment, maybe blank lines.
func (g *gen) end(indent int) {
	if g.chance(4) {
		g.p(" # t")
	}
	g.p("\n")
	for g.chance(5) {
		g.p("\n")
	}
	if g.chance(6) {
		g.p(strings.Repeat("  ", indent) + "# own line\n")
	}
}

func (g *gen) stmt(indent, nest int) {
	g.p(strings.Repeat("  ", indent))
	switch g.r.Intn(10) {
	case 0, 1:
		g.p("set ")
		g.path()
		g.p([]string{" = ", " ?= ", "="}[g.r.Intn(3)])
		g.expr(2)
	case 2:
		g.p("remove ")
		for i := 0; i <= g.r.Intn(3); i++ {
			if i > 0 {
				g.p(",")
				g.br()
			}
			g.path()
		}
	case 3:
		g.p("rename ")
		g.path()
		g.p(" to ")
		g.path()
	case 4:
		g.p("lift ")
		g.path()
		if g.chance(2) {
			g.p(` prefix "p_"`)
		}
	case 5:
		g.p([]string{"drop", "stop"}[g.r.Intn(2)])
		if g.chance(2) {
			g.p(" when ")
			g.expr(2)
		}
	case 6:
		g.p("let " + g.name() + " = ")
		g.expr(2)
	case 7:
		if nest > 0 {
			g.p("for " + g.name() + ", " + g.name() + " in ")
			g.expr(1)
			g.p(" {")
			g.block(indent, nest)
			break
		}
		g.p("drop")
	default:
		if nest > 0 {
			g.p("if ")
			g.expr(2)
			g.p(" {")
			g.block(indent, nest)
			for g.chance(2) {
				g.p(" else if ")
				g.expr(1)
				g.p(" {")
				g.block(indent, nest)
			}
			if g.chance(2) {
				g.p([]string{" else {", "\nelse {", " # c\nelse {", "\n# c\n\nelse {"}[g.r.Intn(4)])
				g.block(indent, nest)
			}
			break
		}
		g.p("stop")
	}
	g.end(indent)
}

func (g *gen) block(indent, nest int) {
	if g.chance(4) {
		g.p(" # open")
	}
	g.p("\n")
	for i := 0; i < g.r.Intn(3); i++ {
		g.stmt(indent+1, nest-1)
	}
	if g.chance(5) {
		g.p(strings.Repeat("  ", indent+1) + "# last\n")
	}
	g.p(strings.Repeat("  ", indent) + "}")
}

func (g *gen) typ(d int) {
	switch n := g.r.Intn(8); {
	case n < 4 || d == 0:
		g.p([]string{"bool", "int", "float", "string", "bytes", "timestamp", "null", "any"}[g.r.Intn(8)])
	case n == 4:
		g.p("array<")
		g.typ(d - 1)
		g.p(">")
	case n == 5:
		g.p("map<")
		g.typ(d - 1)
		g.p(">")
	default:
		g.object(d - 1)
	}
	if g.chance(3) {
		g.p("?")
	}
}

func (g *gen) object(d int) {
	g.p("{")
	if g.chance(5) {
		g.p("}")
		return
	}
	g.p("\n")
	for i := 0; i < g.r.Intn(4); i++ {
		if g.chance(6) {
			g.p("# field comment\n")
		}
		g.p([]string{"a", "tag", `"b c"`, "set"}[g.r.Intn(4)] + ":")
		g.sp()
		g.typ(d)
		if g.chance(4) {
			g.p(" # f")
		}
		g.p([]string{"\n", ",\n", "\n\n"}[g.r.Intn(3)])
	}
	if g.chance(2) {
		g.p("...\n")
	}
	g.p("}")
}

func (g *gen) file() string {
	if g.chance(3) {
		g.p("# header comment\n\n")
	}
	g.p(`policy "gen"`)
	if g.chance(3) {
		g.p([]string{" on_fault drop", " on_fault keep"}[g.r.Intn(2)])
	}
	g.end(0)
	if g.chance(2) {
		g.p("schema ")
		switch g.r.Intn(4) {
		case 0:
			g.p("otlp ")
			g.object(2)
		case 1:
			g.p("otlp")
		default:
			g.object(2)
		}
		g.end(0)
	}
	for i := 0; i < g.r.Intn(6); i++ {
		g.stmt(0, 2)
	}
	for i := 0; i < g.r.Intn(3); i++ {
		g.p(`test "t" {`)
		g.block0()
		g.p("}")
		g.end(0)
	}
	return g.b.String()
}

// block0 writes the body of a test block.
func (g *gen) block0() {
	g.p("\n  input ")
	g.mapLit(2)
	g.end(1)
	if g.chance(2) {
		g.p(`  tag "t"`)
		g.end(1)
	}
	g.p("  expect ")
	switch g.r.Intn(3) {
	case 0:
		g.p("dropped")
	case 1:
		g.p("fault")
	default:
		// An expected value that starts with the word dropped or fault
		// would be expect dropped or expect fault: parenthesize it.
		start := g.b.Len()
		g.expr(2)
		if v := g.b.String()[start:]; strings.HasPrefix(v, "dropped") || strings.HasPrefix(v, "fault") {
			src := g.b.String()
			g.b.Reset()
			g.p(src[:start] + "(" + v + ")")
		}
	}
	g.end(1)
}

func TestFormatRandomPrograms(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := 0; seed < n; seed++ {
		checkGenerated(t, int64(seed))
	}
}

// checkGenerated formats the policy generated from seed and checks that the
// output parses to the same tree and formats to itself.
func checkGenerated(t *testing.T, seed int64) {
	t.Helper()
	g := &gen{r: rand.New(rand.NewSource(seed))}
	src := g.file()
	f, errs := ParseFile("gen.policy", []byte(src))
	if len(errs) > 0 {
		t.Fatalf("seed %d: generated file does not parse: %s\n%s", seed, errs.Report("gen"), src)
	}
	once, err := Format(f, []byte(src))
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	g2, errs := ParseFile("gen.policy", once)
	if len(errs) > 0 {
		t.Fatalf("seed %d: output does not parse: %s\ninput:\n%s\noutput:\n%s", seed, errs.Report("out"), src, once)
	}
	if d := sameTree(f, g2); d != "" {
		t.Fatalf("seed %d: tree changed (%s)\ninput:\n%s\noutput:\n%s", seed, d, src, once)
	}
	twice, err := Format(g2, once)
	if err != nil {
		t.Fatalf("seed %d: formatting the output: %v", seed, err)
	}
	if string(twice) != string(once) {
		t.Fatalf("seed %d: not idempotent\ninput:\n%s\nonce:\n%s\ntwice:\n%s", seed, src, once, twice)
	}
}
