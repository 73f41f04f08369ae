package compiler_test

import (
	"fmt"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// Compile once, run many: a Program is shared, each goroutine runs it with
// a Machine of its own (or with prog.Run, which pools them).
func ExampleCompileFile() {
	src := []byte(`policy "example"
schema {
  level: string
  status: int
  ...
}
drop when .level == "debug"
set .error = .status >= 500
`)
	prog, diags := compiler.CompileFile("example.policy", src)
	if prog == nil {
		fmt.Println(diags)
		return
	}
	a := record.NewArena()
	m := vm.NewMachine(prog)
	for _, line := range []string{
		`{"level":"info","status":503}`,
		`{"level":"debug","status":200}`,
		`{"level":"info","status":"oops"}`,
	} {
		rec, err := a.DecodeJSON([]byte(line), record.Owned)
		if err != nil {
			panic(err)
		}
		res := m.Run(rec)
		fmt.Printf("%-22s %s\n", res, rec.AppendJSON(nil))
	}
	fmt.Println("type_mismatch faults:", prog.Faults()[vm.TypeMismatch])
	// Output:
	// keep                   {"level":"info","status":503,"error":true}
	// drop                   {"level":"debug","status":200}
	// fault (type_mismatch)  {"level":"info","status":"oops"}
	// type_mismatch faults: 1
}
