package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/policytest"
)

// testCommand is `policyrun test [--backend all|vm|lua] [-v] [PATH...]`.
func testCommand(fl *flag.FlagSet) runFunc {
	backendName := fl.String("backend", "all", "backend to run the tests on: all, or one name")
	verbose := fl.Bool("v", false, "print every test, not only failures")
	return func(c *call) int {
		bs, err := backend.Select(*backendName)
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun test: %v\n", err)
			return 2
		}
		paths := fl.Args()
		if len(paths) == 0 {
			paths = []string{"."}
		}
		files, err := policy.Files(paths...)
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun test: %v\n", err)
			return 2
		}
		passed, failed := 0, 0
		loader := compiler.NewLoader(nil) // each module checked once
		for _, name := range files {
			src, err := policy.ReadFile(name)
			if err != nil {
				fmt.Fprintf(c.stderr, "policyrun test: %v\n", err)
				return 2
			}
			f, info, diags := compiler.CheckFile(name, src, compiler.WithLoader(loader))
			if diags.HasErrors() {
				fmt.Fprintf(c.stdout, "FAIL %s: the policy does not compile\n", name)
				diag.WriteText(c.stdout, src, diags)
				if f != nil && len(f.Tests) > 0 {
					failed += len(f.Tests)
				} else {
					failed++
				}
				continue
			}
			results := func() []policytest.Result { return policytest.RunFile(f, info, bs) }
			if f.Module {
				results = func() []policytest.Result { return policytest.RunModule(src, f, bs) }
			}
			for _, r := range results() {
				where := fmt.Sprintf("%s:%d", name, r.Test.Pos().Line)
				if r.Passed() {
					passed++
					if *verbose {
						fmt.Fprintf(c.stdout, "ok   %s: %s\n", where, r.Name())
					}
					continue
				}
				failed++
				fmt.Fprintf(c.stdout, "FAIL %s: %s\n", where, r.Name())
				for _, msg := range r.Failures {
					fmt.Fprintf(c.stdout, "  %s\n", strings.ReplaceAll(msg, "\n", "\n  "))
				}
			}
		}
		fmt.Fprintf(c.stdout, "%d passed, %d failed\n", passed, failed)
		if failed > 0 {
			return 1
		}
		return 0
	}
}
