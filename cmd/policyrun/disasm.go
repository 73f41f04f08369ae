package main

import (
	"fmt"
	"io"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
)

// runDisasm is `policyrun disasm [--param NAME=VALUE]... FILE`.
func runDisasm(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := newFlags("disasm", stderr)
	params := paramFlag{}
	fl.Var(params, "param", "give the policy's parameter a value, `name=value` (repeatable; JSON unless the parameter is a string)")
	if code, ok := parseFlags(fl, args, oneArg); !ok {
		return code
	}
	name := fl.Arg(0)
	src, err := policy.ReadFile(name)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun disasm: %v\n", err)
		return 2
	}
	prog, diags := compiler.CompileFile(name, src, compiler.WithParams(spec.Params(params)))
	if prog == nil {
		diag.WriteText(stderr, src, diags)
		return 1
	}
	if err := prog.Disasm(stdout); err != nil {
		fmt.Fprintf(stderr, "policyrun disasm: %v\n", err)
		return 2
	}
	return 0
}
