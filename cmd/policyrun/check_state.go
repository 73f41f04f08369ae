package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
)

// codeStateMemory marks check's report of a policy's worst-case state
// memory: not a diagnostic, a figure (docs/language.md, "State").
const codeStateMemory = "I0001"

// stateReport is what check says of a policy with dedupe or rate_limit:
// the most keys its statements can hold and the bytes they take.
type stateReport struct {
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
	Statements  []stateStatement `json:"statements"`
}

type stateStatement struct {
	Line    int    `json:"line"`
	Kind    string `json:"kind"`
	MaxKeys int    `json:"max_keys"`
	Bytes   int64  `json:"bytes"`
}

// stateOf reports the state memory of a checked policy, or nil when it
// has none (or did not check).
func stateOf(name string, an *compiler.Analysis) *stateReport {
	if an.File == nil || an.Info == nil || an.Diagnostics.HasErrors() {
		return nil
	}
	r := &stateReport{File: name, Line: an.File.Policy.Line, Col: an.File.Policy.Col, Severity: "info", Code: codeStateMemory, Policy: an.File.Name}
	for _, s := range an.Info.StateOrder {
		sp := an.Info.States[s].Spec
		if !sp.Kind.Keyed() {
			continue
		}
		r.StateBytes += sp.Memory()
		r.StateKeys += int64(sp.MaxKeys)
		r.Statements = append(r.Statements, stateStatement{Line: s.Pos().Line, Kind: sp.Kind.String(), MaxKeys: sp.MaxKeys, Bytes: sp.Memory()})
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

// writeText writes the report as check's text output does.
func (r *stateReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "%s:%d:%d: info[%s]: %s\n", r.File, r.Line, r.Col, r.Code, r.Message)
	for _, s := range r.Statements {
		fmt.Fprintf(w, "  = line %d: %s, max_keys %d: %d bytes\n", s.Line, s.Kind, s.MaxKeys, s.Bytes)
	}
}

// writeCheckJSON writes the diagnostics as diag.WriteJSON does, with the
// state reports after them, in one array.
func writeCheckJSON(w io.Writer, ds diag.List, reports []*stateReport) error {
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
