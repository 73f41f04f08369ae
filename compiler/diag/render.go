package diag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/policyrun/policyrun/internal/termesc"
)

// WriteText writes ds in the layout of docs/language.md, "Diagnostics", one
// block per diagnostic separated by blank lines. src is the source of the
// diagnostics' file (all of ds must come from it); without it the source
// line is left out. A diagnostic with its own Source is shown from it.
//
//	error[E0301]: cannot compare int with string
//	  --> checkout.policy:7:11
//	   |
//	 7 | drop when .status == "500"
//	   |           ^^^^^^^^^^^^^^^^ .status is int (declared at line 3)
//	   = help: compare with the number 500, or write to_string(.status) == "500"
func WriteText(w io.Writer, src []byte, ds []Diagnostic) error {
	var b bytes.Buffer
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		writeOne(&b, src, d)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func writeOne(b *bytes.Buffer, src []byte, d Diagnostic) {
	// Text from the source (the line, and messages that quote it) is
	// shown with its control characters escaped: a terminal would act on
	// them.
	esc := termesc.String
	if d.Source != "" {
		src = []byte(d.Source)
	}
	fmt.Fprintf(b, "%s[%s]: %s\n", d.Severity, esc(d.Code), esc(d.Msg))
	line, ok := sourceLine(src, d.Pos.Offset)
	num := strconv.Itoa(d.Pos.Line)
	gutter := strings.Repeat(" ", len(num)+1)
	fmt.Fprintf(b, "%s--> %s:%d:%d\n", gutter, esc(d.Filename), d.Pos.Line, d.Pos.Col)
	if ok && d.Pos.IsValid() {
		bar := gutter + " |"
		fmt.Fprintf(b, "%s\n", bar)
		fmt.Fprintf(b, " %s | %s\n", num, esc(strings.TrimRight(line, "\r")))
		// Carets sit under the span's characters as shown: count runes,
		// not bytes, an escape as its width, and keep tabs so the columns
		// line up with the line above.
		start := min(max(d.Pos.Col-1, 0), len(line))
		end := len(line)
		if d.End.IsValid() && d.End.Line == d.Pos.Line {
			end = min(max(d.End.Col-1, start), len(line))
		}
		var pad strings.Builder
		for i := 0; i < start; {
			r, size := utf8.DecodeRuneInString(line[i:start])
			if r == '\t' {
				pad.WriteByte('\t')
			} else {
				pad.WriteString(strings.Repeat(" ", termesc.Width(r, size)))
			}
			i += size
		}
		n := 0
		for i, span := 0, strings.TrimRight(line[start:end], "\r"); i < len(span); {
			r, size := utf8.DecodeRuneInString(span[i:])
			n += termesc.Width(r, size)
			i += size
		}
		fmt.Fprintf(b, "%s %s%s", bar, pad.String(), strings.Repeat("^", max(n, 1)))
		if d.Label != "" {
			b.WriteString(" " + esc(d.Label))
		}
		b.WriteByte('\n')
	}
	if d.Hint != "" {
		fmt.Fprintf(b, "%s = help: %s\n", gutter, esc(d.Hint))
	}
}

// sourceLine returns the line of src holding the byte at offset, without its
// newline.
func sourceLine(src []byte, offset int) (string, bool) {
	if src == nil || offset < 0 || offset > len(src) {
		return "", false
	}
	start := bytes.LastIndexByte(src[:offset], '\n') + 1
	end := bytes.IndexByte(src[offset:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += offset
	}
	return string(src[start:end]), true
}

// jsonDiag is the JSON form of a diagnostic. end_line and end_col are the
// position just past the span, as in the syntax tree.
type jsonDiag struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	EndLine  int    `json:"end_line"`
	EndCol   int    `json:"end_col"`
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Label    string `json:"label,omitempty"`
	Hint     string `json:"hint,omitempty"`
}

// WriteJSON writes ds as one JSON array of objects (an empty array when ds is
// empty), followed by a newline.
func WriteJSON(w io.Writer, ds []Diagnostic) error {
	out := make([]jsonDiag, 0, len(ds))
	for _, d := range ds {
		out = append(out, jsonDiag{
			File: d.Filename, Line: d.Pos.Line, Col: d.Pos.Col,
			EndLine: d.End.Line, EndCol: d.End.Col,
			Severity: d.Severity.String(), Code: d.Code, Message: d.Msg,
			Label: d.Label, Hint: d.Hint,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// WriteGitHub writes ds as GitHub Actions workflow commands, one line each:
//
//	::error file=f.policy,line=7,col=11,endLine=7,endColumn=26,title=E0301::cannot compare int with string
//
// endColumn is inclusive, as GitHub counts it. The hint follows the message
// on a second (escaped) line.
func WriteGitHub(w io.Writer, ds []Diagnostic) error {
	var b bytes.Buffer
	for _, d := range ds {
		endLine, endCol := d.End.Line, d.End.Col-1
		if !d.End.IsValid() || endLine < d.Pos.Line || endLine == d.Pos.Line && endCol < d.Pos.Col {
			endLine, endCol = d.Pos.Line, d.Pos.Col
		}
		// Control characters are escaped as in the text format; the line
		// breaks between the parts are GitHub's own (%0A).
		esc := termesc.String
		msg := esc(d.Msg)
		if d.Label != "" {
			msg += ": " + esc(d.Label)
		}
		if d.Hint != "" {
			msg += "\nhelp: " + esc(d.Hint)
		}
		fmt.Fprintf(&b, "::%s file=%s,line=%d,col=%d,endLine=%d,endColumn=%d,title=%s::%s\n",
			d.Severity, ghProperty(esc(d.Filename)), d.Pos.Line, d.Pos.Col, endLine, endCol,
			ghProperty(esc(d.Code)), ghData(msg))
	}
	_, err := w.Write(b.Bytes())
	return err
}

var (
	ghDataEscaper     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghPropertyEscaper = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

func ghData(s string) string     { return ghDataEscaper.Replace(s) }
func ghProperty(s string) string { return ghPropertyEscaper.Replace(s) }
