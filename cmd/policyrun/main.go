// Command policyrun checks, formats, tests and runs log policies, and runs
// log pipelines (tail → policy → outputs) built on them.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// A command is one subcommand. Its run makes the flag set, parses the
// arguments and answers -h, a bad flag and a count of arguments outside
// args, so that a command only declares its flags and runs: declare, in
// the file named for the command, declares them on the flag set and
// returns the function that runs the command once they are parsed.
type command struct {
	summary string
	args    nargs
	declare func(fl *flag.FlagSet) runFunc
	// main runs a command that reads its arguments itself (bench, which
	// has commands of its own; version), in place of args and declare.
	main runFunc
}

// A runFunc runs a command and returns its exit code: 0 success, 1 the
// input was bad (policy errors, failed tests), 2 usage or I/O problems.
type runFunc func(c *call) int

// A call is one run of a command.
type call struct {
	args   []string // after the command's name, flags and all
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

var commands = map[string]command{
	"bench":      {summary: "benchmarks: whole-process runs (bench pipeline), an HTML report with charts (bench report), an OTLP/HTTP load generator (bench otlp)", main: benchMain},
	"check":      {summary: "type-check policies and report every error with its line, column and hint", args: anyArgs, declare: checkCommand},
	"disasm":     {summary: "print the bytecode a policy compiles to", args: oneArg, declare: disasmCommand},
	"eval":       {summary: "run a policy over records from stdin and write the results to stdout", args: anyArgs, declare: evalCommand},
	"fmt":        {summary: "rewrite policies in the canonical layout (--check to verify, -w to write)", args: someArgs, declare: fmtCommand},
	"gen":        {summary: "generate the deterministic benchmark data (flat, k8s, cri, otlp)", args: someArgs, declare: genCommand},
	"lsp":        {summary: "run the language server (LSP over standard input and output) for editors", args: noArg, declare: lspCommand},
	"playground": {summary: "serve the playground page: a policy editor running the compiler and the VM in the browser", args: noArg, declare: playgroundCommand},
	"replay":     {summary: "send the requests of an output's dead-letter directory again", args: oneArg, declare: replayCommand},
	"run":        {summary: "run a pipeline (tail → policies → outputs) from a YAML config", args: oneArg, declare: runCommand},
	"test":       {summary: "run the test blocks of policies on every backend", args: anyArgs, declare: testCommand},
	"version":    {summary: "print the version, the VCS revision and the Go version", main: versionMain},
}

// run runs the command named name (as its usage file is named: "bench
// report") with the arguments of c.
func (cmd command) run(name string, c *call) int {
	if cmd.main != nil {
		return cmd.main(c)
	}
	fl := newFlags(name, c.stderr)
	run := cmd.declare(fl)
	if code, ok := parseFlags(fl, c.args, cmd.args); !ok {
		return code
	}
	return run(c)
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if code, ok := usageAsked(args, func() { usage(stderr) }); ok {
		return code
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
	return c.run(args[0], &call{args[1:], stdin, stdout, stderr})
}

// usageAsked answers, with usage, a command line that names no command
// (exit status 2) or asks for help: -h, --help or help (0). ok is false
// for any other.
func usageAsked(args []string, usage func()) (code int, ok bool) {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "help" {
		return 0, false
	}
	usage()
	if len(args) == 0 {
		return 2, true
	}
	return 0, true
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
