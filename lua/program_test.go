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
// special-cases, and the regexps it leaves for the load to compile.
func TestTranspileShape(t *testing.T) {
	tests := []struct {
		name, src string
		regexps   int
		want      []string
	}{
		{
			// Top-level edits inline, guards inline, paths as constants.
			"edits", `policy "shape"
schema {
  a: {b: int}
  s: string
  ...
}
set .x = .s
set .a.c = .a.b + 1
remove .s
rename .x to .y
`, 0, []string{
				`mset(rec, "x", t1)`,
				`if type(t1) ~= "string" then chk(t1, "string", false) end`,
				`local K1 = {"a", "c"}`,
				`setp(rec, K1, t`,
				`mdel(rec, "s")`,
				`mdel(rec, "x"); mset(rec, "y", t`,
			},
		},
		{
			// A function's pattern parameter gets the pattern compiled at
			// load: the call passes a constant of the chunk (P.re[n]), a
			// caller passes its own hidden parameter on, and the body
			// compiles nothing (^a and ^b).
			"pattern parameter", `policy "p"
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
`, 2, []string{
				`F1 = function(L1, L2, RX2)`,
				`R.matches(L1, RX2)`,
				`F1(L3, L4, RX2)`,
				`"^b", K1)`,
				`"^a", K2)`,
				`local K1 = P.re[1]`,
			},
		},
		{
			// A zone, unit or format parameter is an ordinary parameter:
			// the call passes the constant as a literal would reach the
			// built-in, and the function takes no hidden parameter for it
			// (only patterns need one).
			"constant parameters", `policy "p"
schema {
  n: int
  ...
}
fn clock(n: int, unit: string, tz: string) string {
  return format_time(from_unix(n, unit), "%H:%M", tz)
}
set .t = clock(.n, "ms", "Europe/Paris")
`, 0, []string{
				`F1 = function(L1, L2, L3)`,
				`R.from_unix(L1, L2)`,
				`R.format_time(t1, "%H:%M", L3)`,
				`F1(t3, "ms", "Europe/Paris")`,
			},
		},
	}
	for _, tt := range tests {
		f, info := parseCheck(t, "p.policy", []byte(tt.src))
		lua, res, err := Transpile(f, info)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(res) != tt.regexps {
			t.Errorf("%s: the program has %d regexps, want %d", tt.name, len(res), tt.regexps)
		}
		for _, want := range tt.want {
			if !strings.Contains(lua, want) {
				t.Errorf("%s: the Lua source lacks %q:\n%s", tt.name, want, lua)
			}
		}
	}
}
