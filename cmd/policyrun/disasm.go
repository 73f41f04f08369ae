package main

import (
	"fmt"
	"io"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
)

func init() {
	register(command{
		name:    "disasm",
		summary: "print the bytecode a policy compiles to",
		run:     runDisasm,
	})
}

const disasmUsage = `
usage: policyrun disasm FILE

Compiles the policy and prints its bytecode: constants, paths, sets,
regexes and one line per instruction, grouped by source line.
`

// runDisasm is `policyrun disasm FILE`.
func runDisasm(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := newFlags("disasm", disasmUsage, stderr)
	if code, ok := parseFlags(fl, args); !ok {
		return code
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return 2
	}
	name := fl.Arg(0)
	src, err := policy.ReadFile(name)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun disasm: %v\n", err)
		return 2
	}
	prog, diags := compiler.CompileFile(name, src)
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
