package check

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

const docSchema = `schema {
  status: int
  msg: string
  user: string?
  tags: array<string>
  labels: map<string>
  kubernetes: {
    pod_name: string
    namespace_name: string
  }
  extra: any?
  ...
}
`

var docRow = regexp.MustCompile("^\\| ([EW]\\d{4}) \\| .* \\| `(.*)` \\| `(.*)` \\|$")

// docCode is any row of a code, its examples in words or not.
var docCode = regexp.MustCompile(`^\| ([EW]\d{4}) \|`)

// wordsOnly are the codes whose examples the table gives in words: no
// check can report them (package compiler tests CodeCompile).
var wordsOnly = map[string]bool{CodeCompile: true, CodeImportCycle: true, CodeImportFile: true}

// TestDocCodes holds docs/language.md to the checker: every code has a row
// (E0900 of package compiler too), every wrong example gives its code, every
// fixed example checks clean (package builtin holds the built-in
// tables to the docs).
func TestDocCodes(t *testing.T) {
	doc, err := os.ReadFile("../../docs/language.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			if c := docCode.FindStringSubmatch(line); c != nil {
				if !wordsOnly[c[1]] {
					t.Errorf("%s: the examples are not code spans", c[1])
				}
				rows[c[1]] = true
			}
			continue
		}
		code := m[1]
		rows[code] = true
		if wordsOnly[code] {
			t.Errorf("%s: no check reports it: give its examples in words", code)
			continue
		}
		for i, ex := range m[2:] {
			body := strings.ReplaceAll(strings.ReplaceAll(ex, "⏎", "\n"), `\|`, "|")
			src := "policy \"p\"\n\n"
			if strings.HasPrefix(body, "module") {
				src = ""
			} else if !strings.HasPrefix(body, "schema") {
				src += docSchema + "\n"
			}
			src += body + "\n"
			_, ds := checkSource("doc.policy", []byte(src))
			if i == 0 {
				found := false
				for _, d := range ds {
					found = found || d.Code == code
				}
				if !found {
					t.Errorf("%s: wrong example %q gives %v", code, ex, ds)
				}
			} else if len(ds) > 0 {
				t.Errorf("%s: fixed example %q gives %v", code, ex, ds)
			}
		}
	}
	for _, c := range Codes {
		if !rows[c.Code] {
			t.Errorf("docs/language.md has no row for %s", c.Code)
		}
	}
}
