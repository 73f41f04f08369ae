// Package lsp is the language server of the policy language (LSP 3.17
// over stdio, `policyrun lsp`): diagnostics as `policyrun check` reports
// them, hover, completion, formatting and go to definition
// (docs/lsp.md).
package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"unicode/utf8"

	"github.com/policyrun/policyrun/compiler/diag"
)

// ErrNoShutdown is what Serve returns when the client sent exit without
// shutdown before it: the server's exit status is then 1.
var ErrNoShutdown = errors.New("exit before shutdown")

// ErrClosed is what Serve returns when its input ends before exit.
var ErrClosed = errors.New("the input ended before exit")

// Serve runs a server reading messages from in and writing them to out
// until the client's exit notification, then returns: nil when shutdown
// came first, ErrNoShutdown when it did not, ErrClosed when in ends
// first, and another error when out fails or the input breaks off in the
// middle of a message. Problems with single messages (bad headers, bad
// JSON, unknown methods) are answered or logged to log, and the server
// goes on.
func Serve(in io.Reader, out io.Writer, log io.Writer) error {
	s := &server{w: &writer{w: out}, log: log, docs: map[string]*document{}}
	r := newReader(in)
	for {
		body, err := readMessage(r)
		var fe *framingError
		switch {
		case errors.As(err, &fe):
			s.logf("%v", err)
			continue
		case err == io.EOF:
			return ErrClosed
		case err != nil:
			return err
		}
		s.handle(body)
		if s.werr != nil {
			return s.werr
		}
		if s.exited {
			return s.exitErr
		}
	}
}

type state int

const (
	stateNew      state = iota // before initialize
	stateRunning               // after initialize
	stateShutdown              // after shutdown
)

type server struct {
	w     *writer
	werr  error // the first error writing out
	log   io.Writer
	state state
	docs  map[string]*document

	exited  bool
	exitErr error
}

func (s *server) logf(format string, args ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, "policyrun lsp: "+format+"\n", args...)
	}
}

func (s *server) send(v any) {
	if s.werr != nil {
		return
	}
	if err := s.w.write(v); err != nil {
		s.werr = err
	}
}

func (s *server) reply(id json.RawMessage, result any, rerr *ResponseError) {
	resp := response{JSONRPC: "2.0", ID: id, Error: rerr}
	if len(resp.ID) == 0 {
		resp.ID = json.RawMessage("null")
	}
	if rerr == nil {
		b, err := json.Marshal(result)
		if err != nil {
			resp.Error = errorf(CodeInternalError, "cannot encode the result: %v", err)
		} else {
			resp.Result = b
		}
	}
	s.send(resp)
}

func (s *server) notify(method string, params any) {
	s.send(notification{JSONRPC: "2.0", Method: method, Params: params})
}

// A requestHandler answers a request with a result or an error.
type requestHandler func(s *server, params json.RawMessage) (any, *ResponseError)

// A notificationHandler acts on a notification.
type notificationHandler func(s *server, params json.RawMessage)

var requests = map[string]requestHandler{
	"initialize":              (*server).initialize,
	"shutdown":                (*server).shutdown,
	"textDocument/hover":      withPosition((*server).hover),
	"textDocument/completion": withPosition((*server).completion),
	"textDocument/definition": withPosition((*server).definition),
	"textDocument/formatting": withDocument(func(_ *server, d *document, _ Position) any { return d.format() }),
}

var notifications = map[string]notificationHandler{
	"initialized":            func(*server, json.RawMessage) {},
	"exit":                   (*server).exit,
	"textDocument/didOpen":   (*server).didOpen,
	"textDocument/didChange": (*server).didChange,
	"textDocument/didClose":  (*server).didClose,
}

// handle handles one message body. A panic in a handler (which is a bug)
// is logged and answered with InternalError: the server goes on.
func (s *server) handle(body []byte) {
	m, rerr := decodeMessage(body)
	if rerr != nil {
		s.reply(nil, nil, rerr)
		return
	}
	isRequest := len(m.ID) > 0
	if m.Method == "" {
		if isRequest && (len(m.Result) > 0 || len(m.Error) > 0) {
			return // a response: the server sends no requests
		}
		s.reply(validIDOrNull(m.ID), nil, errorf(CodeInvalidRequest, "the message has no method"))
		return
	}
	if isRequest && !validID(m.ID) {
		s.reply(nil, nil, errorf(CodeInvalidRequest, "the id %s is neither a number nor a string", clip(string(m.ID))))
		return
	}
	if m.JSONRPC != "2.0" {
		if isRequest {
			s.reply(m.ID, nil, errorf(CodeInvalidRequest, `jsonrpc is %q, not "2.0"`, clip(m.JSONRPC)))
		} else {
			s.logf("notification %s: jsonrpc is not \"2.0\"", clip(m.Method))
		}
		return
	}
	defer func() {
		if p := recover(); p != nil {
			s.logf("internal error: panic in %s: %v\n%s", m.Method, p, debug.Stack())
			if isRequest {
				s.reply(m.ID, nil, errorf(CodeInternalError, "internal error in %s", m.Method))
			}
		}
	}()
	if !isRequest {
		h := notifications[m.Method]
		switch {
		case h == nil:
			// Unknown notifications ($/cancelRequest, $/setTrace,
			// didSave, ...) are ignored, as the specification asks.
		case s.state == stateNew && m.Method != "exit":
			// Before initialize, notifications are dropped.
		default:
			h(s, m.Params)
		}
		return
	}
	h := requests[m.Method]
	switch {
	case h == nil:
		s.reply(m.ID, nil, errorf(CodeMethodNotFound, "method %s is not supported", clip(m.Method)))
	case s.state == stateNew && m.Method != "initialize":
		s.reply(m.ID, nil, errorf(CodeServerNotInitialized, "the server is not initialized: send initialize first"))
	case s.state == stateShutdown:
		s.reply(m.ID, nil, errorf(CodeInvalidRequest, "the server is shut down: only exit is left"))
	default:
		result, rerr := h(s, m.Params)
		s.reply(m.ID, result, rerr)
	}
}

