package conformance

import (
	"strconv"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/internal/testkit/vmtest"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestIterationLimit runs nested loops just under and just over the
// iteration limit on every backend: under, the record is edited; over, the
// run faults iteration_limit and the record is left as it came in
// (docs/semantics.md, "Faults"). The limit is lowered so that the Lua
// backend reaches it quickly; the VM also runs at the default limit.
func TestIterationLimit(t *testing.T) {
	const src = `policy "loops"
schema {
  xs: array<int>
  ...
}
for i, x in .xs {
  for j, y in .xs {
    set .last = x + y
  }
}
`
	f, info := checkPolicy(t, "loops.policy", []byte(src))
	line := xsLine
	// n elements cost n + n*n iterations.
	tests := []struct {
		limit, n int
		outcome  string
		last     int64 // -1: absent
	}{
		{1000, 30, "keep", 58},
		{1000, 31, "keep", 60},
		{1000, 32, "fault (iteration_limit)", -1},
		{992, 31, "keep", 60},
		{991, 31, "fault (iteration_limit)", -1},
	}
	for _, b := range backends {
		for _, tt := range tests {
			r, err := b.Load(f, info, spec.Options{Limits: spec.Limits{MaxIterations: tt.limit}})
			if err != nil {
				t.Fatal(err)
			}
			checkRun(t, b.Name, r, line(tt.n), tt.outcome, tt.last)
		}
	}
	// The default limit, on the VM alone (the Lua backend takes seconds).
	prog, diags := compiler.CompileFile("loops.policy", []byte(src))
	if prog == nil {
		t.Fatal(diags)
	}
	for _, tt := range []struct {
		n       int
		outcome string
		last    int64
	}{
		{1023, "keep", 2044}, // 1,047,552 iterations
		{1024, "fault (iteration_limit)", -1},
	} {
		a := record.NewArena()
		rec, err := a.DecodeJSON(line(tt.n), record.Owned)
		if err != nil {
			t.Fatal(err)
		}
		res := prog.Run(rec)
		if got := res.Fault.String(); tt.last >= 0 && res.Fault != spec.NoFault || tt.last < 0 && got != "iteration_limit" {
			t.Errorf("vm, %d elements: fault %q", tt.n, got)
		}
		if got := lastOf(rec); got != tt.last {
			t.Errorf("vm, %d elements: .last is %d, want %d", tt.n, got, tt.last)
		}
	}
}

// TestLimitOptions sets the limits of spec.Limits low, each policy's
// own, and holds every backend to them: a run past one faults and leaves
// the record as it came in.
func TestLimitOptions(t *testing.T) {
	// The bounds the array and build cases are placed around.
	if n := spec.MaxElements(spec.Limits{MaxRecord: 64}); n != 32 {
		t.Fatalf("MaxElements = %d", n)
	}
	if n := spec.MaxBuilt(spec.Limits{MaxRecord: 1 << 10}); n != 4<<10+1<<20 {
		t.Fatalf("MaxBuilt = %d", n)
	}
	ys := `[1,2,3,4,5,6,7,8,9,10]`
	zeros := func(n int) string {
		b := []byte("[")
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '0')
		}
		return string(append(b, ']'))
	}
	tests := []struct {
		name, src string
		lim       spec.Limits
		cases     []limitCase
	}{
		{
			// A run that builds a longer string, or leaves a larger
			// record, than the string and record limits.
			"grow", `policy "grow"
schema {
  s: string
  n: int
  ...
}
if .n == 1 { set .u = upper(.s) }
if .n == 2 { set .c = .s + .s }
if .n == 3 { set .r = replace(.s, "a", "aaaa") }
if .n == 4 { set .m = {"a": .s, "b": .s, "c": .s, "d": .s} }
`, spec.Limits{MaxString: 40, MaxRecord: 100}, []limitCase{
				{`{"s":"short","n":1}`, "keep"},
				{`{"s":"0123456789012345678901234567890123456789x","n":1}`, "fault (string_too_long)"},
				{`{"s":"01234567890123456789","n":2}`, "keep"},
				{`{"s":"012345678901234567890","n":2}`, "fault (string_too_long)"},
				{`{"s":"aaaaaaaaaaaa","n":3}`, "fault (string_too_long)"},
				{`{"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","n":4}`, "fault (record_too_large)"},
				{`{"s":"a","n":4}`, "keep"},
			},
		},
		{
			// An array that a + b or append builds may have at most
			// spec.MaxElements(lim) elements (MaxRecord / 2: more could
			// never be stored); past that the run faults
			// record_too_large, so that doubling an array in a loop
			// cannot exhaust memory. The limit is lowered to 32 elements.
			"double", `policy "double"
schema {
  xs: array<int>
  a: array<int>
  app: bool
  ...
}
for i, x in .xs {
  if .app {
    set .a = append(.a, x)
  } else {
    set .a = .a + .a
  }
}
set .n = len(.a)
remove .a, .xs
`, spec.Limits{MaxRecord: 64}, []limitCase{
				{`{"xs":[1,2,3,4,5],"a":[1],"app":false}`, "keep"},                                                                          // 32 elements
				{`{"xs":[1,2,3,4,5,6],"a":[1],"app":false}`, "fault (record_too_large)"},                                                    // 64
				{`{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31],"a":[0],"app":true}`, "keep"}, // 32
				{`{"xs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32],"a":[0],"app":true}`, "fault (record_too_large)"},
			},
		},
		{
			// A run may build at most spec.MaxBuilt(lim) bytes of values
			// in all (four records' worth), garbage included; past that
			// it faults memory_limit, so that a value rebuilt at each
			// step of a loop, each copy within every other limit, cannot
			// exhaust memory. MaxRecord is lowered to 1 KiB (1 MiB and 4
			// KiB to build); the cases stay far from the bound, where the
			// backends' counts (the VM's arena, Lua's allocations) agree
			// on the outcome.
			"rebuild", `policy "rebuild"
schema {
  xs: array<int>
  ys: array<int>
  ...
}
for i, x in .xs {
  set .acc = .ys + .ys
}
remove .acc
`, spec.Limits{MaxRecord: 1 << 10}, []limitCase{
				{`{"xs":` + zeros(1) + `,"ys":` + ys + `}`, "keep"},
				{`{"xs":` + zeros(20000) + `,"ys":` + ys + `}`, "fault (memory_limit)"}, // 6 MB built
			},
		},
	}
	for _, tt := range tests {
		f, info := checkPolicy(t, tt.name+".policy", []byte(tt.src))
		for _, b := range backends {
			r, err := b.Load(f, info, spec.Options{Limits: tt.lim})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.cases {
				out, got, err := vmtest.RunJSON(t, r, c.line)
				if err != nil || out.String() != c.outcome {
					t.Errorf("%s: %s: %s: %s %v, want %s", tt.name, b.Name, c.line, out, err, c.outcome)
				}
				if out.Faulted() && got != c.line {
					t.Errorf("%s: %s: %s: the faulted record is %s", tt.name, b.Name, c.line, got)
				}
			}
		}
	}
}

// limitCase is a record of TestLimitOptions and what a run of it gives.
type limitCase struct{ line, outcome string }

func checkRun(t *testing.T, backend string, r backend.Program, line []byte, outcome string, last int64) {
	t.Helper()
	a := record.NewArena()
	rec, err := a.DecodeJSON(line, record.Owned)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := r.Run(rec); err != nil || out.String() != outcome {
		t.Errorf("%s: %s %v, want %s", backend, out, err, outcome)
	}
	if got := lastOf(rec); got != last {
		t.Errorf("%s: .last is %d, want %d", backend, got, last)
	}
}

// lastOf returns the int at .last, or -1 when there is none.
func lastOf(rec *record.Record) int64 {
	v, ok := rec.Get(record.NewPath("last"))
	if ok && v.Kind() == record.Int {
		return v.Int()
	}
	return -1
}

// xsLine is a record whose array xs holds the ints 0 to n-1.
func xsLine(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"xs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}
