package builtin

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	for _, f := range All() {
		if ByID(f.ID) != f || Lookup(f.Name) != f {
			t.Errorf("%s: ByID or Lookup does not find it", f.Name)
		}
		if (f.RegexArg >= 0) != (f.ID == Matches || f.ID == Capture || f.ID == ReplaceRe || f.ID == ParseGrok || f.ID == KeepKeys || f.ID == DropKeys) {
			t.Errorf("%s: RegexArg = %d", f.Name, f.RegexArg)
		}
		if (f.PathArg >= 0) != (f.ID == Exists) {
			t.Errorf("%s: PathArg = %d", f.Name, f.PathArg)
		}
		if f.Variadic() != (f.ID == Coalesce || f.ID == Format) {
			t.Errorf("%s: Variadic = %v", f.Name, f.Variadic())
		}
	}
	if f := ByID(ParseTime); f.MinArgs() != 2 || f.ConstArg != 2 || f.Params[2].DefaultString() != "UTC" {
		t.Errorf("parse_time: MinArgs %d, ConstArg %d, default %v", f.MinArgs(), f.ConstArg, f.Params[2].Default)
	}
	if f := ByID(Format); f.MinArgs() != 1 || f.ConstArg != 0 {
		t.Errorf("format: MinArgs %d, ConstArg %d", f.MinArgs(), f.ConstArg)
	}
	if Lookup("nope") != nil || ByID(Invalid) != nil || ByID(NumIDs) != nil {
		t.Error("lookups of what is not a built-in find one")
	}
	if n := len(All()); n != int(NumIDs)-1 {
		t.Errorf("%d functions, %d IDs", n, NumIDs-1)
	}
}

func TestParseSig(t *testing.T) {
	tests := []struct {
		sig, name, result string
		params            []Param
		bad               bool
	}{
		{sig: "now() timestamp", name: "now", result: "timestamp"},
		{sig: "f(s string, re string) bool", name: "f", result: "bool", params: []Param{{"s", "string", ""}, {"re", "string", ""}}},
		{sig: "len(string|array) int", name: "len", result: "int", params: []Param{{"", "string|array", ""}}},
		{sig: "f(a T?, ..., c T) T", name: "f", result: "T", params: []Param{{"a", "T?", ""}, {"", "...", ""}, {"c", "T", ""}}},
		{sig: `f(s string, sep string = ",") T`, name: "f", result: "T", params: []Param{{"s", "string", ""}, {"sep", "string", `","`}}},
		{sig: `f(s string = "a", t string) T`, bad: true},
		{sig: `f(s string = x) T`, bad: true},
		{sig: `f(s string, tz string = "UTC", n int = -2) int`, name: "f", result: "int", params: []Param{{"s", "string", ""}, {"tz", "string", `"UTC"`}, {"n", "int", "-2"}}},
		{sig: "f(fmt string, args ...) string", name: "f", result: "string", params: []Param{{"fmt", "string", ""}, {"args", "...", ""}}},
		{sig: "f(s string)", bad: true},
		{sig: "f s string) int", bad: true},
	}
	for _, tt := range tests {
		f := Func{Sig: tt.sig, Doc: "d"}
		err := f.parseSig()
		if (err != nil) != tt.bad {
			t.Errorf("%q: err = %v", tt.sig, err)
			continue
		}
		if tt.bad {
			continue
		}
		if f.Name != tt.name || f.Result != tt.result || len(f.Params) != len(tt.params) {
			t.Errorf("%q: %q %v %q", tt.sig, f.Name, f.Params, f.Result)
			continue
		}
		for i, p := range tt.params {
			if f.Params[i] != p {
				t.Errorf("%q: param %d = %v, want %v", tt.sig, i, f.Params[i], p)
			}
		}
	}
}

var docRow = regexp.MustCompile("^\\| `(.+)` \\| (\\d+) \\| (.+) \\|$")

// TestDocs holds the built-in tables of docs/language.md to this package:
// one row per built-in, with its signature, ID and doc line as the table
// has them, and no row for a function that does not exist.
func TestDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/language.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Built-in functions\n")
	if !ok {
		t.Fatal(`docs/language.md has no "## Built-in functions"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	seen := map[ID]bool{}
	for _, line := range strings.Split(section, "\n") {
		m := docRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		sig := strings.ReplaceAll(m[1], `\|`, "|")
		id, _ := strconv.Atoi(m[2])
		f := ByID(ID(id))
		switch {
		case f == nil:
			t.Errorf("docs row %q: no built-in has ID %d", sig, id)
		case f.Sig != sig || f.Doc != m[3]:
			t.Errorf("docs row for ID %d:\n got %s | %s\nwant %s | %s", id, sig, m[3], f.Sig, f.Doc)
		case seen[f.ID]:
			t.Errorf("docs list %s twice", f.Name)
		}
		seen[ID(id)] = true
	}
	for _, f := range All() {
		if !seen[f.ID] {
			t.Errorf("docs/language.md has no row for %s", f.Sig)
		}
	}
}