func validIDOrNull(id json.RawMessage) json.RawMessage {
	if validID(id) {
		return id
	}
	return nil
}

// decodeParams decodes the params of a request into v.
func decodeParams(params json.RawMessage, v any) *ResponseError {
	if len(params) == 0 || string(params) == "null" {
		return errorf(CodeInvalidParams, "the request has no params")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return errorf(CodeInvalidParams, "bad params: %v", err)
	}
	return nil
}

func (s *server) initialize(json.RawMessage) (any, *ResponseError) {
	if s.state != stateNew {
		return nil, errorf(CodeInvalidRequest, "initialize was sent twice")
	}
	s.state = stateRunning
	return initializeResult{
		Capabilities: serverCapabilities{
			PositionEncoding:           "utf-16",
			TextDocumentSync:           textDocumentSync{OpenClose: true, Change: 1},
			HoverProvider:              true,
			CompletionProvider:         completionOptions{TriggerCharacters: []string{".", "%"}},
			DefinitionProvider:         true,
			DocumentFormattingProvider: true,
		},
		ServerInfo: serverInfo{Name: "policyrun"},
	}, nil
}

func (s *server) shutdown(json.RawMessage) (any, *ResponseError) {
	s.state = stateShutdown
	return nil, nil
}

func (s *server) exit(json.RawMessage) {
	s.exited = true
	if s.state != stateShutdown {
		s.exitErr = ErrNoShutdown
	}
}

func (s *server) didOpen(params json.RawMessage) {
	var p didOpenParams
	if err := decodeParams(params, &p); err != nil || p.TextDocument.URI == "" {
		s.logf("didOpen: bad params")
		return
	}
	d := newDocument(p.TextDocument.URI, p.TextDocument.Version, p.TextDocument.Text)
	d.read = s.readFile
	s.docs[d.uri] = d
	s.publish(d)
}

func (s *server) didChange(params json.RawMessage) {
	var p didChangeParams
	if err := decodeParams(params, &p); err != nil {
		s.logf("didChange: bad params")
		return
	}
	d := s.docs[p.TextDocument.URI]
	if d == nil {
		s.logf("didChange: %s is not open", clip(p.TextDocument.URI))
		return
	}
	for _, c := range p.ContentChanges {
		d.apply(c)
	}
	d.version = p.TextDocument.Version
	s.publish(d)
}

func (s *server) didClose(params json.RawMessage) {
	var p didCloseParams
	if err := decodeParams(params, &p); err != nil {
		return
	}
	if _, ok := s.docs[p.TextDocument.URI]; !ok {
		return
	}
	delete(s.docs, p.TextDocument.URI)
	// A closed file's diagnostics go with it.
	s.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{URI: p.TextDocument.URI, Diagnostics: []Diagnostic{}})
}

// publish sends the diagnostics of d: every one `policyrun check` reports.
func (s *server) publish(d *document) {
	version := d.version
	s.notify("textDocument/publishDiagnostics", publishDiagnosticsParams{
		URI:         d.uri,
		Version:     &version,
		Diagnostics: d.diagnostics(d.analysis().diags),
	})
}

// diagnostics converts the checker's diagnostics to LSP's.
func (d *document) diagnostics(ds diag.List) []Diagnostic {
	out := make([]Diagnostic, 0, len(ds))
	for _, dg := range ds {
		from, to := dg.Pos.Offset, dg.End.Offset
		if !dg.End.IsValid() || to < from {
			to = from
		}
		if to == from && from < len(d.text) && d.text[from] != '\n' && d.text[from] != '\r' {
			// An empty span is shown under one character, as check's
			// one caret.
			_, size := utf8.DecodeRuneInString(d.text[from:])
			to = from + size
		}
		sev := severityError
		if dg.Severity == diag.Warning {
			sev = severityWarning
		}
		msg := dg.Msg
		if dg.Label != "" {
			msg += "\n" + dg.Label
		}
		if dg.Hint != "" {
			msg += "\nhelp: " + dg.Hint
		}
		var data *diagnosticData
		if dg.Label != "" || dg.Hint != "" {
			data = &diagnosticData{Label: dg.Label, Hint: dg.Hint}
		}
		out = append(out, Diagnostic{
			Range: d.rangeOf(from, to), Severity: sev, Code: dg.Code,
			Source: "policyrun", Message: msg, Data: data,
		})
	}
	return out
}

// withDocument decodes the params of a request about an open document,
// and its position when it has one; a document that is not open has
// nothing to say (null).
func withDocument(h func(*server, *document, Position) any) requestHandler {
	return func(s *server, params json.RawMessage) (any, *ResponseError) {
		var p positionParams
		if err := decodeParams(params, &p); err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, nil
		}
		return h(s, d, p.Position), nil
	}
}

// withPosition is withDocument for a request at a position, which h
// takes as an offset in the document.
func withPosition(h func(*server, *document, int) any) requestHandler {
	return withDocument(func(s *server, d *document, pos Position) any { return h(s, d, d.offset(pos)) })
}
