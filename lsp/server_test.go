package lsp

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

const brokenPolicy = `policy "checkout"

schema {
  status: int
  msg: string
  kubernetes: {
    pod_name: string
    labels: map<string>
    ...
  }
  ...
}

let app = .kubernetes.labels["app"] ?? "none"
drop when .msg == "😀" || .status == "500"
set .app = upper(app)
for k, v in .kubernetes.labels {
  set .last = k
}
`

// The whole session a client has with the server: initialize, a broken
// policy's diagnostics, the fix, hover, completion, formatting,
// definition, shutdown and exit.
func TestSession(t *testing.T) {
	c := startServer(t)
	const uri = "file:///work/checkout.policy"

	var init initializeResult
	c.result("initialize", map[string]any{"processId": 1, "capabilities": map[string]any{}}, &init)
	caps := init.Capabilities
	if caps.PositionEncoding != "utf-16" || caps.TextDocumentSync.Change != 1 || !caps.HoverProvider ||
		!caps.DefinitionProvider || !caps.DocumentFormattingProvider || !slices.Contains(caps.CompletionProvider.TriggerCharacters, ".") {
		t.Errorf("capabilities %+v", caps)
	}
	c.notify("initialized", map[string]any{})

	// didOpen with a broken policy: the diagnostic check reports, its
	// range in UTF-16 (the emoji before it is two code units, four bytes).
	ds := c.open(uri, brokenPolicy)
	if len(ds) != 1 {
		t.Fatalf("diagnostics %+v, want one", ds)
	}
	d := ds[0]
	want := Range{Start: Position{14, 26}, End: Position{14, 42}}
	if d.Code != "E0301" || d.Severity != severityError || d.Range != want || d.Source != "policyrun" {
		t.Errorf("diagnostic %+v, want E0301 error at %+v", d, want)
	}
	if !strings.Contains(d.Message, "cannot compare int with string") || !strings.Contains(d.Message, "help: compare with the number 500") ||
		d.Data == nil || !strings.HasPrefix(d.Data.Hint, "compare with the number 500") || d.Data.Label != ".status is int (declared at line 4)" {
		t.Errorf("diagnostic message %q, data %+v", d.Message, d.Data)
	}

	// didChange fixing it (a whole-text change, as the server asks, then
	// an incremental one): no diagnostics left.
	fixed := strings.Replace(brokenPolicy, `.status == "500"`, `.status == 500`, 1)
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []map[string]any{{"text": strings.Replace(brokenPolicy, `"500"`, `"50"`, 1)}},
	})
	if ds := c.diagnostics(uri); len(ds) != 1 {
		t.Fatalf("after the first change: %+v", ds)
	}
	c.notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": uri, "version": 3},
		"contentChanges": []map[string]any{{
			"range": Range{Start: Position{14, 37}, End: Position{14, 41}}, "text": "500"}},
	})
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("after the fix: %+v", ds)
	}

	// Hover: a path, a local, a built-in, an expression, a schema field.
	hoverAt := func(line, char int) string {
		t.Helper()
		var h *hover
		c.result("textDocument/hover", at(uri, line, char), &h)
		if h == nil {
			return ""
		}
		if h.Contents.Kind != "markdown" {
			t.Errorf("hover kind %q", h.Contents.Kind)
		}
		return h.Contents.Value
	}
	for _, tc := range []struct {
		line, char int
		want       []string
	}{
		{14, 27, []string{".status: int", "declared at line 4"}},                    // .status
		{13, 24, []string{".kubernetes.labels: map<string>", "declared at line 8"}}, // labels
		{13, 5, []string{"let app: string"}},                                        // app, declared
		{15, 18, []string{"app: string", "declared at line 14"}},                    // app, used
		{15, 12, []string{builtin.Lookup("upper").Sig, builtin.Lookup("upper").Doc}},
		{14, 23, []string{`.msg == "😀" || .status == 500: bool`}}, // the ||
		{3, 3, []string{"status: int"}},                           // the schema's line
		{17, 14, []string{"k: string", "the key of the for at line 17"}},
	} {
		got := hoverAt(tc.line, tc.char)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("hover at %d:%d = %q, want %q in it", tc.line, tc.char, got, w)
			}
		}
	}
	if got := hoverAt(0, 0); got != "" {
		t.Errorf("hover on the keyword policy = %q, want none", got)
	}

	// Definition: a local goes to its let, a field to its schema line.
	defAt := func(line, char int) []Location {
		t.Helper()
		var locs []Location
		c.result("textDocument/definition", at(uri, line, char), &locs)
		return locs
	}
	if locs := defAt(15, 18); len(locs) != 1 || locs[0].URI != uri || locs[0].Range != (Range{Position{13, 4}, Position{13, 7}}) {
		t.Errorf("definition of app = %+v, want 13:4-13:7", locs)
	}
	if locs := defAt(14, 29); len(locs) != 1 || locs[0].Range != (Range{Position{3, 2}, Position{3, 8}}) {
		t.Errorf("definition of .status = %+v, want 3:2-3:8", locs)
	}
	if locs := defAt(13, 24); len(locs) != 1 || locs[0].Range != (Range{Position{7, 4}, Position{7, 10}}) {
		t.Errorf("definition of .kubernetes.labels = %+v, want 7:4-7:10", locs)
	}
	if locs := defAt(17, 14); len(locs) != 1 || locs[0].Range != (Range{Position{16, 4}, Position{16, 5}}) {
		t.Errorf("definition of k = %+v, want 16:4-16:5", locs)
	}

	// Completion: type ".kubernetes." on a new line, then a name.
	change := func(version int, text string) {
		t.Helper()
		c.notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": version},
			"contentChanges": []map[string]any{{"text": text}},
		})
		c.diagnostics(uri)
	}
	labels := func(line, char int) []string {
		t.Helper()
		var list completionList
		c.result("textDocument/completion", at(uri, line, char), &list)
		var out []string
		for _, it := range list.Items {
			out = append(out, it.Label)
		}
		return out
	}
	change(4, fixed+"set .x = .kubernetes.\n")
	if got := labels(19, 21); !slices.Equal(got, []string{"pod_name", "labels"}) {
		t.Errorf("completion after .kubernetes. = %v", got)
	}
	change(5, fixed+"set .x = .\n")
	if got := labels(19, 10); !slices.Equal(got, []string{"status", "msg", "kubernetes", "app", "last"}) {
		t.Errorf("completion after . = %v", got)
	}
	change(6, fixed+"set .x = a\n")
	got := labels(19, 10)
	for _, w := range []string{"app", "upper", "parse_json", "drop", "when", "null"} {
		if !slices.Contains(got, w) {
			t.Errorf("completion of a name lacks %q: %v", w, got)
		}
	}
	if slices.Contains(got, "k") {
		t.Errorf("completion outside the for offers its k: %v", got)
	}

	// Formatting: one edit of the whole document, to fmt's layout.
	messy := "policy   \"p\"\nschema {\n  a: int\n}\nset .b = .a+1\n"
	change(7, messy)
	var edits []textEdit
	c.result("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri},
		"options": map[string]any{"tabSize": 2, "insertSpaces": true}}, &edits)
	canon, err := policy.FormatSource("p", []byte(messy))
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) != 1 || edits[0].NewText != string(canon) || edits[0].Range != (Range{Position{0, 0}, Position{5, 0}}) {
		t.Errorf("formatting edits %+v, want the whole text as\n%s", edits, canon)
	}

	// Shutdown, then exit: Serve returns nil (exit status 0).
	m := c.call("shutdown", nil)
	if m.Error != nil || string(m.Result) != "null" {
		t.Errorf("shutdown: %+v, result %s", m.Error, m.Result)
	}
	if m := c.call("textDocument/hover", at(uri, 0, 0)); m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Errorf("hover after shutdown: %+v", m.Error)
	}
	c.notify("exit", nil)
	if err := c.wait(); err != nil {
		t.Errorf("Serve after shutdown and exit: %v", err)
	}
}

