package compiler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// A policy calling a three-statement function and the same policy with
// the body written out at the call: the measure that a call costs
// no more than its body (issue 34).
const (
	withCall = `policy "call"
schema {
  ip: string
  status: int
  ...
}
fn mask_ip(ip: string, keep: int = 3) string {
  let parts = split(ip, ".")
  if len(parts) != 4 {
    return ip
  }
  return join(slice(parts, 0, keep), ".") + ".0"
}
set .ip = mask_ip(.ip)
set .hot = .status >= 500
`
	written = `policy "inline"
schema {
  ip: string
  status: int
  ...
}
let parts = split(.ip, ".")
if len(parts) != 4 {
  set .ip = .ip
} else {
  set .ip = join(slice(parts, 0, 3), ".") + ".0"
}
set .hot = .status >= 500
`
)

func inlineLines() [][]byte {
	var lines [][]byte
	for i := range 64 {
		ip := fmt.Sprintf("10.%d.%d.%d", i%7, i%13, i)
		if i%8 == 0 {
			ip = "::1"
		}
		lines = append(lines, fmt.Appendf(nil, `{"ip":%q,"status":%d,"msg":"GET /api"}`, ip, 200+i*5))
	}
	return lines
}

// TestInlineSameAsWritten: the call and the written-out body give the same
// records, and neither allocates per record.
func TestInlineSameAsWritten(t *testing.T) {
	call, inline := compile(t, withCall), compile(t, written)
	lines := inlineLines()
	for _, l := range lines {
		var got [2]string
		for i, p := range []*vm.Program{call, inline} {
			a := record.NewArena()
			rec, err := a.DecodeJSON(l, record.Referenced)
			if err != nil {
				t.Fatal(err)
			}
			if res := p.Run(rec); !clean(res) {
				t.Fatal(res)
			}
			got[i] = string(rec.AppendJSON(nil))
		}
		if got[0] != got[1] {
			t.Errorf("%s: the call gives %s, the written body %s", l, got[0], got[1])
		}
	}
	noAllocs(t, call, lines, clean)
	noAllocs(t, inline, lines, clean)
}

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

// BenchmarkInline runs both policies side by side: ns/record and allocs.
func BenchmarkInline(b *testing.B) {
	lines := inlineLines()
	for _, c := range []struct{ name, src string }{{"call", withCall}, {"written", written}} {
		b.Run(c.name, func(b *testing.B) {
			prog, diags := CompileFile(c.name+".policy", []byte(c.src))
			if prog == nil {
				b.Fatal(diags.Err())
			}
			benchRecords(b, prog, lines)
		})
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
