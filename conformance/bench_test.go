package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/internal/gen"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// The B1 policy-stage benchmarks: each policy of policies/ over a batch of
// B1 records from internal/gen, decoded before the clock runs.

const benchBatch = 1000

// b1Policy is one of the nine B1 policies.
type b1Policy struct {
	name string // the file name without .policy: "1-noop"
	kind string // the records it runs on: "flat" or "k8s"
	file string
	src  []byte
	prog *vm.Program
}

func b1Policies(tb testing.TB) []b1Policy {
	files, err := filepath.Glob("policies/*.policy")
	if err != nil || len(files) != 9 {
		tb.Fatalf("want the nine B1 policies, found %d (%v)", len(files), err)
	}
	var out []b1Policy
	for _, fn := range files {
		src, err := os.ReadFile(fn)
		if err != nil {
			tb.Fatal(err)
		}
		prog, diags := compiler.CompileFile(fn, src)
		if prog == nil {
			tb.Fatalf("%s: %v", fn, diags)
		}
		name := strings.TrimSuffix(filepath.Base(fn), ".policy")
		kind := "flat"
		if strings.Contains(name, "k8s") {
			kind = "k8s"
		}
		out = append(out, b1Policy{name: name, kind: kind, file: fn, src: src, prog: prog})
	}
	return out
}

var (
	linesMu sync.Mutex
	lines   = map[string][][]byte{}
)

// b1Lines returns benchBatch generated lines of kind (seed 1), shared.
func b1Lines(tb testing.TB, kind string) [][]byte {
	linesMu.Lock()
	defer linesMu.Unlock()
	if l, ok := lines[kind]; ok {
		return l
	}
	g, err := gen.New(kind, 1)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for range benchBatch {
		out = append(out, g.Append(nil))
	}
	lines[kind] = out
	return out
}

// batch decodes lines into a (reset first), reusing recs.
func batch(tb testing.TB, a *record.Arena, lines [][]byte, recs []*record.Record) []*record.Record {
	a.Reset()
	return decodeLines(tb, a, lines, recs)
}

