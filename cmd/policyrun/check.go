package main

import (
	"flag"
	"fmt"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
)

// checkCommand is `policyrun check [--format text|json|github] [--strict] FILE|DIR...`.
// It reports every diagnostic of every file; warnings fail only with --strict.
func checkCommand(fl *flag.FlagSet) runFunc {
	format := fl.String("format", "text", "output format: text, json or github")
	strict := fl.Bool("strict", false, "fail on warnings too")
	return func(c *call) int {
		switch *format {
		case "text", "json", "github":
		default:
			fmt.Fprintf(c.stderr, "policyrun check: unknown format %q (want text, json or github)\n", *format)
			return 2
		}
		if fl.NArg() == 0 {
			fl.Usage()
			return 2
		}
		files, err := policy.Files(fl.Args()...)
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun check: %v\n", err)
			return 2
		}
		var all diag.List
		var reports []*compiler.StateReport
		ioErr := false
		// One loader for every file: a module imported by several policies
		// is checked, and its diagnostics reported, once.
		loader := compiler.NewLoader(nil)
		for _, name := range files {
			src, err := policy.ReadFile(name)
			if err != nil {
				fmt.Fprintf(c.stderr, "policyrun check: %v\n", err)
				ioErr = true
				continue
			}
			an := compiler.Analyze(name, src, compiler.WithLoader(loader))
			ds := an.Diagnostics
			if *format == "text" && len(ds) > 0 {
				diag.WriteText(c.stdout, src, ds)
				fmt.Fprintln(c.stdout)
			}
			if r := an.StateReport(name); r != nil {
				reports = append(reports, r)
				if *format == "text" {
					r.WriteText(c.stdout)
				}
			}
			all = append(all, ds...)
		}
		switch *format {
		case "json":
			compiler.WriteJSON(c.stdout, all, reports)
		case "github":
			diag.WriteGitHub(c.stdout, all)
		}
		errs, warns := all.Count()
		if *format == "text" {
			fmt.Fprintf(c.stderr, "%s, %s in %s\n", plural(errs, "error"), plural(warns, "warning"), plural(len(files), "file"))
		}
		switch {
		case ioErr:
			return 2
		case errs > 0, *strict && warns > 0:
			return 1
		}
		return 0
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
