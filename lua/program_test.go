package lua

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

const concurrentPolicy = `policy "c"
schema {
  n: int
  s: string
  ...
}
drop when .n < 0
set .twice = .n * 2
set .up = upper(.s)
`

// TestProgramConcurrent runs one Program from several goroutines: each run
// takes a pooled runner, so the results are those of a lone run.
func TestProgramConcurrent(t *testing.T) {
	_, p := compileFile(t, "c.policy", []byte(concurrentPolicy))
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := record.NewArena()
			for i := range 200 {
				a.Reset()
				n := g*1000 + i - 100
				rec, err := a.DecodeJSON([]byte(fmt.Sprintf(`{"n":%d,"s":"ab%d"}`, n, i)), record.Owned)
				if err != nil {
					errs <- err.Error()
					return
				}
				res, err := p.Run(rec)
				if err != nil {
					errs <- err.Error()
					return
				}
				want := fmt.Sprintf(`{"n":%d,"s":"ab%d","twice":%d,"up":"AB%d"}`, n, i, 2*n, i)
				switch got := string(rec.AppendJSON(nil)); {
				case n < 0 && res.Action != spec.Drop:
					errs <- fmt.Sprintf("n=%d: %v, want drop", n, res.Action)
					return
				case n >= 0 && got != want:
					errs <- fmt.Sprintf("got %s, want %s", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestTranspileShape pins what the transpiler emits for the cases it
// special-cases: top-level edits inline, guards inline, paths as constants.
func TestTranspileShape(t *testing.T) {
	src := `policy "shape"
schema {
  a: {b: int}
  s: string
  ...
}
set .x = .s
set .a.c = .a.b + 1
remove .s
rename .x to .y
`
	f, info := parseCheck(t, "shape.policy", []byte(src))
	lua, _, err := Transpile(f, info)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`mset(rec, "x", t1)`,
		`if type(t1) ~= "string" then chk(t1, "string", false) end`,
		`local K1 = {"a", "c"}`,
		`setp(rec, K1, t`,
		`mdel(rec, "s")`,
		`mdel(rec, "x"); mset(rec, "y", t`,
	} {
		if !strings.Contains(lua, want) {
			t.Errorf("the Lua source lacks %q:\n%s", want, lua)
		}
	}
}

// The program says whether its policy is an OTLP policy, as the VM's does.
func TestProgramOTLP(t *testing.T) {
	tests := []struct {
		src  string
		otlp bool
	}{
		{"policy \"p\"\nschema otlp\nset .attributes.a = .severity_text\n", true},
		{"policy \"p\"\nschema otlp {\n  body: string\n}\nset .body = upper(.body)\n", true},
		{"policy \"p\"\nset .otlp = 1\n", false},
	}
	for _, tt := range tests {
		_, p := compileFile(t, "p.policy", []byte(tt.src))
		if p.OTLP() != tt.otlp {
			t.Errorf("OTLP() = %v for\n%s", p.OTLP(), tt.src)
		}
	}
}

// A function's pattern parameter gets the pattern compiled at load: the
// call passes a constant of the chunk (P.re[n]), a caller passes its own
// hidden parameter on, and the body compiles nothing.
func TestTranspileRegexParam(t *testing.T) {
	src := `policy "p"
schema {
  msg: string
  ...
}
fn has(s: string, re: string) bool {
  return matches(s, re)
}
fn either(s: string, re: string) bool {
  return has(s, re) || has(s, "^b")
}
drop when either(.msg, "^a")
`
	f, info := parseCheck(t, "p.policy", []byte(src))
	lua, res, err := Transpile(f, info)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Errorf("the program has %d regexps, want 2 (^a, ^b)", len(res))
	}
	for _, want := range []string{
		`F1 = function(L1, L2, RX2)`,
		`R.matches(L1, RX2)`,
		`F1(L3, L4, RX2)`,
		`"^b", K1)`,
		`"^a", K2)`,
		`local K1 = P.re[1]`,
	} {
		if !strings.Contains(lua, want) {
			t.Errorf("the Lua source lacks %q:\n%s", want, lua)
		}
	}
}

// A zone, unit or format parameter is an ordinary parameter: the call
// passes the constant as a literal would reach the built-in, and the
// function takes no hidden parameter for it (only patterns need one).
func TestTranspileConstParam(t *testing.T) {
	src := `policy "p"
schema {
  n: int
  ...
}
fn clock(n: int, unit: string, tz: string) string {
  return format_time(from_unix(n, unit), "%H:%M", tz)
}
set .t = clock(.n, "ms", "Europe/Paris")
`
	f, info := parseCheck(t, "p.policy", []byte(src))
	lua, res, err := Transpile(f, info)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 0 {
		t.Errorf("the program has %d regexps, want none", len(res))
	}
	for _, want := range []string{
		`F1 = function(L1, L2, L3)`,
		`R.from_unix(L1, L2)`,
		`R.format_time(t1, "%H:%M", L3)`,
		`F1(t3, "ms", "Europe/Paris")`,
	} {
		if !strings.Contains(lua, want) {
			t.Errorf("the Lua source lacks %q:\n%s", want, lua)
		}
	}
}
