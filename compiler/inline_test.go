package compiler

import (
	"fmt"
	"strings"
	"testing"
)

// TestDisasmShowsInlinedCalls: every instruction of an inlined body says
// which call it stands for, nested calls outwards.
func TestDisasmShowsInlinedCalls(t *testing.T) {
	prog := compile(t, `policy "nested"
fn twice(s: string) string {
  return s + s
}
fn loud(s: string) string {
  return upper(twice(s))
}
set .x = loud(to_string(.x))
`)
	var b strings.Builder
	if err := prog.Disasm(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"; line 6, in fn loud inlined at line 8",
		"; line 3, in fn twice inlined at line 6, in fn loud inlined at line 8",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("disasm lacks %q:\n%s", want, b.String())
		}
	}
}

// TestInlineConstParamSameAsLiteral: a zone, unit or format parameter,
// constant at the call, compiles to the code the same constant written
// in the body compiles to: the call's constant register is the one the
// built-in reads (docs/language.md, "Constants and functions").
func TestInlineConstParamSameAsLiteral(t *testing.T) {
	const src = `policy "p"
schema {
  n: int
  msg: string
  ...
}
fn show(t: timestamp, tz: string) string {
  return format_time(t, "%%H:%%M", %s)
}
fn since(n: int, unit: string) timestamp {
  return from_unix(n, %s)
}
fn line(f: string, s: string) string {
  return format(%s, s)
}
set .a = show(since(.n, "ms"), "Asia/Tokyo")
set .b = line("<%%s>", .msg)
`
	disasm := func(src string) string {
		var b strings.Builder
		if err := compile(t, src).Disasm(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	params := disasm(fmt.Sprintf(src, "tz", "unit", "f"))
	literals := disasm(fmt.Sprintf(src, `"Asia/Tokyo"`, `"ms"`, `"<%s>"`))
	if params != literals {
		t.Errorf("the parameters compile to\n%s\nthe literals to\n%s", params, literals)
	}
}
