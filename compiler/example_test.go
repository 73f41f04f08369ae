package compiler_test

import (
	"fmt"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Compile once, run many: a Program is immutable and safe for concurrent
// use. Options fix the clock and the limits of every run; the caller
// tallies the results.
func ExampleCompileFile() {
	src := []byte(`policy "example"
schema {
  level: string
  status: int
  ...
}
drop when .level == "debug"
set .error = .status >= 500
set .seen = now()
`)
	prog, diags := compiler.CompileFile("example.policy", src,
		compiler.WithClock(spec.FixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))),
		compiler.WithLimits(spec.Limits{MaxString: 64 << 10}))
	if err := diags.Err(); err != nil {
		fmt.Println(err) // every error, with file, line, column and code
		return
	}
	a := record.NewArena()
	var counts spec.Counts
	for _, line := range []string{
		`{"level":"info","status":503}`,
		`{"level":"debug","status":200}`,
		`{"level":"info","status":"oops"}`,
	} {
		rec, err := a.DecodeJSON([]byte(line), record.Owned)
		if err != nil {
			panic(err)
		}
		res := prog.Run(rec)
		counts.Add(res)
		fmt.Printf("%-22s %s\n", res, rec.AppendJSON(nil))
	}
	fmt.Println("runs:", counts.Runs, "dropped:", counts.Dropped, "type_mismatch:", counts.Faults[spec.TypeMismatch])
	// Output:
	// keep                   {"level":"info","status":503,"error":true,"seen":"2026-01-01T00:00:00Z"}
	// drop                   {"level":"debug","status":200}
	// fault (type_mismatch)  {"level":"info","status":"oops"}
	// runs: 3 dropped: 1 type_mismatch: 1
}

// A policy with errors compiles to no Program; diags.Err() says why.
func ExampleDiagnostics_Err() {
	_, diags := compiler.CompileFile("bad.policy", []byte(`policy "bad"
set .n = lowercase(.msg)
`))
	fmt.Println(diags.Err())
	// Output: bad.policy:2:10: error[E0401]: unknown function lowercase
}
