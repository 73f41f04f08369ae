package main

import (
	"fmt"
	"io"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
)

// runCheck is `policyrun check [--format text|json|github] [--strict] FILE|DIR...`.
// It reports every diagnostic of every file; warnings fail only with --strict.
func runCheck(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := newFlags("check", stderr)
	format := fl.String("format", "text", "output format: text, json or github")
	strict := fl.Bool("strict", false, "fail on warnings too")
	if code, ok := parseFlags(fl, args, anyArgs); !ok {
		return code
	}
	switch *format {
	case "text", "json", "github":
	default:
		fmt.Fprintf(stderr, "policyrun check: unknown format %q (want text, json or github)\n", *format)
		return 2
	}
	if fl.NArg() == 0 {
		fl.Usage()
		return 2
	}
	files, err := policy.Files(fl.Args()...)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun check: %v\n", err)
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
			fmt.Fprintf(stderr, "policyrun check: %v\n", err)
			ioErr = true
			continue
		}
		an := compiler.Analyze(name, src, compiler.WithLoader(loader))
		ds := an.Diagnostics
		if *format == "text" && len(ds) > 0 {
			diag.WriteText(stdout, src, ds)
			fmt.Fprintln(stdout)
		}
		if r := an.StateReport(name); r != nil {
			reports = append(reports, r)
			if *format == "text" {
				r.WriteText(stdout)
			}
		}
		all = append(all, ds...)
	}
	switch *format {
	case "json":
		compiler.WriteJSON(stdout, all, reports)
	case "github":
		diag.WriteGitHub(stdout, all)
	}
	errs, warns := all.Count()
	if *format == "text" {
		fmt.Fprintf(stderr, "%s, %s in %s\n", plural(errs, "error"), plural(warns, "warning"), plural(len(files), "file"))
	}
	switch {
	case ioErr:
		return 2
	case errs > 0, *strict && warns > 0:
		return 1
	}
	return 0
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
