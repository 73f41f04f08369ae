package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/policy"
)

// hasControl reports whether s holds a byte a terminal acts on (tab and
// line breaks aside).
func hasControl(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return true
		}
	}
	return strings.Contains(s, "\u009b") || strings.Contains(s, "\u202e")
}

// TestControlCharacters: control characters and bad UTF-8 in the source
// line and in the message, label and hint never reach the output raw; the
// text format shows them as \xHH with the carets under the escaped text,
// the JSON keeps them exactly (escaped as JSON escapes them), and GitHub's
// command stays on one line.
func TestControlCharacters(t *testing.T) {
	src := "set .a = \"\x1b[31m\xff\" + \u202e.n\u009b\n"
	col := strings.Index(src, "+") + 1 // the span: + .n…
	d := Diagnostic{
		Code: "E0303", Severity: Error,
		Pos:      policy.Pos{Offset: col - 1, Line: 1, Col: col},
		End:      policy.Pos{Offset: len(src) - 1, Line: 1, Col: len(src)},
		Msg:      "cannot add \"\x1b[2J\"",
		Label:    "a\rb",
		Hint:     "c\nd\x07",
		Filename: "f\x1b.policy",
	}
	var b bytes.Buffer
	if err := WriteText(&b, []byte(src), []Diagnostic{d}); err != nil {
		t.Fatal(err)
	}
	want := `error[E0303]: cannot add "\x1b[2J"
  --> f\x1b.policy:1:19
   |
 1 | set .a = "\x1b[31m\xff" + \u{202e}.n\x9b
   |                         ^^^^^^^^^^^^^^^^ a\x0db
   = help: c\x0ad\x07
`
	if got := b.String(); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	if hasControl(b.String()) {
		t.Errorf("text holds a raw control character: %q", b.String())
	}

	b.Reset()
	if err := WriteJSON(&b, []Diagnostic{d}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || len(got) != 1 {
		t.Fatalf("JSON %q: %v", b.String(), err)
	}
	if got[0]["message"] != d.Msg || got[0]["label"] != d.Label || got[0]["hint"] != d.Hint {
		t.Errorf("JSON changed the text: %v", got[0])
	}

	b.Reset()
	if err := WriteGitHub(&b, []Diagnostic{d}); err != nil {
		t.Fatal(err)
	}
	gh := b.String()
	if strings.Count(gh, "\n") != 1 || hasControl(gh) || !strings.Contains(gh, `::cannot add "\x1b[2J": a\x0db%0Ahelp: c\x0ad\x07`) {
		t.Errorf("GitHub: %q", gh)
	}
}
