package main

import (
	"embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// The commands' usage messages are prose, kept out of the code: usage/
// holds one file per command, a subcommand's spaces as dashes
// (usage/bench-otlp.txt).
//
//go:embed usage
var usageFiles embed.FS

// usageText is the usage message of command name.
func usageText(name string) string {
	b, err := usageFiles.ReadFile("usage/" + strings.ReplaceAll(name, " ", "-") + ".txt")
	if err != nil {
		panic("policyrun: no usage message for " + name) // a command without its file
	}
	return string(b)
}

// newFlags returns the flag set of subcommand name. Its usage message,
// on stderr, is the command's usage file (the usage lines and what the
// command does) and then the flags, if it has any.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	usage := usageText(name)
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimSpace(usage))
		n := 0
		fl.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(stderr)
			fl.PrintDefaults()
		}
	}
	return fl
}

// nargs is how many arguments a command takes after its flags: from min
// to max, max -1 for no bound. A count outside is answered with the
// usage, or with named, by naming the arguments that are too many.
type nargs struct {
	min, max int
	named    bool
}

var (
	anyArgs  = nargs{0, -1, false}
	noArg    = nargs{0, 0, false}
	oneArg   = nargs{1, 1, false}
	someArgs = nargs{1, -1, false}
	// flagsOnly is noArg for the bench commands, which name the
	// arguments too many (noArgs) rather than print their usage.
	flagsOnly = nargs{0, 0, true}
)

// parseFlags parses args into fl. When it returns false the command ends
// with exit status code: 0 after -h (the usage was printed), 2 after a bad
// flag (the flag package said what was wrong) or a count of arguments
// outside want (the usage was printed, or the arguments named).
func parseFlags(fl *flag.FlagSet, args []string, want nargs) (code int, ok bool) {
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	if want.named {
		return noArgs(fl)
	}
	if n := fl.NArg(); n < want.min || want.max >= 0 && n > want.max {
		fl.Usage()
		return 2, false
	}
	return 0, true
}

// noArgs ends, as parseFlags does, a command that takes no arguments
// after its flags but got some, naming them on the flag set's output
// (ok false, exit status 2).
func noArgs(fl *flag.FlagSet) (code int, ok bool) {
	if fl.NArg() > 0 {
		fmt.Fprintf(fl.Output(), "policyrun %s: unexpected arguments: %s\n", fl.Name(), strings.Join(fl.Args(), " "))
		return 2, false
	}
	return 0, true
}
