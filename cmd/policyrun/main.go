// Command policyrun checks, formats, tests and runs log policies, and runs
// log pipelines (tail → policy → outputs) built on them.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand, run by the function of its name in the
// file of its name.
type command struct {
	summary string
	// run gets the arguments after the subcommand name and returns the exit
	// code: 0 success, 1 the input was bad (policy errors, failed tests),
	// 2 usage or I/O problems.
	run func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"bench":      {"benchmarks: whole-process runs (bench pipeline), an HTML report with charts (bench report), an OTLP/HTTP load generator (bench otlp)", runBench},
	"check":      {"type-check policies and report every error with its line, column and hint", runCheck},
	"disasm":     {"print the bytecode a policy compiles to", runDisasm},
	"eval":       {"run a policy over records from stdin and write the results to stdout", runEval},
	"fmt":        {"rewrite policies in the canonical layout (--check to verify, -w to write)", runFmt},
	"gen":        {"generate the deterministic benchmark data (flat, k8s, cri, otlp)", runGen},
	"lsp":        {"run the language server (LSP over standard input and output) for editors", runLSP},
	"playground": {"serve the playground page: a policy editor running the compiler and the VM in the browser", runPlayground},
	"replay":     {"send the requests of an output's dead-letter directory again", runReplay},
	"run":        {"run a pipeline (tail → policies → outputs) from a YAML config", runPipeline},
	"test":       {"run the test blocks of policies on every backend", runTest},
	"version":    {"print the version, the VCS revision and the Go version", runVersion},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "policyrun: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	return c.run(args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: policyrun <command> [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	width := 8
	for n := range commands {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'policyrun <command> -h' for a command's flags.")
}
