// Package playground is what the playground page runs in the browser: one
// pure function, Run, from a policy's source and input records (JSON lines)
// to its diagnostics and the records it leaves. The page calls it through
// the WebAssembly build of package playground/wasm; package playground/web
// serves the page (docs/playground.md).
//
// Run does what `policyrun check` and `policyrun eval --policy FILE` do
// together, on the VM: the same diagnostics, the same output lines.
package playground

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/vm"
)

// Filename is the name the policy has in diagnostics.
const Filename = "playground.policy"

// Result is what Run makes of a policy and its input. It is encoded as
// JSON for the page.
type Result struct {
	// Name is the policy's name; OTLP says it is declared with `schema
	// otlp`, so that its input lines are OTLP views (docs/otlp.md).
	Name string `json:"name"`
	OTLP bool   `json:"otlp"`
	// Diagnostics are every error and warning, sorted, as `policyrun check`
	// reports them; Text is them rendered as check prints them (with the
	// source line and carets).
	Diagnostics []Diagnostic `json:"diagnostics"`
	Text        string       `json:"text"`
	// Ran says the policy had no errors and ran over the input.
	Ran bool `json:"ran"`
	// Records are the outcomes of the input lines, one per line that is not
	// blank; Output is what `policyrun eval` writes: the kept records (and
	// the malformed lines, passed through), one JSON line each.
	Records []Outcome `json:"records"`
	Output  []string  `json:"output"`
	// Summary is eval's summary line: "3 in, 2 out, 1 dropped, 0 faulted".
	Summary string `json:"summary"`
	// Error is set when Run itself failed (a bug: it says where).
	Error string `json:"error,omitempty"`
}

// Diagnostic is one error or warning about the policy.
type Diagnostic struct {
	// File is the file it is in: Filename, or a module's name.
	File     string `json:"file"`
	Severity string `json:"severity"` // "error" or "warning"
	Code     string `json:"code"`     // E0301, W0001: docs/language.md lists them
	// Line and Col are where it starts, EndLine and EndCol where it ends
	// (exclusive), counted from 1 as check counts them (Col in bytes).
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	EndLine int    `json:"endLine"`
	EndCol  int    `json:"endCol"`
	Message string `json:"message"`
	Label   string `json:"label,omitempty"`
	Hint    string `json:"hint,omitempty"`
	// From and To are the span as offsets into the policy in UTF-16 code
	// units, as a browser's textarea counts them, to select it there.
	From int `json:"from"`
	To   int `json:"to"`
}

// Outcome is what became of one input line.
type Outcome struct {
	Line int `json:"line"` // the input line, from 1
	// Action is "keep" or "drop"; "pass" for a malformed line, which is
	// passed through unchanged as eval does.
	Action string `json:"action"`
	// Fault is why the run faulted (spec.Reason: "type_mismatch",
	// "limit", …), when it did: the record is then left as it came in, and
	// kept unless the policy says on_fault drop.
	Fault string `json:"fault,omitempty"`
	// Output is the record as it leaves, a JSON line, when kept.
	Output string `json:"output,omitempty"`
	// Error says why a malformed line does not decode.
	Error string `json:"error,omitempty"`
}

// Run checks policy, compiles it for the VM and, when it has no errors,
// runs it over input: one record per line that is not blank, in JSON (the
// OTLP view for a policy with `schema otlp`), with no tag and the time
// 1970-01-01T00:00:00Z unless the record carries one, as eval reads them.
// Run never panics: a panic inside is returned in Result.Error.
func Run(policySrc, input string) Result { return RunFiles(policySrc, input, nil, "") }

