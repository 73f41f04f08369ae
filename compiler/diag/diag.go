// Package diag holds the diagnostics of policy checking — errors and warnings
// with a code, a span, a label and a hint — and renders them as text, JSON or
// GitHub annotations.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"github.com/policyrun/policyrun/internal/termesc"
	"github.com/policyrun/policyrun/policy"
)

// Severity says whether a diagnostic stops a policy from being deployed.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one finding about a policy.
type Diagnostic struct {
	Code     string // stable: E0301, W0001; the reference lists them all
	Severity Severity
	Pos, End policy.Pos // the span: the offending sub-expression
	Msg      string     // what is wrong, one line, no trailing period
	Label    string     // the text beside the carets, explaining the span
	Hint     string     // how to fix it, when one helps
	Filename string
	// Source is the text of Filename when it is another file than the
	// one checked (a module's diagnostic, seen from a policy that
	// imports it), for WriteText; empty otherwise.
	Source string
}

// String is the diagnostic on one line, its control characters escaped
// as WriteText does.
func (d Diagnostic) String() string {
	return termesc.String(fmt.Sprintf("%s:%s: %s[%s]: %s", d.Filename, d.Pos, d.Severity, d.Code, d.Msg))
}

// Errorf returns an error diagnostic covering the node n.
func Errorf(n policy.Node, code, format string, args ...any) Diagnostic {
	return Diagnostic{Code: code, Severity: Error, Pos: n.Pos(), End: n.End(), Msg: fmt.Sprintf(format, args...)}
}

// Warnf returns a warning diagnostic covering the node n.
func Warnf(n policy.Node, code, format string, args ...any) Diagnostic {
	return Diagnostic{Code: code, Severity: Warning, Pos: n.Pos(), End: n.End(), Msg: fmt.Sprintf(format, args...)}
}

// WithLabel returns d with its label set.
func (d Diagnostic) WithLabel(format string, args ...any) Diagnostic {
	d.Label = fmt.Sprintf(format, args...)
	return d
}

// WithHint returns d with its hint set.
func (d Diagnostic) WithHint(format string, args ...any) Diagnostic {
	d.Hint = fmt.Sprintf(format, args...)
	return d
}

// List is the diagnostics of one check, the type every function that
// checks policies returns.
type List []Diagnostic

// Err returns nil when no diagnostic of l is an error, and otherwise an
// *Errors holding l (warnings stop nothing).
func (l List) Err() error {
	if !l.HasErrors() {
		return nil
	}
	return &Errors{List: l}
}

// HasErrors reports whether any diagnostic of l is an error.
func (l List) HasErrors() bool {
	n, _ := l.Count()
	return n > 0
}

// Count returns the number of errors and of warnings in l.
func (l List) Count() (errors, warnings int) {
	for _, d := range l {
		if d.Severity == Error {
			errors++
		} else {
			warnings++
		}
	}
	return errors, warnings
}

// Errors is a List with errors, as an error: one line per error (file,
// line, column, code, message); WriteText renders it in full with the
// source, labels and hints.
type Errors struct {
	List List
}

func (e *Errors) Error() string {
	var b strings.Builder
	for _, d := range e.List {
		if d.Severity != Error {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// Sort orders ds by file and position (then code and message) and removes
// exact duplicates, returning the shortened slice.
func Sort(ds List) List {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		switch {
		case a.Filename != b.Filename:
			return a.Filename < b.Filename
		case a.Pos.Offset != b.Pos.Offset:
			return a.Pos.Offset < b.Pos.Offset
		case a.End.Offset != b.End.Offset:
			return a.End.Offset < b.End.Offset
		case a.Code != b.Code:
			return a.Code < b.Code
		}
		return a.Msg < b.Msg
	})
	out := ds[:0]
	for i, d := range ds {
		if i > 0 && d == ds[i-1] {
			continue
		}
		out = append(out, d)
	}
	return out
}
