package compiler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/policyrun/policyrun/compiler/diag"
)

// CodeStateMemory marks the report of a policy's worst-case state memory:
// not a diagnostic, a figure (docs/language.md, "State").
const CodeStateMemory = "I0001"

// StateReport is what `policyrun check` says of a policy with dedupe or
// rate_limit: the most keys its statements can hold and the bytes they
// take, as the state package measures them. In JSON it has the fields of
// a diagnostic (diag.WriteJSON) and its figures.
type StateReport struct {
	File        string           `json:"file"`
	Line        int              `json:"line"`
	Col         int              `json:"col"`
	Severity    string           `json:"severity"`
	Code        string           `json:"code"`
	Message     string           `json:"message"`
	Policy      string           `json:"policy"`
	StateBytes  int64            `json:"state_bytes"`
	StateKeys   int64            `json:"state_keys"`
	BytesPerKey int64            `json:"bytes_per_key"`
	Statements  []StateStatement `json:"statements"`
}

// StateStatement is one keyed statement of a StateReport.
type StateStatement struct {
	Line    int    `json:"line"`
	Kind    string `json:"kind"`
	MaxKeys int    `json:"max_keys"`
	Bytes   int64  `json:"bytes"`
}

// StateReport reports the state memory of the policy analysed from file,
// or nil when it keeps no keys (sample keeps none) or did not check.
func (an *Analysis) StateReport(file string) *StateReport {
	if an.File == nil || an.Info == nil || an.Diagnostics.HasErrors() {
		return nil
	}
	r := &StateReport{File: file, Line: an.File.Policy.Line, Col: an.File.Policy.Col, Severity: "info", Code: CodeStateMemory, Policy: an.File.Name}
	for _, s := range an.Info.StateOrder {
		sp := an.Info.States[s].Spec
		if !sp.Kind.Keyed() {
			continue
		}
		r.StateBytes += sp.Memory()
		r.StateKeys += int64(sp.MaxKeys)
		r.Statements = append(r.Statements, StateStatement{Line: s.Pos().Line, Kind: sp.Kind.String(), MaxKeys: sp.MaxKeys, Bytes: sp.Memory()})
	}
	if r.StateKeys == 0 {
		return nil
	}
	r.BytesPerKey = (r.StateBytes + r.StateKeys - 1) / r.StateKeys
	r.Message = fmt.Sprintf("policy %q keeps at most %d keys of state, %d bytes (%s) at %d bytes a key",
		r.Policy, r.StateKeys, r.StateBytes, byteSize(r.StateBytes), r.BytesPerKey)
	return r
}

func byteSize(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// WriteText writes the report as check's text output does: a line in the
// form of a diagnostic's first, then one line a statement.
func (r *StateReport) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s:%d:%d: info[%s]: %s\n", r.File, r.Line, r.Col, r.Code, r.Message)
	for _, s := range r.Statements {
		fmt.Fprintf(w, "  = line %d: %s, max_keys %d: %d bytes\n", s.Line, s.Kind, s.MaxKeys, s.Bytes)
	}
}

// WriteJSON writes the diagnostics as diag.WriteJSON does, with the state
// reports after them, in one array.
func WriteJSON(w io.Writer, ds diag.List, reports []*StateReport) error {
	var b bytes.Buffer
	if err := diag.WriteJSON(&b, ds); err != nil {
		return err
	}
	var all []json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &all); err != nil {
		return err
	}
	for _, r := range reports {
		m, err := json.Marshal(r)
		if err != nil {
			return err
		}
		all = append(all, m)
	}
	if all == nil {
		all = []json.RawMessage{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(all)
}