// decodeLines decodes lines into a as it is, reusing recs.
func decodeLines(tb testing.TB, a *record.Arena, lines [][]byte, recs []*record.Record) []*record.Record {
	recs = recs[:0]
	for _, l := range lines {
		rec, err := a.DecodeJSON(l, record.Referenced)
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// restorableBatch is a decoded batch that is put back as it was decoded
// between rounds by restoring the records' headers: decoded nodes never
// change, edits go to new nodes. The new nodes pile up in the arena, so
// after editedRounds rounds with edits the arena is reset and the batch
// decoded again, keeping its memory within a few rounds' worth.
type restorableBatch struct {
	a      *record.Arena
	lines  [][]byte
	otlp   [][]byte // protobuf requests, decoded instead of lines when set
	recs   []*record.Record
	saved  []record.Record
	edited int // rounds with edits since the batch was decoded
}

// editedRounds is how many rounds with edits a decoded batch serves.
const editedRounds = 4

func (br *restorableBatch) reset(tb testing.TB) {
	edited := false
	for i, rec := range br.recs {
		if rec.Root() != br.saved[i].Root() || rec.Time() != br.saved[i].Time() || string(rec.Tag()) != string(br.saved[i].Tag()) {
			edited = true
			break
		}
	}
	if edited {
		br.edited++
	}
	if br.recs != nil && br.edited < editedRounds {
		for i, rec := range br.recs {
			*rec = br.saved[i]
		}
		return
	}
	if br.otlp != nil {
		br.recs = otlpBatch(tb, br.a, br.otlp, br.recs)
	} else {
		br.recs = batch(tb, br.a, br.lines, br.recs)
	}
	br.edited = 0
	br.saved = br.saved[:0]
	for _, rec := range br.recs {
		br.saved = append(br.saved, *rec)
	}
}

// otlpBatch decodes OTLP requests into a (reset first), reusing recs.
func otlpBatch(tb testing.TB, a *record.Arena, reqs [][]byte, recs []*record.Record) []*record.Record {
	a.Reset()
	recs = recs[:0]
	for _, req := range reqs {
		var err error
		if recs, err = a.DecodeOTLP(req, record.Referenced, recs); err != nil {
			tb.Fatal(err)
		}
	}
	return recs
}

// BenchmarkPolicy measures the policy stage alone, one record per
// iteration over a pre-decoded batch: ns/record and allocs/record. The
// nine B1 policies run over B1 records; otlp-add-attribute is B5's "add an
// attribute" over B5's OTLP records, decoded from protobuf requests.
func BenchmarkPolicy(b *testing.B) {
	ps := b1Policies(b)
	ps = append(ps, otlpAddAttribute(b))
	for _, p := range ps {
		b.Run(p.name, func(b *testing.B) {
			br := &restorableBatch{a: record.NewArena()}
			if p.kind == "otlp" {
				br.otlp = otlpRequests(b)
			} else {
				br.lines = b1Lines(b, p.kind)
			}
			m := vm.NewMachine(p.prog)
			br.reset(b)
			for _, rec := range br.recs { // untimed: the arena grows to size
				m.Run(rec)
			}
			br.reset(b)
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for range b.N {
				if i == len(br.recs) {
					b.StopTimer()
					br.reset(b)
					i = 0
					b.StartTimer()
				}
				m.Run(br.recs[i])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/record")
		})
	}
}

// BenchmarkCompile measures parsing, checking and compiling a 200-line
// policy.
func BenchmarkCompile(b *testing.B) {
	src := compileBenchPolicy()
	if n := strings.Count(src, "\n"); n < 200 {
		b.Fatalf("the policy has %d lines", n)
	}
	b.ReportAllocs()
	for range b.N {
		if prog, diags := compiler.CompileFile("bench.policy", []byte(src)); prog == nil {
			b.Fatal(diags)
		}
	}
}

// BenchmarkLower measures the code generation alone (compiler.Compile) for
// the policy of BenchmarkCompile, parsed and checked beforehand.
func BenchmarkLower(b *testing.B) {
	f, info, diags := compiler.CheckFile("bench.policy", []byte(compileBenchPolicy()))
	if f == nil || info == nil {
		b.Fatal(diags)
	}
	b.ReportAllocs()
	for range b.N {
		if _, err := compiler.Compile(f, info); err != nil {
			b.Fatal(err)
		}
	}
}

// compileBenchPolicy writes a 200-line policy that uses most of the
// language: a schema, sets, ifs, drops, lets, fors, calls and regexes.
func compileBenchPolicy() string {
	var b strings.Builder
	b.WriteString("policy \"compile-bench\"\n\nschema {\n")
	for i := range 8 {
		fmt.Fprintf(&b, "  n%d: int\n  s%d: string\n", i, i)
	}
	b.WriteString("  tags: array<string>\n  labels: map<string>\n  ...\n}\n\n")
	for i := 0; strings.Count(b.String(), "\n") < 200; i++ {
		n, s := i%8, (i+3)%8
		switch i % 6 {
		case 0:
			fmt.Fprintf(&b, "set .a%d = .n%d * %d + .n%d %% 7\n", i, n, i+1, s)
		case 1:
			fmt.Fprintf(&b, "if .s%d == \"v%d\" && .n%d > %d {\n  set .b%d = upper(.s%d) + \"-\" + to_string(.n%d)\n} else {\n  set .s%d = \"gone\"\n}\n", n, i, s, i, i, s, n, s)
		case 2:
			fmt.Fprintf(&b, "drop when contains(.s%d, \"debug%d\") || matches(.s%d, `^x[0-9]+%d$`)\n", n, i, s, i)
		case 3:
			fmt.Fprintf(&b, "let l%d = .labels[\"k%d\"] ?? \"none\"\nset .c%d = l%d\n", i, i, i, i)
		case 4:
			fmt.Fprintf(&b, "for k%d, v%d in .labels {\n  set .d%d = k%d + v%d\n}\n", i, i, i, i, i)
		case 5:
			fmt.Fprintf(&b, "set .e%d = .s%d in [\"a%d\", \"b%d\", \"c%d\"]\n", i, n, i, i, i)
		}
	}
	return b.String()
}
