package diag

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/policy"
)

const src = "policy \"checkout\"\n\nschema {\n  status: int\n  ...\n}\n\ndrop when .status == \"500\"\n\tset .x = \"é\" + 1\n"

func pos(line, col int) policy.Pos {
	off := 0
	for l := 1; l < line; l++ {
		off += strings.IndexByte(src[off:], '\n') + 1
	}
	return policy.Pos{Offset: off + col - 1, Line: line, Col: col}
}

var classic = Diagnostic{
	Code: "E0301", Severity: Error, Pos: pos(8, 11), End: pos(8, 27),
	Msg:      "cannot compare int with string",
	Label:    ".status is int (declared at line 4)",
	Hint:     `compare with the number 500, or write to_string(.status) == "500"`,
	Filename: "checkout.policy",
}

func TestWriteText(t *testing.T) {
	warn := Diagnostic{Code: "E0303", Severity: Warning, Pos: pos(9, 10), End: pos(9, 19), Msg: "bad add", Filename: "checkout.policy"}
	multi := Diagnostic{Code: "E0999", Severity: Error, Pos: pos(3, 8), End: pos(6, 2), Msg: "multi-line", Filename: "checkout.policy"}
	var b bytes.Buffer
	if err := WriteText(&b, []byte(src), []Diagnostic{classic, warn, multi}); err != nil {
		t.Fatal(err)
	}
	want := `error[E0301]: cannot compare int with string
  --> checkout.policy:8:11
   |
 8 | drop when .status == "500"
   |           ^^^^^^^^^^^^^^^^ .status is int (declared at line 4)
   = help: compare with the number 500, or write to_string(.status) == "500"

warning[E0303]: bad add
  --> checkout.policy:9:10
   |
 9 | 	set .x = "é" + 1
   | 	        ^^^^^^^^

error[E0999]: multi-line
  --> checkout.policy:3:8
   |
 3 | schema {
   |        ^
`
	if got := b.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTextWideGutter(t *testing.T) {
	d := Diagnostic{Code: "E0101", Pos: policy.Pos{Offset: 0, Line: 120, Col: 1}, End: policy.Pos{Offset: 3, Line: 120, Col: 4}, Msg: "m", Filename: "f", Hint: "h"}
	var b bytes.Buffer
	if err := WriteText(&b, []byte("abc"), []Diagnostic{d}); err != nil {
		t.Fatal(err)
	}
	want := "error[E0101]: m\n    --> f:120:1\n     |\n 120 | abc\n     | ^^^\n     = help: h\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, []Diagnostic{classic}); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"file": "checkout.policy", "line": 8.0, "col": 11.0, "end_line": 8.0, "end_col": 27.0,
		"severity": "error", "code": "E0301", "message": "cannot compare int with string",
		"label": ".status is int (declared at line 4)", "hint": classic.Hint}
	if len(got) != 1 {
		t.Fatalf("got %d objects", len(got))
	}
	for k, v := range want {
		if got[0][k] != v {
			t.Errorf("%s = %v, want %v", k, got[0][k], v)
		}
	}
	b.Reset()
	if err := WriteJSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(b.String()) != "[]" {
		t.Errorf("empty: %q", b.String())
	}
}

func TestWriteGitHub(t *testing.T) {
	var b bytes.Buffer
	d := classic
	d.Filename = "a,b:c.policy"
	w := Diagnostic{Code: "W0001", Severity: Warning, Pos: pos(8, 1), End: pos(8, 5), Msg: "100% dead", Filename: "x.policy"}
	if err := WriteGitHub(&b, []Diagnostic{d, w}); err != nil {
		t.Fatal(err)
	}
	want := "::error file=a%2Cb%3Ac.policy,line=8,col=11,endLine=8,endColumn=26,title=E0301::cannot compare int with string: .status is int (declared at line 4)%0Ahelp: compare with the number 500, or write to_string(.status) == \"500\"\n" +
		"::warning file=x.policy,line=8,col=1,endLine=8,endColumn=4,title=W0001::100%25 dead\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestSort(t *testing.T) {
	a := Diagnostic{Code: "E0201", Pos: pos(8, 11), End: pos(8, 18), Filename: "a"}
	b := Diagnostic{Code: "E0301", Pos: pos(4, 1), End: pos(4, 2), Filename: "a"}
	c := Diagnostic{Code: "E0101", Pos: pos(1, 1), End: pos(1, 2), Filename: "b"}
	w := Diagnostic{Code: "W0002", Severity: Warning, Pos: pos(9, 1), End: pos(9, 2), Filename: "a"}
	got := Sort(List{c, a, b, a, w})
	if len(got) != 4 || got[0] != b || got[1] != a || got[2] != w || got[3] != c {
		t.Errorf("Sort = %v", got)
	}
	if e, ws := got.Count(); e != 3 || ws != 1 {
		t.Errorf("Count = %d, %d", e, ws)
	}
	if !got.HasErrors() || (List{w}).HasErrors() {
		t.Error("HasErrors")
	}
	if (List{w}).Err() != nil {
		t.Error("a warning is an error")
	}
	want := "a:4:1: error[E0301]: \na:8:11: error[E0201]: \nb:1:1: error[E0101]: "
	if err := got.Err(); err == nil || err.Error() != want {
		t.Errorf("Err() = %q, want %q", err, want)
	}
}

func TestFromSyntax(t *testing.T) {
	errs := policy.ErrorList{{Pos: pos(8, 1), End: pos(8, 5), Code: "E0013", Msg: "drop takes when", Hint: "write drop when C"}}
	ds := FromSyntax("f.policy", errs)
	if len(ds) != 1 || ds[0].Code != "E0013" || ds[0].Filename != "f.policy" || ds[0].Hint != "write drop when C" || ds[0].End != pos(8, 5) || ds[0].Severity != Error {
		t.Errorf("FromSyntax = %+v", ds)
	}
}
