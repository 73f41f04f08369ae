package policy

import (
	"strings"
	"testing"
)

// TestNestingLimit: every construct that nests (docs/language-syntax.md,
// E0029) parses nested exactly maxNest deep, alone or mixed with the
// others, and gives E0029 one level deeper.
func TestNestingLimit(t *testing.T) {
	r := strings.Repeat
	set := func(e string) string { return "policy \"p\"\nset .x = " + e + "\n" }
	field := func(typ string) string { return "policy \"p\"\nschema {\n  a: " + typ + "\n}\n" }
	tests := []struct {
		name string
		src  func(n int) string
	}{
		{"parentheses", func(n int) string { return set(r("(", n) + "1" + r(")", n)) }},
		{"list literals", func(n int) string { return set(r("[", n) + r("]", n)) }},
		{"map literals", func(n int) string { return set(r(`{"a": `, n) + "1" + r("}", n)) }},
		{"indexes", func(n int) string { return set(r(".a[", n) + "0" + r("]", n)) }},
		{"calls", func(n int) string { return set(r("f(", n) + "1" + r(")", n)) }},
		{"not", func(n int) string { return set(r("!", n) + "true") }},
		{"negation", func(n int) string { return set(r("- ", n) + "1") }},
		{"brackets mixed", func(n int) string {
			open, close := []string{"(", "[", `{"k": `, "f(", "!", ".a["}, []string{")", "]", "}", ")", "", "]"}
			var b, e strings.Builder
			for i := range n {
				b.WriteString(open[i%len(open)])
			}
			b.WriteString("1")
			for i := n - 1; i >= 0; i-- {
				e.WriteString(close[i%len(close)])
			}
			return set(b.String() + e.String())
		}},
		{"if blocks", func(n int) string { return "policy \"p\"\n" + r("if .a {\n", n) + "drop\n" + r("}\n", n) }},
		{"for blocks", func(n int) string { return "policy \"p\"\n" + r("for k, v in .a {\n", n) + "drop\n" + r("}\n", n) }},
		{"else blocks", func(n int) string { return "policy \"p\"\n" + r("if .a {\n} else {\n", n) + "drop\n" + r("}\n", n) }},
		{"else if chain", func(n int) string { return "policy \"p\"\nif .a {\n}" + r(" else if .a {\n}", n-1) + "\n" }},
		{"blocks and brackets", func(n int) string {
			blocks := n / 2
			var b strings.Builder
			b.WriteString("policy \"p\"\n")
			for i := range blocks {
				if i%2 == 0 {
					b.WriteString("if .a {\n")
				} else {
					b.WriteString("for k, v in .a {\n")
				}
			}
			b.WriteString("set .x = " + r("(", n-blocks) + "1" + r(")", n-blocks) + "\n")
			b.WriteString(r("}\n", blocks))
			return b.String()
		}},
		{"array types", func(n int) string { return field(r("array<", n) + "int" + r(">", n)) }},
		{"map types", func(n int) string { return field(r("map<", n) + "int?" + r(">", n)) }},
		{"object types", func(n int) string { return field(r("{b: ", n) + "int" + r("}", n)) }},
		{"test input", func(n int) string {
			return "policy \"p\"\ntest \"t\" {\n  input {\"a\": " + r(`{"a": `, n-1) + "1" + r("}", n) + "\n  expect dropped\n}\n"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, errs := ParseFile("deep.policy", []byte(tt.src(maxNest))); len(errs) > 0 {
				t.Errorf("nested %d deep: %v", maxNest, errs[0])
			}
			_, errs := ParseFile("deep.policy", []byte(tt.src(maxNest+1)))
			if !hasCode(errs, CodeTooDeep) {
				t.Errorf("nested %d deep: no %s among %v", maxNest+1, CodeTooDeep, errs)
			}
		})
	}
}
