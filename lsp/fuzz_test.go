package lsp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/policyrun/policyrun/internal/testkit/lspwire"
)

// A session's bytes, as seeds.
var sessionSeed = lspwire.Frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///a.policy","version":1,"text":"policy \"p\"\nschema {\n  a: {b: int}\n}\nset .c = .a.\n"}}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///a.policy"},"position":{"line":4,"character":12}}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{"textDocument":{"uri":"file:///a.policy"},"position":{"line":4,"character":10}}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"file:///a.policy","version":2},"contentChanges":[{"range":{"start":{"line":4,"character":12},"end":{"line":4,"character":12}},"text":"b"}]}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","id":4,"method":"textDocument/definition","params":{"textDocument":{"uri":"file:///a.policy"},"position":{"line":4,"character":12}}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","id":5,"method":"textDocument/formatting","params":{"textDocument":{"uri":"file:///a.policy"},"options":{}}}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","id":6,"method":"shutdown"}`) +
	lspwire.Frame(`{"jsonrpc":"2.0","method":"exit"}`)

// readMessage never panics, never reads a body larger than maxMessage,
// and always gets on: every call but the last consumes input.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte(sessionSeed))
	f.Add([]byte("Content-Length: 3\r\n\r\nabc"))
	f.Add([]byte("Content-Length: 99999999999999999999\r\n\r\n"))
	f.Add([]byte("Content-Length: 100000000\r\n\r\nxyz"))
	f.Add([]byte("content-length:2\n\n{}\r\n\r\nContent-Length: -1\r\n\r\n"))
	f.Add([]byte("garbage\r\nContent-Length: 2\r\n\r\n{}"))
	f.Add([]byte(strings.Repeat("x", 10000) + "\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newReader(bytes.NewReader(data))
		for range len(data) + 2 {
			body, err := readMessage(r)
			var fe *framingError
			switch {
			case err == io.EOF || err == io.ErrUnexpectedEOF:
				return
			case errors.As(err, &fe):
			case err != nil:
				t.Fatalf("error %v", err)
			case len(body) > maxMessage:
				t.Fatalf("a body of %d bytes", len(body))
			}
		}
		t.Fatalf("more messages than bytes")
	})
}

// A framed body reads back as it was.
func FuzzFrameRoundTrip(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0"}`), []byte(""))
	f.Add([]byte("\r\n\r\n"), []byte("Content-Type: x\r\n"))
	f.Fuzz(func(t *testing.T, body, extra []byte) {
		if bytes.ContainsAny(extra, "\r\n") || bytes.Contains(bytes.ToLower(extra), []byte("content-length")) {
			extra = nil
		} else if len(extra) > 0 {
			extra = append(extra, ':', '\r', '\n') // another header line
		}
		in := fmt.Sprintf("Content-Length: %d\r\n%s\r\n%s", len(body), extra, body)
		got, err := readMessage(newReader(strings.NewReader(in)))
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("read %q, %v; want %q", got, err, body)
		}
	})
}

// Whatever a client sends, the server does not panic (its handlers'
// recover would log one) and Serve returns.
func FuzzServe(f *testing.F) {
	f.Add([]byte(sessionSeed))
	f.Add([]byte(lspwire.Frame(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`) + lspwire.Frame(`{"jsonrpc":"2.0","id":null,"method":"x"}`)))
	f.Add([]byte(lspwire.Frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":[]}`) +
		lspwire.Frame(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"u","text":"policy \"p\"\nset .a = (\n"}}}`) +
		lspwire.Frame(`{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"textDocument":{"uri":"u"},"contentChanges":[{"range":{"start":{"line":-1,"character":99},"end":{"line":0,"character":-5}},"text":"\u0000😀"}]}}`) +
		lspwire.Frame(`{"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":"u"},"position":{"line":1e9,"character":1}}}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var log bytes.Buffer
		Serve(bytes.NewReader(data), io.Discard, &log)
		if strings.Contains(log.String(), "panic") {
			t.Fatalf("the server panicked:\n%s", log.String())
		}
	})
}

// On any text, at any position, the features give an answer without
// panicking: diagnostics, hover, completion, definition, formatting.
func FuzzFeatures(f *testing.F) {
	f.Add(brokenPolicy, 14, 27)
	f.Add("policy \"o\"\nschema otlp\nset .a = .resource.\n", 2, 19)
	f.Add("policy \"p\"\nfor k, v in . {\n  let x = k\n  set .y = x.\n}\n", 3, 13)
	f.Add("policy \"p\"\nset .a = .b[\"c\"].\"d e\".\n", 1, 23)
	f.Add("set . = {\"a\": parse_url(.u).}\n", 0, 28)
	for _, name := range []string{"../examples/k8s/k8s.policy", "../examples/otlp/otlp.policy"} {
		if src, err := os.ReadFile(filepath.FromSlash(name)); err == nil {
			f.Add(string(src), 20, 12)
		}
	}
	f.Fuzz(func(t *testing.T, text string, line, char int) {
		if len(text) > 1<<14 {
			return
		}
		s := &server{w: &writer{w: io.Discard}, docs: map[string]*document{}}
		d := newDocument("file:///f.policy", 1, text)
		s.docs[d.uri] = d
		s.publish(d)
		off := d.offset(Position{line, char})
		s.hover(d, off)
		s.completion(d, off)
		s.definition(d, off)
		d.format()
		// Around the position too, where a name or a '.' is being typed.
		for _, o := range []int{off - 1, off + 1} {
			if o >= 0 && o <= len(text) && utf8.RuneStart(byte(at0(text, o))) {
				s.completion(d, o)
				s.hover(d, o)
			}
		}
	})
}

func at0(s string, i int) byte {
	if i >= len(s) {
		return 0
	}
	return s[i]
}
