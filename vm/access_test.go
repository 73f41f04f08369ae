package vm

import (
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
)

func paths(ss ...string) []record.Path {
	var ps []record.Path
	for _, s := range ss {
		ps = append(ps, record.MustParsePath(s))
	}
	return ps
}

func pathsString(ps []record.Path) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, " ")
}

func TestMinimalPaths(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{".b", ".a"}, ".a .b"},
		{[]string{".a.b", ".a", ".a.c", ".ab"}, ".a .ab"},
		{[]string{".a.b", ".a.b", ".a.b.c"}, ".a.b"},
		{[]string{".x[0].y", ".x.z", ".w[-1]"}, ".w .x"},
		{[]string{".a", "."}, "."},
		{[]string{`."a b".c`, ".a.b"}, `.a.b ."a b".c`},
	}
	for _, tt := range tests {
		in := paths(tt.in...)
		before := pathsString(in)
		if got := pathsString(minimalPaths(in)); got != tt.want {
			t.Errorf("minimalPaths(%s) = %s, want %s", before, got, tt.want)
		}
		if pathsString(in) != before {
			t.Errorf("minimalPaths changed its argument %s", before)
		}
	}
}

func TestProgramAccess(t *testing.T) {
	c := Code{Name: "a", Instrs: []Instr{{Op: KEEP}}}
	p := mustNew(t, c)
	if a := p.Access(); pathsString(a.Reads) != "." || pathsString(a.Writes) != "." ||
		!a.ReadsTime || !a.ReadsTag || !a.SetsTime || !a.SetsTag {
		t.Errorf("a Code without Access: %+v, want AccessAll", a)
	}
	c.Access = &Access{Reads: paths(".a.b", ".a"), Writes: paths(".c[1]"), ReadsTag: true}
	p = mustNew(t, c)
	a := p.Access()
	if pathsString(a.Reads) != ".a" || pathsString(a.Writes) != ".c" || !a.ReadsTag || a.ReadsTime || a.SetsTime || a.SetsTag {
		t.Errorf("got %+v", a)
	}
	a.Reads[0] = record.NewPath("x")
	if got := pathsString(p.Access().Reads); got != ".a" {
		t.Errorf("changing Access's slice changed the program's: %s", got)
	}
	var b strings.Builder
	if err := p.Disasm(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if lines[1] != "reads:  .a, %tag" || lines[2] != "writes: .c" {
		t.Errorf("disasm header:\n%s", strings.Join(lines[:3], "\n"))
	}
	c.Access = &Access{SetsTime: true}
	b.Reset()
	if err := mustNew(t, c).Disasm(&b); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(b.String(), "\n")
	if lines[1] != "reads:  nothing" || lines[2] != "writes: %time" {
		t.Errorf("disasm header:\n%s", strings.Join(lines[:3], "\n"))
	}
}
