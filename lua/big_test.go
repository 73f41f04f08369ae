package lua

import (
	"fmt"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// TestBigPolicies: Lua allows 200 active locals per function and per
// chunk; a checked policy with a long expression, many constants or many
// locals must still transpile (spilling to tables) and run.
func TestBigPolicies(t *testing.T) {
	const n = 300
	var long, consts, lets, loops strings.Builder
	long.WriteString("policy \"long\"\nschema {\n  a: int\n  s: string\n  ...\n}\nset .x = .a")
	for range n {
		long.WriteString(" + .a")
	}
	long.WriteString("\nset .y = .s")
	for range n {
		long.WriteString(` + "-" + .s`)
	}
	long.WriteString("\n")
	consts.WriteString("policy \"consts\"\nschema {\n  s: string\n  ...\n}\n")
	for i := range n {
		fmt.Fprintf(&consts, "set .o.f%d = .s in [\"x%d\", \"z\"]\n", i, i)
	}
	lets.WriteString("policy \"lets\"\nschema {\n  a: int\n  ...\n}\n")
	for i := range n {
		fmt.Fprintf(&lets, "let x%d = .a + %d\n", i, i)
	}
	fmt.Fprintf(&lets, "set .sum = x0 + x%d\n", n-1)
	// Locals and temporaries past the limit inside a loop body.
	loops.WriteString("policy \"loops\"\nschema {\n  m: map<int>\n  ...\n}\nfor k, v in .m {\n")
	for i := range n {
		fmt.Fprintf(&loops, "  let y%d = v + %d\n", i, i)
	}
	fmt.Fprintf(&loops, "  set .out[k] = y0 + y%d\n}\n", n-1)

	dashes := strings.Repeat("z-", n) + "z"
	tests := []struct {
		name, src, in, want string
	}{
		{"long", long.String(), `{"a":1,"s":"z"}`, fmt.Sprintf(`{"a":1,"s":"z","x":%d,"y":"%s"}`, n+1, dashes)},
		{"consts", consts.String(), `{"s":"x7"}`, ""},
		{"lets", lets.String(), `{"a":1}`, fmt.Sprintf(`{"a":1,"sum":%d}`, 2+n-1)},
		{"loops", loops.String(), `{"m":{"p":1,"q":2}}`, fmt.Sprintf(`{"m":{"p":1,"q":2},"out":{"p":%d,"q":%d}}`, 2+n-1, 4+n-1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := compileFile(t, tt.name+".policy", []byte(tt.src))
			a := record.NewArena()
			rec, err := a.DecodeJSON([]byte(tt.in), record.Owned)
			if err != nil {
				t.Fatal(err)
			}
			res, err := p.Run(rec)
			if err != nil || res != (spec.Result{}) {
				t.Fatalf("run: %+v, %v", res, err)
			}
			got := string(rec.AppendJSON(nil))
			if tt.want == "" {
				// consts: f7 is the only true one.
				if !strings.Contains(got, `"f7":true`) || strings.Count(got, "true") != 1 {
					t.Errorf("got %s", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