// RunFiles is Run with modules the policy may import, by file name
// (import "pii.policy"), and parameters' values, one name=value a line as
// eval's --param takes them (JSON for arrays and maps). A diagnostic of a
// module says its file in Diagnostic.File.
func RunFiles(policySrc, input string, modules map[string]string, params string) (res Result) {
	defer func() {
		if p := recover(); p != nil {
			res.Error = fmt.Sprintf("internal error: %v\n%s", p, debug.Stack())
		}
	}()
	res.Diagnostics = []Diagnostic{}
	res.Records = []Outcome{}
	res.Output = []string{}
	src := []byte(policySrc)
	// Every diagnostic, as `policyrun check` reports them (one
	// compiler.Analyze), and the program when there are no errors.
	read := func(name string) ([]byte, error) {
		if m, ok := modules[name]; ok {
			return []byte(m), nil
		}
		return nil, fmt.Errorf("no file %s: the playground has the policy and the module tab", name)
	}
	opts := []compiler.Option{compiler.WithFiles(read)}
	if ps, err := parseParams(params); err != nil {
		res.Error = err.Error()
		return res
	} else {
		// Bound, as eval binds them: a parameter without a value or a
		// default is an error (E0610), not a policy left unrun.
		opts = append(opts, compiler.WithParams(ps))
	}
	an := compiler.Analyze(Filename, src, opts...)
	ds := an.Diagnostics
	if an.File != nil {
		res.Name, res.OTLP = an.File.Name, an.File.IsOTLP()
	}
	if an.Program != nil {
		res.Ran = true
		runRecords(&res, an.Program, input)
	}
	var text strings.Builder
	diag.WriteText(&text, src, ds)
	res.Text = text.String()
	for _, d := range ds {
		end := d.End
		if !end.IsValid() || end.Offset < d.Pos.Offset {
			end = d.Pos
		}
		text := src
		if d.Source != "" {
			text = []byte(d.Source)
		}
		res.Diagnostics = append(res.Diagnostics, Diagnostic{
			File:     d.Filename,
			Severity: d.Severity.String(), Code: d.Code,
			Line: d.Pos.Line, Col: d.Pos.Col, EndLine: end.Line, EndCol: end.Col,
			Message: d.Msg, Label: d.Label, Hint: d.Hint,
			From: utf16Offset(text, d.Pos.Offset), To: utf16Offset(text, end.Offset),
		})
	}
	return res
}

// runRecords runs prog over the lines of input, as eval's JSON input does:
// a line a split makes several records of has an Outcome for each.
func runRecords(res *Result, prog interface {
	RunPieces(*record.Record, []vm.Piece) []vm.Piece
	OTLP() bool
}, input string) {
	arena := record.NewArena()
	var in, out, dropped, faulted, malformed, split int
	reasons := map[string]int{}
	var buf []byte
	var pieces []vm.Piece
	for i, line := range strings.Split(input, "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		in++
		o := Outcome{Line: i + 1}
		var rec *record.Record
		var err error
		if prog.OTLP() {
			rec, err = arena.DecodeOTLPView([]byte(line), record.Owned)
		} else {
			rec, err = arena.DecodeJSON([]byte(line), record.Owned)
		}
		if err != nil {
			malformed++
			out++
			o.Action, o.Error, o.Output = "pass", err.Error(), line
			res.Records = append(res.Records, o)
			res.Output = append(res.Output, line)
			continue
		}
		rec.Commit()
		pieces = prog.RunPieces(rec, pieces[:0])
		split += len(pieces) - 1
		for _, pc := range pieces {
			o := o
			r := pc.Result
			if r.Faulted() {
				faulted++
				o.Fault = r.Fault.String()
				reasons[o.Fault]++
			}
			if r.Action == spec.Drop {
				dropped++
				o.Action = "drop"
			} else {
				out++
				o.Action = "keep"
				buf = pc.Rec.AppendJSON(buf[:0])
				o.Output = string(bytes.Clone(buf))
				res.Output = append(res.Output, o.Output)
			}
			res.Records = append(res.Records, o)
		}
	}
	res.Summary = fmt.Sprintf("%d in, %d out, %d dropped, %d faulted", in, out, dropped, faulted)
	if len(reasons) > 0 {
		var rs []string
		for r, n := range reasons {
			rs = append(rs, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(rs)
		res.Summary += " (" + strings.Join(rs, ", ") + ")"
	}
	if split > 0 {
		res.Summary += fmt.Sprintf(", %d added by split", split)
	}
	if malformed > 0 {
		res.Summary += fmt.Sprintf(", %d malformed passed through", malformed)
	}
}

// utf16Offset is the UTF-16 offset of byte offset off of src.
func utf16Offset(src []byte, off int) int {
	n := 0
	for b := src[:min(max(off, 0), len(src))]; len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		n++
		if r >= 0x10000 {
			n++
		}
		b = b[size:]
	}
	return n
}

// parseParams reads params, one name=value a line (blank lines and lines
// starting with # are skipped), as eval's --param flags.
func parseParams(params string) (spec.Params, error) {
	ps := spec.Params{}
	for i, line := range strings.Split(params, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("parameters, line %d: want name=value, as in env=prod or keep=3", i+1)
		}
		if _, dup := ps[name]; dup {
			return nil, fmt.Errorf("parameters, line %d: %s is given twice", i+1, name)
		}
		ps[name] = spec.Param{Value: strings.TrimSpace(value), Raw: true, Where: fmt.Sprintf("parameters line %d", i+1)}
	}
	return ps, nil
}
