package policy

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// FormatSource parses src and returns it in the canonical layout. A file
// with syntax errors is not formatted: the error is the ErrorList.
func FormatSource(filename string, src []byte) ([]byte, error) {
	f, errs := ParseFile(filename, src)
	if len(errs) > 0 {
		return nil, errs
	}
	return Format(f, src)
}

// Format writes f in the canonical layout, the way gofmt does for Go:
//
//   - two spaces of indentation, one statement per line, `{` on the line
//     of its statement, single spaces around binary operators;
//   - the schema one field per line; test blocks as in docs/language.md, "Tests",
//     with input, tag and expect values lined up;
//   - one blank line between the header, the schema, the statements and
//     each test; elsewhere runs of blank lines become one;
//   - every comment kept where it was, trailing comments on consecutive
//     lines lined up;
//   - line breaks the author put after an operator or a comma kept; a list
//     or map literal that spans lines written one entry per line, one that
//     fits on one line kept on one line; parentheses kept as written.
//
// Format(parse(Format(f))) is Format(f). src is the text f was parsed from;
// it may be nil. f must come from a parse without errors.
func Format(f *File, src []byte) ([]byte, error) {
	if bad := firstBadNode(f); bad != nil {
		return nil, fmt.Errorf("%s: cannot format a file with syntax errors (at %s)", f.Filename, bad.Pos())
	}
	p := &printer{comments: f.Comments}
	p.file(f)
	return p.bytes(), nil
}

func firstBadNode(f *File) Node {
	var bad Node
	Inspect(f, func(n Node) bool {
		switch n.(type) {
		case *BadExpr, *BadStmt, *BadType:
			if bad == nil {
				bad = n
			}
		}
		return bad == nil
	})
	if bad == nil && f.Schema == nil && !f.Policy.IsValid() {
		return f
	}
	return bad
}

// An outLine is one line of output. Code may hold newlines of its own when
// it contains a multi-line raw string.
type outLine struct {
	indent    int
	code      []byte
	comment   string // a trailing comment, with its '#'
	blank     bool   // an empty line
	ownLineNl bool   // code is a comment on a line of its own
}

type printer struct {
	comments []*Comment
	ci       int // next comment to print

	lines []outLine
	cur   *outLine // the line being written; nil between lines

	lastLine   int  // source line of the last thing printed
	wantBlank  bool // put a blank line before the next line
	blockStart bool // no blank line before the first line of a block
	base       int  // indentation of the current statement or entry
}

// ------------------------------------------------------------ line layer

// openLine ends the current line and starts one at indent.
func (p *printer) openLine(indent int) {
	p.closeLine()
	if p.wantBlank && len(p.lines) > 0 && !p.blockStart {
		p.lines = append(p.lines, outLine{blank: true})
	}
	p.wantBlank, p.blockStart = false, false
	p.lines = append(p.lines, outLine{indent: indent})
	p.cur = &p.lines[len(p.lines)-1]
}

func (p *printer) closeLine() {
	if p.cur != nil {
		p.cur.code = bytes.TrimRight(p.cur.code, " ")
		p.cur = nil
	}
}

func (p *printer) text(s string) {
	if p.cur == nil {
		p.openLine(p.base + 1)
	}
	if len(p.cur.code) == 0 {
		s = strings.TrimLeft(s, " ")
	}
	p.cur.code = append(p.cur.code, s...)
}

// space writes a space unless the line is empty.
func (p *printer) space() {
	if p.cur != nil && len(p.cur.code) > 0 {
		p.cur.code = append(p.cur.code, ' ')
	}
}

// tok writes the source token s found at pos, after the comments before it.
func (p *printer) tok(pos Pos, s string) {
	p.flushInline(pos)
	p.text(s)
	if pos.IsValid() {
		p.lastLine = pos.Line + strings.Count(s, "\n")
	}
}

func (p *printer) pending(pos Pos) bool {
	return p.ci < len(p.comments) && pos.IsValid() && p.comments[p.ci].Hash.Offset < pos.Offset
}

// trailing attaches a comment on the last printed source line to the
// current output line. It reports whether it did.
func (p *printer) trailing() bool {
	c := p.comments[p.ci]
	if p.cur == nil || c.Hash.Line != p.lastLine || p.cur.comment != "" || p.cur.ownLineNl {
		return false
	}
	p.cur.comment = commentText(c)
	p.ci++
	return true
}

