package lsp

import "encoding/json"

// The LSP 3.17 types the server reads and writes, with the JSON names of
// the specification. Only the fields the server uses are declared: the
// decoder ignores the others.

// Position is a place in a document: a zero-based line and a zero-based
// character offset counted in UTF-16 code units (the positionEncoding
// "utf-16", which every client supports).
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is the span [Start, End) of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in the document at URI.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int32  `json:"version"`
	Text       string `json:"text"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int32  `json:"version"`
}

type didOpenParams struct {
	TextDocument textDocumentItem `json:"textDocument"`
}

// contentChange is one change of didChange: the whole text when Range is
// nil, else the text that replaces Range.
type contentChange struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

type didChangeParams struct {
	TextDocument   versionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                 `json:"contentChanges"`
}

type didCloseParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
}

// positionParams are the params of hover, completion and definition;
// formatting's are the same without the position.
type positionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// DiagnosticSeverity values.
const (
	severityError   = 1
	severityWarning = 2
)

// Diagnostic is one diagnostic as publishDiagnostics carries it. Message
// is the diagnostic's message, label and hint on three lines, as
// `policyrun check` prints them; Data holds the label and the hint apart,
// for clients that show them their own way.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity"`
	Code     string          `json:"code"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
	Data     *diagnosticData `json:"data,omitempty"`
}

type diagnosticData struct {
	Label string `json:"label,omitempty"`
	Hint  string `json:"hint,omitempty"`
}

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int32       `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

type markupContent struct {
	Kind  string `json:"kind"` // "markdown"
	Value string `json:"value"`
}

type hover struct {
	Contents markupContent `json:"contents"`
	Range    *Range        `json:"range,omitempty"`
}

// CompletionItemKind values.
const (
	kindFunction = 3
	kindField    = 5
	kindVariable = 6
	kindKeyword  = 14
	kindTypeName = 25 // TypeParameter: the language's type names
)

type completionItem struct {
	Label         string         `json:"label"`
	Kind          int            `json:"kind,omitempty"`
	Detail        string         `json:"detail,omitempty"`
	Documentation *markupContent `json:"documentation,omitempty"`
	SortText      string         `json:"sortText,omitempty"`
	FilterText    string         `json:"filterText,omitempty"`
	TextEdit      *textEdit      `json:"textEdit,omitempty"`
}

type completionList struct {
	IsIncomplete bool             `json:"isIncomplete"`
	Items        []completionItem `json:"items"`
}

type textEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

type initializeResult struct {
	Capabilities serverCapabilities `json:"capabilities"`
	ServerInfo   serverInfo         `json:"serverInfo"`
}

type serverInfo struct {
	Name string `json:"name"`
}

type serverCapabilities struct {
	PositionEncoding           string            `json:"positionEncoding"`
	TextDocumentSync           textDocumentSync  `json:"textDocumentSync"`
	HoverProvider              bool              `json:"hoverProvider"`
	CompletionProvider         completionOptions `json:"completionProvider"`
	DefinitionProvider         bool              `json:"definitionProvider"`
	DocumentFormattingProvider bool              `json:"documentFormattingProvider"`
}

type textDocumentSync struct {
	OpenClose bool `json:"openClose"`
	Change    int  `json:"change"` // 1: the whole text on every change
}

type completionOptions struct {
	TriggerCharacters []string `json:"triggerCharacters"`
}

// The JSON-RPC 2.0 messages.

// message is any incoming message: a request (ID and Method), a
// notification (Method, no ID) or a response (ID and Result or Error),
// which the server, sending no requests, ignores.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *ResponseError  `json:"error,omitempty"`
}

type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

// ResponseError is the error of a response.
type ResponseError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *ResponseError) Error() string { return e.Message }

// The error codes of JSON-RPC and LSP.
const (
	CodeParseError           = -32700
	CodeInvalidRequest       = -32600
	CodeMethodNotFound       = -32601
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
)