// For schema otlp, completion offers the OTLP view's keys, through the
// checker's type of the record.
func TestCompletionOTLP(t *testing.T) {
	c := startServer(t)
	c.initialize()
	const uri = "file:///o.policy"
	src := "policy \"o\"\n\nschema otlp {\n  attributes: {\n    \"http.route\": string?\n    ...\n  }\n}\n\nset .attributes.x = .resource.\nset .y = .attributes.\n"
	c.open(uri, src)
	var list completionList
	c.result("textDocument/completion", at(uri, 9, 30), &list)
	var got []string
	for _, it := range list.Items {
		got = append(got, it.Label)
	}
	if !slices.Equal(got, []string{"attributes", "dropped_attributes_count", "schema_url"}) {
		t.Errorf("completion after .resource. = %v", got)
	}
	c.result("textDocument/completion", at(uri, 10, 21), &list)
	if len(list.Items) == 0 || list.Items[0].Label != "http.route" || list.Items[0].TextEdit.NewText != `"http.route"` {
		t.Errorf("completion after .attributes. = %+v", list.Items)
	}
	c.result("textDocument/completion", at(uri, 10, 10), &list)
	got = got[:0]
	for _, it := range list.Items {
		got = append(got, it.Label)
	}
	for _, w := range []string{"body", "severity_number", "trace_id", "resource", "scope"} {
		if !slices.Contains(got, w) {
			t.Errorf("completion after . lacks the view's %s: %v", w, got)
		}
	}
}

