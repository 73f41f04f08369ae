package lsp

import (
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/policy"
)

// A document is an open text document: its text, the offsets of its
// lines, and what the parser and the checker made of it.
type document struct {
	uri     string
	version int32
	text    string
	lines   []int // byte offset of each line's first byte
	an      *analysis
	// read reads the modules the document imports (server.readFile);
	// nil reads the files.
	read compiler.ReadFunc
}

func newDocument(uri string, version int32, text string) *document {
	d := &document{uri: uri, version: version}
	d.setText(text)
	return d
}

func (d *document) setText(text string) {
	d.text = text
	d.lines = lineStarts(text)
	d.an = nil
}

// lineStarts returns the offsets at which the lines of text start. Lines
// end at \n, \r\n or \r, as LSP counts them.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineEnd returns the offset of the end of line i, before its line
// break.
func (d *document) lineEnd(i int) int {
	if i+1 >= len(d.lines) {
		return len(d.text)
	}
	end := d.lines[i+1]
	if end > 0 && d.text[end-1] == '\n' {
		end--
	}
	if end > d.lines[i] && d.text[end-1] == '\r' {
		end--
	}
	return end
}

// position converts a byte offset to an LSP position (UTF-16 code units).
func (d *document) position(off int) Position {
	off = min(max(off, 0), len(d.text))
	line := sort.Search(len(d.lines), func(i int) bool { return d.lines[i] > off }) - 1
	return Position{Line: line, Character: utf16Len(d.text[d.lines[line]:off])}
}

// offset converts an LSP position to a byte offset. A position past the
// end of its line is the end of the line; past the last line, the end of
// the text; in the middle of a surrogate pair, before its character.
func (d *document) offset(p Position) int {
	if p.Line < 0 {
		return 0
	}
	if p.Line >= len(d.lines) {
		return len(d.text)
	}
	off, end := d.lines[p.Line], d.lineEnd(p.Line)
	for units := 0; off < end; {
		r, size := utf8.DecodeRuneInString(d.text[off:end])
		w := utf16Width(r)
		if units+w > p.Character {
			break
		}
		units += w
		off += size
	}
	return off
}

// rangeOf converts the byte span [from, to) to an LSP range.
func (d *document) rangeOf(from, to int) Range {
	return Range{Start: d.position(from), End: d.position(max(from, to))}
}

// nodeRange is the range of a syntax-tree node.
func (d *document) nodeRange(n policy.Node) Range {
	return d.rangeOf(n.Pos().Offset, n.End().Offset)
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Width(r)
	}
	return n
}

func utf16Width(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// apply applies one change of didChange.
func (d *document) apply(c contentChange) {
	if c.Range == nil {
		d.setText(c.Text)
		return
	}
	from, to := d.offset(c.Range.Start), d.offset(c.Range.End)
	if to < from {
		from, to = to, from
	}
	d.setText(d.text[:from] + c.Text + d.text[to:])
}

// filename is the name diagnostics give the document: the path of a
// file: URI, else the URI itself.
func (d *document) filename() string {
	if u, err := url.Parse(d.uri); err == nil && u.Scheme == "file" && u.Path != "" {
		return u.Path
	}
	return d.uri
}

// analysis is what the parser and the checker made of a text: a File,
// with Bad nodes where the text is broken, what the checker learned of
// it, and every diagnostic `policyrun check` reports (one
// compiler.Analyze: the text is parsed and checked once).
type analysis struct {
	file  *policy.File
	info  *check.Info
	diags diag.List
}

func analyze(filename, text string, read compiler.ReadFunc) *analysis {
	an := compiler.Analyze(filename, []byte(text), compiler.WithFiles(read))
	return &analysis{file: an.File, info: an.Info, diags: foreign(filename, an.File, an.Diagnostics)}
}

// analysis returns the analysis of d's text, made once per text.
func (d *document) analysis() *analysis {
	if d.an == nil {
		d.an = analyze(d.filename(), d.text, d.read)
	}
	return d.an
}

// source returns the text of the span of n, or "" when n's span is not
// within the text.
func (d *document) source(n policy.Node) string {
	from, to := n.Pos().Offset, n.End().Offset
	if from < 0 || to > len(d.text) || from > to {
		return ""
	}
	return d.text[from:to]
}

// isIdentByte reports whether c may be part of a name.
func isIdentByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// wordAround returns the span [from, to) of the name around offset off.
func (d *document) wordAround(off int) (from, to int) {
	from, to = off, off
	for from > 0 && isIdentByte(d.text[from-1]) {
		from--
	}
	for to < len(d.text) && isIdentByte(d.text[to]) {
		to++
	}
	return from, to
}

// isName reports whether s can be written as a field name without quotes.
func isName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool { return r >= utf8.RuneSelf || !isIdentByte(byte(r)) }) < 0
}