// commentText is c as it is printed: without the whitespace at its end,
// carriage returns included, which the scanner skips as it does spaces.
// A CR kept there would end up before the newline the formatter writes,
// where the scanner drops it from the comment: `#\r ` would not format
// to text that formats the same.
func commentText(c *Comment) string { return strings.TrimRight(c.Text, " \t\r") }

// ownLine prints the next comment on a line of its own at indent, keeping
// one blank line before it if the source had any.
func (p *printer) ownLine(indent int) {
	c := p.comments[p.ci]
	p.ci++
	if p.lastLine > 0 && c.Hash.Line-p.lastLine > 1 {
		p.wantBlank = true
	}
	p.openLine(indent)
	p.cur.code, p.cur.ownLineNl = []byte(commentText(c)), true
	p.closeLine()
	p.lastLine = c.Hash.Line
}

// flushInline prints the comments before pos in the middle of a statement:
// a trailing one ends the current line, an own-line one gets its line, and
// the statement goes on on a continuation line.
func (p *printer) flushInline(pos Pos) {
	broke := false
	for p.pending(pos) {
		if !p.trailing() {
			p.ownLine(p.base + 1)
		}
		broke = true
	}
	if broke {
		p.closeLine()
	}
}

// breakBefore starts a continuation line for the source token at pos,
// after the comments before it.
func (p *printer) breakBefore(pos Pos) {
	p.flushInline(pos)
	if p.cur != nil && len(p.cur.code) > 0 {
		p.openLine(p.base + 1)
	}
}

// item starts a line-level item (a statement, a field, a test line, an
// entry of a multi-line literal) at indent: the comments before it go on
// their own lines, and a blank line before it in the source is kept.
// section forces one blank line, as between the parts of a file.
func (p *printer) item(pos Pos, indent int, section bool) {
	if section && len(p.lines) > 0 {
		p.wantBlank = true
	}
	for p.pending(pos) {
		if !p.trailing() {
			p.ownLine(indent)
		}
	}
	if p.lastLine > 0 && pos.Line-p.lastLine > 1 {
		p.wantBlank = true
	}
	p.openLine(indent)
	p.base = indent
}

// closer writes a closing bracket at indent on its own line, after the
// comments before it, which stay inside at indent+1.
func (p *printer) closer(pos Pos, indent int, s string) {
	for p.pending(pos) {
		if !p.trailing() {
			p.ownLine(indent + 1)
		}
	}
	p.blockStart = false
	p.openLine(indent)
	p.tok(pos, s)
}

