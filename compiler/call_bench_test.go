package compiler

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// A call costs what its body costs written out (docs/language.md,
// "How calls compile"): one policy four ways — the body inline, a call
// of the file's own three-statement function, a call of a module's, and
// a call that leaves a parameter to its default — side by side, over the
// same records.

const callSchema = `schema {
  ip: string
  msg: string
  ...
}
`

const callBody = `  let parts = split(ip, ".")
  if len(parts) != 4 {
    return ip
  }
  return join(slice(parts, 0, 3), ".") + ".0"
`

var callVariants = []struct {
	name string
	src  string
}{
	{"inline", `policy "inline"
` + callSchema + `
let parts = split(.ip, ".")
if len(parts) != 4 {
  set .subnet = .ip
} else {
  set .subnet = join(slice(parts, 0, 3), ".") + ".0"
}
`},
	{"fn", `policy "fn"
` + callSchema + `
fn mask_ip(ip: string) string {
` + callBody + `}

set .subnet = mask_ip(.ip)
`},
	{"default", `policy "default"
` + callSchema + `
fn mask_ip(ip: string, keep: int = 3) string {
  let parts = split(ip, ".")
  if len(parts) != 4 {
    return ip
  }
  return join(slice(parts, 0, keep), ".") + ".0"
}

set .subnet = mask_ip(.ip)
`},
	{"module", `policy "module"

import "net.policy"

` + callSchema + `
set .subnet = net.mask_ip(.ip)
`},
}

const callModule = `module "net"

fn mask_ip(ip: string) string {
` + callBody + `}
`

func callFiles(name string) ([]byte, error) {
	if name == "net.policy" {
		return []byte(callModule), nil
	}
	return nil, os.ErrNotExist
}

func callRecords() [][]byte {
	var lines [][]byte
	for i := range 100 {
		ip := fmt.Sprintf("10.%d.%d.%d", i%7, i%11, i)
		if i%10 == 0 {
			ip = "::1"
		}
		lines = append(lines, fmt.Appendf(nil, `{"ip":%q,"msg":"request %d"}`, ip, i))
	}
	return lines
}

func compileCall(tb testing.TB, src string) *vm.Program {
	tb.Helper()
	prog, diags := CompileFile("t.policy", []byte(src), WithFiles(callFiles))
	if prog == nil {
		tb.Fatalf("compile: %v", diags)
	}
	return prog
}

// TestCallCostsItsBody: the variants give the same records, and
// none allocates per record.
func TestCallCostsItsBody(t *testing.T) {
	lines := callRecords()
	var want []byte
	for _, v := range callVariants {
		prog := compileCall(t, v.src)
		noAllocs(t, prog, lines, clean)
		var out []byte
		a := record.NewArena()
		m := vm.NewMachine(prog)
		for _, l := range lines {
			rec, err := a.DecodeJSON(l, record.Referenced)
			if err != nil {
				t.Fatal(err)
			}
			m.Run(rec)
			out = append(rec.AppendJSON(out), '\n')
		}
		if want == nil {
			want = out
		} else if !bytes.Equal(out, want) {
			t.Errorf("%s gives other records than inline:\n%s\nwant\n%s", v.name, out, want)
		}
	}
}

// BenchmarkCallVsInline: ns/record of each variant, run with -benchmem
// (0 allocs/op each). Each record is decoded anew (the policy edits it);
// the variant "decode" runs an empty policy, the cost to subtract.
func BenchmarkCallVsInline(b *testing.B) {
	lines := callRecords()
	variants := append([]struct{ name, src string }{{"decode", `policy "decode"` + "\n"}}, callVariants...)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			benchRecords(b, compileCall(b, v.src), lines)
		})
	}
}

// benchRecords runs prog over lines, each record decoded anew, and
// reports ns/record besides the allocations.
func benchRecords(b *testing.B, prog *vm.Program, lines [][]byte) {
	a := record.NewArena()
	m := vm.NewMachine(prog)
	b.ReportAllocs()
	for b.Loop() {
		a.Reset()
		for _, l := range lines {
			rec, err := a.DecodeJSON(l, record.Referenced)
			if err != nil {
				b.Fatal(err)
			}
			m.Run(rec)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/record")
}

// BenchmarkCallVsInlineInterleaved runs the variants in turn within each
// iteration, a batch of 100 records each, and reports each one's
// ns/record: on a busy machine every variant sees the same load. allocs/op
// is the batches' together.
func BenchmarkCallVsInlineInterleaved(b *testing.B) {
	lines := callRecords()
	type runner struct {
		name string
		m    *vm.Machine
		a    *record.Arena
		ns   time.Duration
	}
	var rs []*runner
	for _, v := range callVariants {
		rs = append(rs, &runner{name: v.name, m: vm.NewMachine(compileCall(b, v.src)), a: record.NewArena()})
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rs {
			start := time.Now()
			r.a.Reset()
			for _, l := range lines {
				rec, err := r.a.DecodeJSON(l, record.Referenced)
				if err != nil {
					b.Fatal(err)
				}
				r.m.Run(rec)
			}
			r.ns += time.Since(start)
		}
	}
	for _, r := range rs {
		b.ReportMetric(float64(r.ns.Nanoseconds())/float64(b.N*len(lines)), r.name+"-ns/record")
	}
}
