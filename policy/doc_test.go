package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The syntax error table of docs/language-syntax.md lists every code, and
// its examples are right: the wrong one gives the code, the fixed one
// parses without errors.
func TestSyntaxDocExamples(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "language-syntax.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| E0") {
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) != 6 {
			t.Errorf("malformed row: %s", line)
			continue
		}
		code := strings.TrimSpace(cells[1])
		documented[code] = true
		example := func(cell string) string {
			s := strings.TrimSpace(cell)
			s = strings.TrimSuffix(strings.TrimPrefix(s, "`"), "`")
			s = strings.ReplaceAll(s, "⏎", "\n")
			if !strings.HasPrefix(s, "policy") && !strings.HasPrefix(s, "module") && code != CodeMissingHeader {
				s = "policy \"p\"\n" + s
			}
			return s + "\n"
		}
		if !isCodeSpan(cells[3]) || !isCodeSpan(cells[4]) {
			continue // described in words, such as 1001 nested parentheses
		}
		wrong, fixed := example(cells[3]), example(cells[4])
		if _, errs := ParseFile("doc.policy", []byte(wrong)); !hasCode(errs, code) {
			t.Errorf("%s: wrong example %q gives %v", code, wrong, errs)
		}
		if _, errs := ParseFile("doc.policy", []byte(fixed)); len(errs) > 0 {
			t.Errorf("%s: fixed example %q: %v", code, fixed, errs)
		}
	}
	for _, c := range Codes {
		if !documented[c.Code] {
			t.Errorf("%s is not in docs/language-syntax.md", c.Code)
		}
	}
}

func isCodeSpan(cell string) bool {
	s := strings.TrimSpace(cell)
	return len(s) > 2 && s[0] == '`' && s[len(s)-1] == '`'
}
