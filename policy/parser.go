package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseFile parses one policy file. It always returns a File: where the
// source is wrong the tree holds Bad nodes, and the parser goes on after each
// error (at the next line, statement keyword or closing brace), so that one
// mistake does not hide the ones after it. The errors are sorted by position.
func ParseFile(filename string, src []byte) (*File, ErrorList) {
	p := &parser{errLines: map[int]bool{}}
	p.file = &File{Filename: filename}
	p.init(src)
	p.parseFile()
	p.errors.Sort()
	return p.file, p.errors
}

// A token is one scanned token. The parser scans the whole file first, so
// that it can look ahead freely and back up during error recovery.
type token struct {
	pos Pos
	tok Token
	lit string
	end Pos
	bol bool // first token on its line
}

type parser struct {
	file     *File
	src      []byte
	toks     []token
	errors   ErrorList
	errLines map[int]bool // lines that already have an error

	i int   // index of the current token in toks
	t token // the current token
	// afterNL is set when a newline was skipped before t (inside brackets).
	afterNL bool
	// nlPos is the position of the last skipped newline.
	nlPos Pos
	// exprLev > 0 inside (), [] and map literals, where newlines mean nothing.
	exprLev int
	nest    int  // recursion depth, bounded by maxNest
	inDecl  bool // inside a schema or test block, where there are no statements
	inFunc  bool // inside the body of a function, where return is a statement
	// reservedNames holds the reserved words a let or for declared as a
	// name (E0021, reported there): their uses read as that name, so that
	// the one mistake gives one error.
	reservedNames map[string]bool
}

// maxNest bounds the nesting of expressions, types and blocks, so that no
// input can exhaust the stack of the parser or of the passes after it. Each
// construct that holds others is one level (docs/language-syntax.md, E0029):
// a block (the body of if, else or for; an else if is the else block it
// stands for), a bracket ((), [], {}, a call's or an index's), a unary
// operator, and a type that holds a type (array<, map<, an object's {}).
// Statements, names and literals are no level of their own.
const maxNest = 1000

// enter counts one level of nesting, at the token that opens it; it reports
// false, after an error, when the input is nested too deeply. Every enter is
// paired with a leave.
func (p *parser) enter() bool {
	p.nest++
	if p.nest > maxNest {
		p.errorHere(CodeTooDeep, "split the expression with let, or flatten the nesting", "nested too deeply: more than %d levels", maxNest)
		return false
	}
	return true
}

func (p *parser) leave() { p.nest-- }

func (p *parser) init(src []byte) {
	p.src = src
	var s Scanner
	s.Init(src, func(e *Error) {
		if p.errLines[e.Pos.Line] {
			return // one error per line: .größe is one mistake, not two
		}
		p.errors = append(p.errors, e)
		p.errLines[e.Pos.Line] = true
	})
	p.toks = make([]token, 0, len(src)/4+16)
	lastLine := 0
	for {
		pos, tok, lit := s.Scan()
		if tok == COMMENT {
			p.file.Comments = append(p.file.Comments, &Comment{Hash: pos, Text: lit})
			continue
		}
		t := token{pos: pos, tok: tok, lit: lit, end: pos.Advance(lit), bol: pos.Line > lastLine}
		if tok == NEWLINE {
			t.end = pos
		}
		p.toks = append(p.toks, t)
		lastLine = t.end.Line
		if tok == NEWLINE && lit != "" {
			lastLine = pos.Line
		}
		if tok == EOF {
			break
		}
	}
	p.i = -1
	p.next()
}

// next advances to the next token, skipping newlines inside brackets.
func (p *parser) next() {
	p.afterNL = false
	for {
		if p.i < len(p.toks)-1 {
			p.i++
		}
		p.t = p.toks[p.i]
		if p.t.tok != NEWLINE || p.exprLev == 0 {
			return
		}
		p.afterNL = true
		p.nlPos = p.t.pos
	}
}

// peek returns the token after the current one, not skipping anything.
func (p *parser) peek() token {
	if p.i < len(p.toks)-1 {
		return p.toks[p.i+1]
	}
	return p.t
}