// Bad input gets the errors JSON-RPC and LSP define, and the server goes
// on: bad JSON, no jsonrpc, unknown methods, requests before initialize,
// bad params, a header without Content-Length.
func TestBadInput(t *testing.T) {
	c := startServer(t)

	expectError := func(what string, code int) {
		t.Helper()
		m := c.read()
		if m.Error == nil || m.Error.Code != code {
			t.Errorf("%s: got %+v, want error %d", what, m, code)
		}
	}
	c.writeRaw(`{"jsonrpc":"2.0","id":1,"method":`)
	expectError("truncated JSON", CodeParseError)
	c.writeRaw(`[1, 2]`)
	expectError("a batch", CodeInvalidRequest)
	c.writeRaw(`{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}`)
	expectError("an object id", CodeInvalidRequest)
	c.writeRaw(`{"jsonrpc":"2.0","id":2,"method":7}`)
	expectError("a number method", CodeInvalidRequest)
	c.writeRaw(`{"id":3,"method":"initialize"}`)
	expectError("no jsonrpc", CodeInvalidRequest)

	if m := c.call("textDocument/hover", at("file:///x", 0, 0)); m.Error == nil || m.Error.Code != CodeServerNotInitialized {
		t.Errorf("hover before initialize: %+v", m.Error)
	}
	// A notification before initialize is dropped: no diagnostics.
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file:///x", "text": "x"}})

	// A header block without Content-Length is skipped.
	c.writeBytes("Content-Type: application/json\r\n\r\n")
	c.writeBytes("garbage\r\n\r\n")
	c.initialize()

	if m := c.call("initialize", map[string]any{}); m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Errorf("second initialize: %+v", m.Error)
	}
	if m := c.call("workspace/symbol", map[string]any{"query": ""}); m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Errorf("unknown method: %+v", m.Error)
	}
	if m := c.call("initialized", nil); m.Error == nil || m.Error.Code != CodeMethodNotFound {
		t.Errorf("a notification's method as a request: %+v", m.Error)
	}
	if m := c.call("textDocument/hover", "nonsense"); m.Error == nil || m.Error.Code != CodeInvalidParams {
		t.Errorf("bad params: %+v", m.Error)
	}
	if m := c.call("textDocument/hover", nil); m.Error == nil || m.Error.Code != CodeInvalidParams {
		t.Errorf("no params: %+v", m.Error)
	}
	if m := c.call("textDocument/hover", at("file:///not-open", 3, 4)); m.Error != nil || string(m.Result) != "null" {
		t.Errorf("hover in a document not open: %+v %s", m.Error, m.Result)
	}
	// Unknown notifications, and responses from the client, are ignored.
	c.notify("$/cancelRequest", map[string]any{"id": 1})
	c.notify("workspace/didChangeConfiguration", map[string]any{})
	c.writeRaw(`{"jsonrpc":"2.0","id":99,"result":null}`)
	// A string id is answered with the same id.
	c.writeRaw(`{"jsonrpc":"2.0","id":"s1","method":"shutdown"}`)
	if m := c.response(`"s1"`); m.Error != nil {
		t.Errorf("shutdown with a string id: %+v", m.Error)
	}
	c.notify("exit", nil)
	if err := c.wait(); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if strings.Contains(c.log.String(), "panic") {
		t.Errorf("the server panicked:\n%s", c.log.String())
	}
}

// exit without shutdown ends the server with ErrNoShutdown (exit status
// 1), and the end of the input with ErrClosed.
func TestExit(t *testing.T) {
	c := startServer(t)
	c.initialize()
	c.notify("exit", nil)
	if err := c.wait(); !errors.Is(err, ErrNoShutdown) {
		t.Errorf("exit without shutdown: %v", err)
	}

	c = startServer(t)
	c.initialize()
	c.in.Close()
	if err := c.wait(); !errors.Is(err, ErrClosed) {
		t.Errorf("input closed: %v", err)
	}
}

// Every diagnostic is the one compiler.Diagnose gives: a syntax error and
// a type error on another line, and a warning.
func TestDiagnosticsLikeCheck(t *testing.T) {
	c := startServer(t)
	c.initialize()
	src := "policy \"p\"\nschema {\n  n: int\n}\ndrop when .n == \"x\"\nset .a = (\n"
	ds := c.open("file:///p.policy", src)
	var codes []string
	for _, d := range ds {
		codes = append(codes, d.Code)
	}
	if len(ds) != 2 || !strings.HasPrefix(codes[0], "E03") || ds[0].Range.Start.Line != 4 || ds[1].Range.Start.Line != 6 {
		t.Errorf("diagnostics %+v", ds)
	}
	b, _ := json.Marshal(ds)
	if !strings.Contains(string(b), `"code":"E0`) {
		t.Errorf("codes are not strings: %s", b)
	}
	// Closing the document clears its diagnostics.
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file:///p.policy"}})
	if ds := c.diagnostics("file:///p.policy"); len(ds) != 0 {
		t.Errorf("after didClose: %+v", ds)
	}
}
