package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
)

func init() {
	register(command{
		name:    "disasm",
		summary: "print the bytecode a policy compiles to",
		run:     runDisasm,
	})
}

// runDisasm is `policyrun disasm FILE`.
func runDisasm(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("disasm", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintln(stderr, "usage: policyrun disasm FILE")
		fmt.Fprintln(stderr, "\nCompiles the policy and prints its bytecode: constants, paths, sets,")
		fmt.Fprintln(stderr, "regexes and one line per instruction, grouped by source line.")
	}
	if err := fl.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fl.NArg() != 1 {
		fl.Usage()
		return 2
	}
	name := fl.Arg(0)
	src, err := os.ReadFile(name)
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
