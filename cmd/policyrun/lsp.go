package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/policyrun/policyrun/lsp"
)

// lspCommand is `policyrun lsp`. --stdio, which some clients pass, is the
// only transport and changes nothing.
func lspCommand(fl *flag.FlagSet) runFunc {
	fl.Bool("stdio", true, "talk LSP over standard input and output (the default and only transport)")
	return func(c *call) int {
		err := lsp.Serve(c.stdin, c.stdout, c.stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, lsp.ErrNoShutdown), errors.Is(err, lsp.ErrClosed):
			return 1
		}
		fmt.Fprintf(c.stderr, "policyrun lsp: %v\n", err)
		return 1
	}
}