// prevEnd is the end of the token before the current one.
func (p *parser) prevEnd() Pos {
	for j := p.i - 1; j >= 0; j-- {
		if p.toks[j].tok != NEWLINE {
			return p.toks[j].end
		}
	}
	return p.t.pos
}

func (p *parser) skipNewlines() {
	for p.t.tok == NEWLINE {
		p.next()
	}
}

// errorAt records an error unless its line already has one: the first error
// on a line is the real one, the rest are usually its echoes.
func (p *parser) errorAt(pos, end Pos, code, hint, format string, args ...any) {
	if p.errLines[pos.Line] {
		return
	}
	p.errLines[pos.Line] = true
	if !end.IsValid() || end.Offset < pos.Offset {
		end = pos
	}
	p.errors = append(p.errors, &Error{Pos: pos, End: end, Code: code, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// errorHere reports an error at the current token. When a newline was
// skipped just before it (an unclosed bracket), the error points at that
// newline, where the mistake is.
func (p *parser) errorHere(code, hint, format string, args ...any) {
	pos, end := p.t.pos, p.t.end
	if p.afterNL && p.t.bol {
		pos, end = p.nlPos, p.nlPos
	}
	p.errorAt(pos, end, code, hint, format, args...)
}

// describe names the current token for a message: "newline", "'='",
// "identifier foo", "end of file".
func (p *parser) describe() string {
	if p.afterNL && p.t.bol {
		return "newline"
	}
	return describeToken(p.t)
}

func describeToken(t token) string {
	switch t.tok {
	case EOF:
		return "end of file"
	case NEWLINE:
		if t.lit == "" {
			return "end of file"
		}
		return "newline"
	case IDENT:
		return "identifier " + t.lit
	case INT, FLOAT:
		return "number " + t.lit
	case STRING, RAWSTRING:
		s := t.lit
		if len(s) > 20 {
			s = s[:17] + "..."
		}
		return "string " + s
	case META:
		return t.lit
	case ILLEGAL:
		return strconv.Quote(t.lit)
	}
	if t.tok.IsKeyword() {
		return "keyword " + t.tok.String()
	}
	return "'" + t.tok.String() + "'"
}

// word reports whether the current token is the contextual keyword w: an
// identifier spelled as w (see Token.IsContextual).
func (p *parser) word(w Token) bool { return p.t.tok == IDENT && p.t.lit == w.String() }

// nextWord moves past the contextual keyword at the current token and the
// newlines after it: a line may break after when, prefix, to, input, tag and
// expect as after a keyword (the scanner, which cannot tell a keyword from
// a name there, ended the line).
func (p *parser) nextWord() {
	p.next()
	p.skipNewlines()
}

// stmtTok is the token that begins what starts at the current token, a
// statement or a section: the token itself, or SCHEMA or TEST for those
// contextual words unless what follows makes them a name (test = 1, a
// schema field test: int, schema.x). No statement begins with a name, so
// the words are free everywhere else: let test = 1, set .x = schema.
func (p *parser) stmtTok() Token {
	if p.word(RETURN) {
		// return E: whatever follows (.x, -1, (a)), no statement begins
		// with a name.
		return RETURN
	}
	w := p.sectionWord()
	if w == IDENT {
		return p.t.tok
	}
	switch n := p.peek(); {
	case n.tok.Precedence() > 0:
	case n.tok == ASSIGN, n.tok == QASSIGN, n.tok == COLON, n.tok == COMMA, n.tok == DOT, n.tok == LPAREN, n.tok == QUESTION:
	default:
		return w
	}
	return IDENT
}

// sectionWord is SCHEMA, TEST, CONST, FN, PARAM or IMPORT when the current token is that
// word, and IDENT otherwise.
func (p *parser) sectionWord() Token {
	for _, w := range [...]Token{SCHEMA, TEST, CONST, FN, PARAM, IMPORT} {
		if p.word(w) {
			return w
		}
	}
	return IDENT
}

// opensSection reports whether the current token plainly opens a schema or
// a test (schema followed by '{' or a name, test by its name or '{'): in a
// bracket left open, where schema and test may be names too.
func (p *parser) opensSection() bool {
	n := p.peek()
	switch p.sectionWord() {
	case SCHEMA:
		return n.tok == LBRACE || n.tok == IDENT || n.tok == NEWLINE && p.nextLineOpensBrace()
	case TEST:
		return n.tok == STRING || n.tok == RAWSTRING || n.tok == IDENT || n.tok == LBRACE
	case CONST, FN, PARAM:
		return n.tok == IDENT
	case IMPORT:
		return n.tok == STRING || n.tok == RAWSTRING
	}
	return false
}

// atStmtEnd reports whether the current token ends a statement.
func (p *parser) atStmtEnd() bool {
	switch p.t.tok {
	case NEWLINE, RBRACE, EOF:
		return true
	}
	// A newline skipped inside brackets, or consumed by error recovery.
	return p.afterNL || p.i > 0 && p.toks[p.i-1].tok == NEWLINE
}

// isStmtStart reports whether tok begins a statement or a top-level section.
func isStmtStart(tok Token) bool {
	switch tok {
	case SET, REMOVE, RENAME, LIFT, DROP, STOP, IF, LET, FOR, SCHEMA, TEST, POLICY, CONST, FN, PARAM, RETURN, IMPORT:
		return true
	}
	return false
}

// sync skips to where parsing can resume after an error: past the next
// newline, or to a closing brace, the end of the file, or a keyword that
// starts a line and a statement. Braces opened on the skipped line are
// skipped with their contents, so a bad line holding a {...} literal does
// not end the block around it. Among statements, a '{' that ends the bad
// line opens a block (`} elif .b {`, `while .x {`): its statements are
// parsed, so that their errors are found and its '}' closes it.
func (p *parser) sync() {
	p.exprLev = 0
	depth := 0
	for moved := false; ; moved = true {
		switch p.t.tok {
		case NEWLINE:
			if depth == 0 {
				p.next()
				return
			}
		case LBRACE:
			if depth == 0 && !p.inDecl && p.peek().bol && p.nest < maxNest {
				p.parseBlockBody()
				continue
			}
			depth++
		case RBRACE:
			if depth == 0 {
				return
			}
			depth--
		case EOF:
			return
		}
		if p.t.bol && isStmtStart(p.stmtTok()) {
			return
		}
		// In a schema or a test block every line is a unit, even when no
		// NEWLINE token ends the one before (map<string> ends in '>').
		if p.t.bol && p.inDecl && depth == 0 && moved {
			return
		}
		p.next()
	}
}

// skipToClose skips the rest of a bracketed construct after an error in it,
// up to and not including its closing token, keeping nested brackets
// balanced. It stops early where the bracket was evidently left open.
func (p *parser) skipToClose(close Token) {
	depth := 0
	for !p.atUnclosedEnd() {
		switch p.t.tok {
		case LPAREN, LBRACK, LBRACE:
			depth++
		case RPAREN, RBRACK, RBRACE:
			if depth == 0 {
				return
			}
			depth--
		}
		p.next()
	}
}

// ---------------------------------------------------------------- file

func (p *parser) parseFile() {
	f := p.file
	p.skipNewlines()
	if p.t.tok == POLICY {
		p.parseHeader()
	} else if p.word(MODULE) && (p.peek().tok == STRING || p.peek().tok == RAWSTRING) {
		p.parseModuleHeader()
	} else {
		p.errorAt(p.t.pos, p.t.end, CodeMissingHeader, `start the file with a line such as: policy "my-policy"`,
			"missing policy header: expected policy \"name\", found %s", p.describe())
	}

	// The sections come in a fixed order; state says how far the file got.
	// The declarations (schema, const, fn, param) come in any order among
	// themselves.
	const (
		inHeader = iota
		inDecls
		inStmts
		inTests
	)
	state := inHeader
	for {
		p.skipNewlines()
		switch p.stmtTok() {
		case EOF:
			f.EOF = p.t.pos
			return
		case POLICY:
			p.errorHere(CodeDuplicateHeader, "a file holds exactly one policy; put the other in its own file", "second policy header")
			p.next()
			p.sync()
		case IMPORT:
			if d := p.parseImport(); d != nil {
				if state > inDecls {
					p.errorAt(d.Pos(), d.Pos().Advance("import"), CodeSectionOrder, "move the import up, above the first statement",
						"import declarations come before the statements and tests")
				}
				f.Imports = append(f.Imports, d)
				state = max(state, inDecls)
			}
		case SCHEMA:
			if f.Module {
				p.notInModule("a schema")
			}
			s := p.parseSchema()
			switch {
			case f.Schema != nil:
				p.errorAt(s.Schema, s.Schema.Advance("schema"), CodeSectionOrder, "merge the two schema blocks into one", "second schema block; the first is at %s", f.Schema.Schema)
			case state > inDecls:
				p.errorAt(s.Schema, s.Schema.Advance("schema"), CodeSectionOrder, "move the schema block up, right after the policy header", "schema must come before the statements and tests")
				f.Schema = s
			default:
				f.Schema = s
			}
			if state < inDecls {
				state = inDecls
			}
		case CONST, FN, PARAM:
			var d Decl
			what := p.stmtTok()
			switch what {
			case CONST:
				d = p.parseConst()
			case FN:
				d = p.parseFunc()
			default:
				if f.Module {
					p.notInModule("a param")
				}
				d = p.parseParamDecl()
			}
			if d == nil {
				break
			}
			if state > inDecls {
				p.errorAt(d.Pos(), d.Pos().Advance(what.String()), CodeSectionOrder, "move the declaration up, above the first statement",
					"%s declarations come before the statements and tests", what)
			}
			f.Decls = append(f.Decls, d)
			if state < inDecls {
				state = inDecls
			}
		case TEST:
			f.Tests = append(f.Tests, p.parseTest())
			state = inTests
		case RBRACE:
			p.errorHere(CodeUnexpectedStmt, "", "unexpected '}' with no block to close")
			p.next()
		default:
			if f.Module && p.t.tok != RBRACE {
				p.notInModule("a statement")
			} else if state == inTests && isStmtStart(p.stmtTok()) {
				p.errorHere(CodeSectionOrder, "move the statement above the first test block", "statement after a test block; statements come before the tests")
			}
			if s := p.parseStmt(); s != nil {
				f.Stmts = append(f.Stmts, s)
			}
			if state < inStmts {
				state = inStmts
			}
		}
	}
}

func (p *parser) parseHeader() {
	f := p.file
	f.Policy = p.t.pos
	p.next()
	if lit, pos, ok := p.parseStringLit("policy name", `name the policy: policy "my-policy"`); ok {
		f.Name, f.NamePos = lit.Str, pos
	}
	if p.word(ONFAULT) {
		p.next()
		f.OnFaultPos = p.t.pos
		switch {
		case p.t.tok == DROP:
			f.OnFault = OnFaultDrop
			p.next()
		case p.word(KEEP):
			f.OnFault = OnFaultKeep
			p.next()
		default:
			f.OnFaultPos = Pos{}
			p.errorHere(CodeOnFault, "write on_fault drop, or on_fault keep (the default)", "expected drop or keep after on_fault, found %s", p.describe())
			p.sync()
			return
		}
	}
	p.expectStmtEnd("policy header")
}

// parseStringLit consumes a string literal, reporting E0026 if there is none.
func (p *parser) parseStringLit(what, hint string) (*BasicLit, Pos, bool) {
	if p.t.tok != STRING && p.t.tok != RAWSTRING {
		p.errorHere(CodeExpectedString, hint, "expected a string for the %s, found %s", what, p.describe())
		return nil, Pos{}, false
	}
	lit := p.basicLit()
	return lit, lit.ValuePos, true
}

// infixWords are built-ins people write between their operands, as in
// SQL or Python: drop when .msg contains "x".
var infixWords = map[string]bool{"contains": true, "matches": true, "starts_with": true, "ends_with": true}

// expectStmtEnd checks that the statement just parsed ends here, and skips
// the rest of the line if not.
func (p *parser) expectStmtEnd(what string) {
	if p.atStmtEnd() {
		p.afterNL = false
		if p.t.tok == NEWLINE {
			p.next()
		}
		return
	}
	hint := ""
	var prev token // the token before t, when it is a bare name (not a .field)
	if p.i > 0 && p.toks[p.i-1].tok == IDENT && (p.i < 2 || p.toks[p.i-2].tok != DOT) {
		prev = p.toks[p.i-1]
	}
	switch {
	case prev.lit == "not":
		hint = "the logical operators are && || and !: write !x for not x"
	case p.t.tok == IDENT && infixWords[p.t.lit]:
		hint = p.t.lit + " is a function: write " + p.t.lit + "(s, x)"
	case p.t.tok == QUESTION:
		hint = "there is no ?: operator: write if C { set .x = a } else { set .x = b }"
	case p.t.tok == ASSIGN:
		hint = "use == to compare; = assigns"
	case p.t.tok == IDENT && (p.t.lit == "and" || p.t.lit == "or" || p.t.lit == "not"):
		hint = "the logical operators are && || and !"
	case p.t.tok == IDENT && (p.t.lit == "elif" || p.t.lit == "elsif" || p.t.lit == "elseif"):
		hint = "write } else if C {"
	case p.t.tok == IF && (what == "drop" || what == "stop"):
		hint = "write " + what + " when C"
	case p.t.tok == LBRACE:
		hint = "a map literal must be written where a value is expected"
	}
	p.errorHere(CodeStmtEnd, hint, "unexpected %s after the %s; a statement ends at the end of its line", p.describe(), what)
	p.sync()
}

// ---------------------------------------------------------------- literals

// basicLit consumes the current literal token and decodes its value.
func (p *parser) basicLit() *BasicLit {
	t := p.t
	lit := &BasicLit{ValuePos: t.pos, Raw: t.lit}
	switch t.tok {
	case INT:
		lit.Kind = LitInt
		v, err := strconv.ParseInt(strings.ReplaceAll(t.lit, "_", ""), 10, 64)
		if err != nil {
			p.errorAt(t.pos, t.end, CodeNumberRange, "the largest int is 9223372036854775807; write a float such as 1e20 for bigger numbers",
				"integer literal %s is out of range for int", t.lit)
		}
		lit.Int = v
	case FLOAT:
		lit.Kind = LitFloat
		v, err := strconv.ParseFloat(strings.ReplaceAll(t.lit, "_", ""), 64)
		if err != nil && !p.errLines[t.pos.Line] {
			p.errorAt(t.pos, t.end, CodeNumberRange, "", "float literal %s is out of range for float", t.lit)
		}
		lit.Float = v
	case STRING:
		lit.Kind = LitString
		lit.Str = unquote(t.lit)
	case RAWSTRING:
		lit.Kind = LitString
		lit.Str = strings.TrimSuffix(t.lit[1:], "`")
	case TRUE, FALSE:
		lit.Kind = LitBool
		lit.Bool = t.tok == TRUE
	case NULL:
		lit.Kind = LitNull
	}
	p.next()
	return lit
}

// unquote decodes a "..." literal up to its closing quote. The scanner has
// already reported bad escapes; here they decode as best they can.
func unquote(lit string) string {
	s := strings.TrimPrefix(lit, `"`)
	if i := strings.IndexAny(s, `"\`); i >= 0 && s[i] == '"' {
		return s[:i]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			break
		}
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'u':
			if j := strings.IndexByte(s[i:], '}'); j > 2 && s[i+1] == '{' {
				if v, err := strconv.ParseUint(s[i+2:i+j], 16, 32); err == nil {
					b.WriteRune(rune(v))
					i += j
					continue
				}
			}
			b.WriteString(`\u`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
