// Package lspwire is the editor's end of the language server's framing,
// for the tests that talk to it in process (lsp) and as a child (cmd).
package lspwire

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Frame is body with its Content-Length header, as a client writes it.
func Frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// Read reads one message the server wrote and returns its body. It is
// the client's own reader, independent of the server's, and strict: one
// Content-Length header ending in CRLF, a blank line, then the body.
func Read(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, ok := strings.CutPrefix(line, "Content-Length: ")
	length, err := strconv.Atoi(strings.TrimSuffix(n, "\r\n"))
	if !ok || err != nil || !strings.HasSuffix(n, "\r\n") {
		return nil, fmt.Errorf("bad header line %q", line)
	}
	if blank, err := r.ReadString('\n'); err != nil || blank != "\r\n" {
		return nil, fmt.Errorf("no blank line after the header: %q", blank)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}
