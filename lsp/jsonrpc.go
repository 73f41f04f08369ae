package lsp

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// The base protocol: each message is a header block (lines ending in
// \r\n, with Content-Length: N, then an empty line) and N bytes of
// JSON-RPC 2.0.

const (
	// maxMessage bounds a message's body: a larger one is skipped, not
	// read into memory.
	maxMessage = 64 << 20
	// maxHeaderLine bounds a header line: a longer one is skipped.
	maxHeaderLine = 4096
	// maxHeaderLines bounds a header block.
	maxHeaderLines = 32
)

// A framingError is a header block the reader could not use: no
// Content-Length, or one too large. The reader has consumed the block
// (and the body of a message too large to read), so that the next read
// starts at what follows, and a client that sent one bad message can go
// on.
type framingError struct{ msg string }

func (e *framingError) Error() string { return "bad message header: " + e.msg }

// readMessage reads one message and returns its body. At the end of the
// input between messages it returns io.EOF; in the middle of one,
// io.ErrUnexpectedEOF; after a header block it cannot use, a
// *framingError. Header lines other than Content-Length are ignored, even
// malformed ones, as long as a Content-Length comes with them.
func readMessage(r *bufio.Reader) ([]byte, error) {
	var length int64 = -1
	var bad string // the first malformed line, for the error
	lines := 0
	for {
		line, tooLong, err := readLine(r)
		if err != nil {
			if err == io.EOF && lines == 0 && line == "" {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
		if line == "" && !tooLong {
			if lines == 0 {
				continue // blank lines between messages mean nothing
			}
			break
		}
		lines++
		if tooLong || lines > maxHeaderLines {
			bad = cmp.Or(bad, "a header line or block too long")
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = cmp.Or(bad, fmt.Sprintf("header line %q has no ':'", clip(line)))
			continue
		}
		if !strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			continue // Content-Type and the like
		}
		n, err := strconv.ParseUint(strings.TrimSpace(value), 10, 63)
		if err != nil {
			return nil, skipHeader(r, fmt.Sprintf("Content-Length %q is not a number", clip(value)))
		}
		length = int64(n)
	}
	switch {
	case length < 0 && bad != "":
		return nil, &framingError{"no Content-Length; " + bad}
	case length < 0:
		return nil, &framingError{"no Content-Length"}
	case length > maxMessage:
		if _, err := io.CopyN(io.Discard, r, length); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, &framingError{"message longer than " + strconv.Itoa(maxMessage) + " bytes"}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

// skipHeader reads the rest of a header block that cannot be used and
// returns the framingError saying why (io.ErrUnexpectedEOF when the input
// ends first).
func skipHeader(r *bufio.Reader, why string) error {
	for {
		line, tooLong, err := readLine(r)
		if err != nil {
			return io.ErrUnexpectedEOF
		}
		if line == "" && !tooLong {
			return &framingError{why}
		}
	}
}

// readLine reads one line without its line break. tooLong reports that
// it was longer than the reader's buffer: the line was skipped.
func readLine(r *bufio.Reader) (line string, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			tooLong = true
			continue
		}
		if !tooLong {
			line = string(chunk)
		}
		if err != nil {
			return line, tooLong, err
		}
		return strings.TrimRight(line, "\r\n"), tooLong, nil
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// newReader returns the buffered reader readMessage reads from.
func newReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, maxHeaderLine) }

// A writer writes framed messages, one Write each, so that messages
// never interleave.
type writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

func (w *writer) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
	fmt.Fprintf(&w.buf, "Content-Length: %d\r\n\r\n", len(body))
	w.buf.Write(body)
	_, err = w.w.Write(w.buf.Bytes())
	return err
}

// errorf is a ResponseError.
func errorf(code int, format string, args ...any) *ResponseError {
	return &ResponseError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// validID reports whether id is a JSON-RPC request id: a number or a
// string.
func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case float64, string:
		return true
	}
	return false
}

// decodeMessage decodes a body. A body that is not JSON is a ParseError;
// JSON that is no message (an array, a number, a method that is not a
// string) an InvalidRequest.
func decodeMessage(body []byte) (*message, *ResponseError) {
	var m message
	if !json.Valid(body) {
		return nil, errorf(CodeParseError, "the message is not JSON")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, errorf(CodeInvalidRequest, "the message is not a JSON object")
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errorf(CodeInvalidRequest, "the message is no JSON-RPC message: %v", err)
	}
	return &m, nil
}