// bytes renders the lines, lining up trailing comments of consecutive lines
// as gofmt does.
func (p *printer) bytes() []byte {
	for p.ci < len(p.comments) {
		if !p.trailing() {
			p.ownLine(0)
		}
	}
	p.closeLine()

	rendered := make([]string, len(p.lines))
	for i, l := range p.lines {
		if !l.blank {
			rendered[i] = strings.Repeat("  ", l.indent) + string(l.code)
		}
	}
	for i := 0; i < len(p.lines); {
		if p.lines[i].comment == "" {
			i++
			continue
		}
		// A run of consecutive lines with trailing comments; a line with a
		// raw string spanning lines starts a run of its own.
		j, width := i, 0
		for j < len(p.lines) && p.lines[j].comment != "" && (j == i || !strings.Contains(rendered[j], "\n")) {
			width = max(width, lastLineWidth(rendered[j]))
			j++
		}
		for k := i; k < j; k++ {
			pad := width - lastLineWidth(rendered[k]) + 1
			if rendered[k] == "" {
				pad = 0
			}
			rendered[k] += strings.Repeat(" ", pad) + p.lines[k].comment
		}
		i = j
	}
	var b bytes.Buffer
	for _, r := range rendered {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func lastLineWidth(s string) int {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return utf8.RuneCountInString(s)
}

// ------------------------------------------------------------ file layer

func (p *printer) file(f *File) {
	p.item(f.Policy, 0, false)
	if f.Module {
		p.tok(f.Policy, "module")
	} else {
		p.tok(f.Policy, "policy")
	}
	p.text(" ")
	p.tok(f.NamePos, Quote(f.Name))
	if f.OnFaultPos.IsValid() {
		p.text(" on_fault ")
		if f.OnFault == OnFaultDrop {
			p.tok(f.OnFaultPos, "drop")
		} else {
			p.tok(f.OnFaultPos, "keep")
		}
	}
	// The declarations in source order, the schema among them: a blank
	// line around a schema or a function, consecutive constants (and
	// consecutive parameters) together.
	var decls []Node
	if f.Schema != nil {
		decls = append(decls, f.Schema)
	}
	for _, d := range f.Decls {
		decls = append(decls, d)
	}
	for _, d := range f.Imports {
		decls = append(decls, d)
	}
	slices.SortStableFunc(decls, func(a, b Node) int { return a.Pos().Offset - b.Pos().Offset })
	for i, d := range decls {
		p.item(d.Pos(), 0, i == 0 || !sameLineKind(decls[i-1], d))
		p.decl(d)
	}
	for i, s := range f.Stmts {
		p.item(s.Pos(), 0, i == 0)
		p.stmt(s)
	}
	for _, t := range f.Tests {
		p.item(t.Pos(), 0, true)
		p.test(t)
	}
}

// sameLineKind reports whether a and b are both one-line declarations of
// one kind (two constants, two parameters), which are laid out together.
func sameLineKind(a, b Node) bool {
	switch a.(type) {
	case *ConstDecl:
		_, ok := b.(*ConstDecl)
		return ok
	case *ParamDecl:
		_, ok := b.(*ParamDecl)
		return ok
	case *ImportDecl:
		_, ok := b.(*ImportDecl)
		return ok
	}
	return false
}

func (p *printer) decl(d Node) {
	switch d := d.(type) {
	case *Schema:
		p.tok(d.Schema, "schema ")
		if d.IsOTLP() {
			p.tok(d.OTLP, "otlp ")
		}
		if d.Type != nil {
			p.objectType(d.Type, 0)
		}
	case *ImportDecl:
		p.tok(d.Import, "import ")
		p.tok(d.Path.ValuePos, d.Path.Raw)
		if d.Name != nil {
			p.text(" as ")
			p.tok(d.Name.NamePos, d.Name.Name)
		}
	case *ConstDecl:
		p.binding(d.Const, "const ", d.Name, d.Value)
	case *ParamDecl:
		p.tok(d.Param, "param ")
		p.typedName(d.Name, d.Type, d.Default)
	case *FuncDecl:
		p.tok(d.Fn, "fn ")
		p.tok(d.Name.NamePos, d.Name.Name)
		p.tok(d.Lparen, "(")
		for i, prm := range d.Params {
			if i > 0 {
				p.text(", ")
			}
			p.typedName(prm.Name, prm.Type, prm.Default)
		}
		p.tok(d.Rparen, ")")
		p.text(" ")
		p.inlineType(d.Result)
		p.block(d.Body)
	}
}

func (p *printer) objectType(t *ObjectType, indent int) {
	inside := p.pending(t.Rbrace)
	if len(t.Fields) == 0 && !inside {
		if t.Open {
			p.tok(t.Lbrace, "{ ... }")
		} else {
			p.tok(t.Lbrace, "{}")
		}
		p.lastLine = t.Rbrace.Line
		return
	}
	p.tok(t.Lbrace, "{")
	p.blockStart = true
	for _, fd := range t.Fields {
		p.item(fd.Pos(), indent+1, false)
		if fd.Quoted {
			p.tok(fd.NamePos, Quote(fd.Name))
		} else {
			p.tok(fd.NamePos, fd.Name)
		}
		p.text(": ")
		p.typ(fd.Type, indent+1)
	}
	if t.Open {
		p.item(t.Ellipsis, indent+1, false)
		p.tok(t.Ellipsis, "...")
	}
	p.closer(t.Rbrace, indent, "}")
	p.base = indent
}

// inlineType writes a type of a function's header on one line, an object
// type as {a: int, b: string, ...}, unless comments inside it need lines.
// binding writes keyword kw at pos, name, " = " and x: a const or a let.
func (p *printer) binding(pos Pos, kw string, name *Ident, x Expr) {
	p.tok(pos, kw)
	p.tok(name.NamePos, name.Name)
	p.text(" = ")
	p.expr(x)
}

// typedName writes name: type and, unless def is nil, " = " and def: a
// param declaration or a function's parameter.
func (p *printer) typedName(name *Ident, t TypeExpr, def Expr) {
	p.tok(name.NamePos, name.Name)
	p.text(": ")
	p.inlineType(t)
	if def != nil {
		p.text(" = ")
		p.expr(def)
	}
}

func (p *printer) inlineType(t TypeExpr) {
	switch t := t.(type) {
	case *ObjectType:
		if p.pending(t.Rbrace) {
			p.typ(t, p.base)
			return
		}
		p.tok(t.Lbrace, "{")
		for i, fd := range t.Fields {
			if i > 0 {
				p.text(", ")
			}
			if fd.Quoted {
				p.tok(fd.NamePos, Quote(fd.Name))
			} else {
				p.tok(fd.NamePos, fd.Name)
			}
			p.text(": ")
			p.inlineType(fd.Type)
		}
		if t.Open {
			if len(t.Fields) > 0 {
				p.text(", ")
			}
			p.tok(t.Ellipsis, "...")
		}
		p.tok(t.Rbrace, "}")
	case *ArrayType:
		p.tok(t.Array, "array<")
		p.inlineType(t.Elem)
		p.tok(t.Rangle, ">")
	case *MapType:
		p.tok(t.Map, "map<")
		p.inlineType(t.Elem)
		p.tok(t.Rangle, ">")
	case *OptionalType:
		p.inlineType(t.Elem)
		p.tok(t.Question, "?")
	default:
		p.typ(t, p.base)
	}
}

func (p *printer) typ(t TypeExpr, indent int) {
	switch t := t.(type) {
	case *NamedType:
		p.tok(t.NamePos, t.Name)
	case *ArrayType:
		p.tok(t.Array, "array<")
		p.typ(t.Elem, indent)
		p.tok(t.Rangle, ">")
	case *MapType:
		p.tok(t.Map, "map<")
		p.typ(t.Elem, indent)
		p.tok(t.Rangle, ">")
	case *ObjectType:
		p.objectType(t, indent)
	case *OptionalType:
		p.typ(t.Elem, indent)
		p.tok(t.Question, "?")
	}
}

// test writes a test block; its lines come in source order, their values
// lined up after the widest keyword.
func (p *printer) test(t *Test) {
	p.tok(t.Test, "test ")
	p.tok(t.NamePos, Quote(t.Name))
	p.text(" ")
	p.tok(t.Lbrace, "{")
	p.blockStart = true
	type line struct {
		pos  Pos
		emit func()
	}
	var lines []line
	inputs := t.Inputs
	if len(inputs) == 0 && t.Input != nil {
		inputs = []*TestInput{{Pos: t.InputPos, Value: t.Input}}
	}
	for _, in := range inputs {
		for _, c := range in.Clocks {
			lines = append(lines, line{c.Pos, func() {
				p.tok(c.Pos, c.word()+"     "[len(c.word()):]+"  ")
				p.tok(c.Value.Pos(), c.Value.Raw)
			}})
		}
		lines = append(lines, line{in.Pos, func() {
			p.tok(in.Pos, "input  ")
			p.expr(in.Value)
		}})
	}
	for _, prm := range t.Params {
		lines = append(lines, line{prm.Param, func() {
			p.tok(prm.Param, "param  ")
			p.tok(prm.Name.NamePos, prm.Name.Name+" ")
			p.expr(prm.Value)
		}})
	}
	if t.Tag != nil {
		lines = append(lines, line{t.Tag.Pos(), func() {
			p.text("tag    ")
			p.tok(t.Tag.Pos(), t.Tag.Raw)
		}})
	}
	for _, a := range t.Asserts {
		lines = append(lines, line{a.Assert, func() {
			p.tok(a.Assert, "assert ")
			p.expr(a.Cond)
		}})
	}
	if t.ExpectPos.IsValid() {
		lines = append(lines, line{t.ExpectPos, func() {
			p.tok(t.ExpectPos, "expect ")
			switch t.Expect {
			case ExpectDropped:
				p.text("dropped")
			case ExpectFault:
				p.text("fault")
			default:
				p.expr(t.Want)
			}
		}})
	}
	for i := 1; i < len(lines); i++ {
		for j := i; j > 0 && lines[j].pos.Offset < lines[j-1].pos.Offset; j-- {
			lines[j], lines[j-1] = lines[j-1], lines[j]
		}
	}
	for _, l := range lines {
		p.item(l.pos, 1, false)
		l.emit()
	}
	p.closer(t.Rbrace, 0, "}")
}
