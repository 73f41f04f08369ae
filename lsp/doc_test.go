package lsp

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// docs/lsp.md shows the messages a client sees for a broken policy: they
// are what the server sends.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile("../docs/lsp.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, rest, ok := strings.Cut(doc, "## What a client sees")
	if !ok {
		t.Fatal("docs/lsp.md has no section What a client sees")
	}
	block := func(fence string) string {
		t.Helper()
		_, after, ok := strings.Cut(rest, fence+"\n")
		if !ok {
			t.Fatalf("no %s block", fence)
		}
		body, after, _ := strings.Cut(after, "\n```\n")
		rest = after
		return body + "\n"
	}
	src := block("```")
	want := block("```json")

	c := startServer(t)
	c.initialize()
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": "file:///work/checkout.policy", "languageId": "policy", "version": 1, "text": src}})
	m := c.notification("textDocument/publishDiagnostics")
	got, _ := json.Marshal(m)
	var g, w any
	json.Unmarshal(got, &g)
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("the doc's JSON: %v", err)
	}
	delete(g.(map[string]any), "id")
	delete(g.(map[string]any), "result")
	delete(g.(map[string]any), "error")
	if !reflect.DeepEqual(g, w) {
		t.Errorf("the server sends\n%s\nthe doc shows\n%s", got, want)
	}
}
