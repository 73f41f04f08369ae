package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/internal/testkit/lspwire"
)

// policyrun lsp as an editor starts it: a child process spoken to over
// its standard input and output. A broken policy gets its diagnostic,
// shutdown and exit end the process with status 0.
func TestLSPProcess(t *testing.T) {
	needChildProcess(t)
	cmd := cliCommand(t.TempDir(), "lsp")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	send := func(v any) {
		b, _ := json.Marshal(v)
		io.WriteString(stdin, lspwire.Frame(string(b)))
	}
	r := bufio.NewReader(stdout)
	read := func() map[string]any {
		body, err := lspwire.Read(r)
		if err != nil {
			t.Fatalf("reading: %v (stderr %s)", err, stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return m
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"capabilities": map[string]any{}}})
	if m := read(); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	send(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///p.policy", "languageId": "policy", "version": 1,
			"text": "policy \"p\"\nschema {\n  status: int\n}\ndrop when .status == \"500\"\n"}}})
	m := read()
	b, _ := json.Marshal(m)
	if m["method"] != "textDocument/publishDiagnostics" || !strings.Contains(string(b), `"code":"E0301"`) ||
		!strings.Contains(string(b), `"range":{"end":{"character":26,"line":4},"start":{"character":10,"line":4}}`) {
		t.Errorf("diagnostics: %s", b)
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
	if m := read(); m["id"] != 2.0 {
		t.Errorf("shutdown: %v", m)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("policyrun lsp: %v (stderr %s)", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("policyrun lsp did not exit")
	}
}

func TestLSPUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"lsp", "extra"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("lsp extra: exit %d", code)
	}
	// The input ending before exit is exit status 1.
	if code := run([]string{"lsp", "--stdio"}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("lsp with no input: exit %d", code)
	}
}
