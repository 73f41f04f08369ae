package main

import (
	"flag"
	"fmt"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// disasmCommand is `policyrun disasm [--param NAME=VALUE]... FILE`.
func disasmCommand(fl *flag.FlagSet) runFunc {
	params := paramFlag{}
	fl.Var(params, "param", "give the policy's parameter a value, `name=value` (repeatable; JSON unless the parameter is a string)")
	return func(c *call) int {
		name := fl.Arg(0)
		src, err := policy.ReadFile(name)
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun disasm: %v\n", err)
			return 2
		}
		prog, diags := compiler.CompileFile(name, src, compiler.WithParams(spec.Params(params)))
		if prog == nil {
			diag.WriteText(c.stderr, src, diags)
			return 1
		}
		if err := prog.Disasm(c.stdout); err != nil {
			fmt.Fprintf(c.stderr, "policyrun disasm: %v\n", err)
			return 2
		}
		return 0
	}
}
