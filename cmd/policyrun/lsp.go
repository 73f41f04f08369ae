package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/policyrun/policyrun/lsp"
)

// runLSP is `policyrun lsp`. --stdio, which some clients pass, is the
// only transport and changes nothing.
func runLSP(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := newFlags("lsp", stderr)
	fl.Bool("stdio", true, "talk LSP over standard input and output (the default and only transport)")
	if code, ok := parseFlags(fl, args, noArg); !ok {
		return code
	}
	err := lsp.Serve(stdin, stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, lsp.ErrNoShutdown), errors.Is(err, lsp.ErrClosed):
		return 1
	}
	fmt.Fprintf(stderr, "policyrun lsp: %v\n", err)
	return 1
}
