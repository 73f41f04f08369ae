package lsp

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/lspwire"
	"github.com/policyrun/policyrun/internal/testkit/testsync"
)

// A client is the editor's end of a session with an in-process server:
// it writes Content-Length framed JSON-RPC to the server's standard input
// and reads what the server writes to its standard output, over pipes.
type client struct {
	t      *testing.T
	in     *io.PipeWriter // the server's stdin
	msgs   chan rawMsg    // what the server writes, message by message
	queue  []wireMsg      // notifications read while waiting for a response
	nextID int
	done   chan error // Serve's result
	log    *testsync.Buffer
}

type rawMsg struct {
	body []byte
	err  error
}

// wireMsg is a message as the client reads it: the server's message with
// its error decoded.
type wireMsg struct {
	message
	Error *ResponseError `json:"error"`
}

func startServer(t *testing.T) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, msgs: make(chan rawMsg, 100), done: make(chan error, 1), log: &testsync.Buffer{}}
	go func() {
		err := Serve(inR, outW, c.log)
		inR.Close()
		outW.Close()
		c.done <- err
	}()
	go func() {
		r := bufio.NewReader(outR)
		for {
			body, err := lspwire.Read(r)
			c.msgs <- rawMsg{body: body, err: err}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		c.in.Close()
		if t.Failed() {
			t.Logf("server log:\n%s", c.log.String())
		}
	})
	return c
}

// writeRaw writes one framed message with the body as it is.
func (c *client) writeRaw(body string) {
	c.t.Helper()
	c.writeBytes(lspwire.Frame(body))
}

// writeBytes writes bytes as they are: framing errors included.
func (c *client) writeBytes(s string) {
	c.t.Helper()
	errc := make(chan error, 1)
	go func() { _, err := io.WriteString(c.in, s); errc <- err }()
	select {
	case err := <-errc:
		if err != nil {
			c.t.Fatalf("write: %v", err)
		}
	case <-time.After(10 * time.Second):
		c.t.Fatal("the server does not read its input")
	}
}

func (c *client) write(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.writeRaw(string(b))
}

// read returns the next message the server writes.
func (c *client) read() wireMsg {
	c.t.Helper()
	select {
	case m := <-c.msgs:
		if m.err != nil {
			c.t.Fatalf("reading the server's output: %v", m.err)
		}
		var w wireMsg
		if err := json.Unmarshal(m.body, &w); err != nil {
			c.t.Fatalf("the server wrote %q: %v", m.body, err)
		}
		if w.JSONRPC != "2.0" {
			c.t.Fatalf("the server wrote %s without jsonrpc 2.0", m.body)
		}
		return w
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message from the server in 10s")
	}
	panic("unreachable")
}

// call sends a request and returns its response; notifications that come
// first are queued for notification.
func (c *client) call(method string, params any) wireMsg {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return c.response(strconv.Itoa(id))
}

// response reads up to the response with the given id (as JSON).
func (c *client) response(id string) wireMsg {
	c.t.Helper()
	for {
		m := c.read()
		if m.Method != "" {
			c.queue = append(c.queue, m)
			continue
		}
		if string(m.ID) != id {
			c.t.Fatalf("response to %s, want one to %s", m.ID, id)
		}
		return m
	}
}

// result calls and decodes the result into v, failing on an error.
func (c *client) result(method string, params any, v any) {
	c.t.Helper()
	m := c.call(method, params)
	if m.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, m.Error.Code, m.Error.Message)
	}
	if v != nil {
		if err := json.Unmarshal(m.Result, v); err != nil {
			c.t.Fatalf("%s: result %s: %v", method, m.Result, err)
		}
	}
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// notification returns the next notification of method.
func (c *client) notification(method string) wireMsg {
	c.t.Helper()
	for {
		var m wireMsg
		if len(c.queue) > 0 {
			m, c.queue = c.queue[0], c.queue[1:]
		} else {
			m = c.read()
		}
		if m.Method == method {
			return m
		}
		if m.Method == "" {
			c.t.Fatalf("unexpected response %s while waiting for %s", m.ID, method)
		}
	}
}

// wait returns what Serve returned.
func (c *client) wait() error {
	c.t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(10 * time.Second):
		c.t.Fatal("the server did not exit")
	}
	return nil
}

func (c *client) initialize() {
	c.t.Helper()
	var res initializeResult
	c.result("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}}, &res)
	c.notify("initialized", map[string]any{})
}

func (c *client) open(uri, text string) []Diagnostic {
	c.t.Helper()
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "policy", "version": 1, "text": text}})
	return c.diagnostics(uri)
}

func (c *client) diagnostics(uri string) []Diagnostic {
	c.t.Helper()
	m := c.notification("textDocument/publishDiagnostics")
	var p publishDiagnosticsParams
	if err := json.Unmarshal(m.Params, &p); err != nil {
		c.t.Fatal(err)
	}
	if p.URI != uri {
		c.t.Fatalf("diagnostics of %s, want %s", p.URI, uri)
	}
	if p.Diagnostics == nil {
		c.t.Fatalf("publishDiagnostics without a diagnostics array: %s", m.Params)
	}
	return p.Diagnostics
}

func at(uri string, line, char int) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Position{line, char}}
}
