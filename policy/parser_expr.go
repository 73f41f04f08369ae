package policy

import (
	"strconv"
	"strings"
)

// parseExpr parses an expression. Precedence climbing follows
// Token.Precedence; ?? is right-associative, every other operator left.
func (p *parser) parseExpr() Expr { return p.parseBinary(1) }

func (p *parser) parseBinary(prec int) Expr {
	x := p.parseUnary()
	for {
		op := p.t.tok
		oprec := op.Precedence()
		if oprec == 0 || oprec < prec {
			return x
		}
		pos := p.t.pos
		p.next()
		next := oprec + 1
		if op == COALESCE {
			next = oprec
		}
		var y Expr
		if op == IN && p.t.tok == LPAREN && (p.i+1 >= len(p.toks) || p.toks[p.i+1].tok != LBRACK) {
			// x in ("a", "b"), as in SQL or Python: read it as the list
			// it was meant to be, so the rest of the line parses.
			l := p.parseListIn(RPAREN, "list")
			p.errorAt(l.Pos(), l.End(), CodeInList, `write the values in brackets: x in ["a", "b"]`,
				"in needs a list literal in brackets on its right, found parentheses")
			x = &BinaryExpr{X: x, OpPos: pos, Op: op, Y: l}
			continue
		}
		y = p.parseBinary(next)
		if op == IN {
			// A name may stand for a list: a constant or a parameter,
			// or a module's constant (net.codes).
			_, isName := Unparen(y).(*Ident)
			if fx, ok := Unparen(y).(*FieldExpr); ok && !fx.Quoted {
				_, isName = fx.X.(*Ident)
			}
			if _, ok := Unparen(y).(*ListLit); !ok && !isName && !isBad(y) {
				p.errorAt(y.Pos(), y.End(), CodeInList, `write the values in brackets: x in ["a", "b"]`,
					"in needs a list literal on its right, found %s", exprKind(y))
			}
		}
		x = &BinaryExpr{X: x, OpPos: pos, Op: op, Y: y}
	}
}

func isBad(x Expr) bool {
	_, ok := x.(*BadExpr)
	return ok
}

func (p *parser) parseUnary() Expr {
	switch p.t.tok {
	case NOT, SUB:
		defer p.leave()
		if !p.enter() {
			return &BadExpr{From: p.t.pos, To: p.t.pos}
		}
		pos, op := p.t.pos, p.t.tok
		p.next()
		if op == SUB && p.t.tok == INT {
			// -9223372036854775808 is an int: let its magnitude through,
			// wrapped to MinInt64, which negation leaves as it is.
			if u, err := strconv.ParseUint(strings.ReplaceAll(p.t.lit, "_", ""), 10, 64); err == nil && u == 1<<63 {
				lit := &BasicLit{ValuePos: p.t.pos, Kind: LitInt, Raw: p.t.lit, Int: -1 << 63}
				p.next()
				return &UnaryExpr{OpPos: pos, Op: op, X: p.parsePostfixOf(lit)}
			}
		}
		return &UnaryExpr{OpPos: pos, Op: op, X: p.parseUnary()}
	}
	return p.parsePostfix()
}

func (p *parser) parsePostfix() Expr { return p.parsePostfixOf(p.parseOperand()) }

// parsePostfixOf parses the field accesses, indexes and calls after x.
func (p *parser) parsePostfixOf(x Expr) Expr {
	for {
		switch p.t.tok {
		case DOT:
			if p.t.pos.Offset != p.prevEnd().Offset {
				return x // .a .b is two paths, not .a.b
			}
			if _, root := x.(*RootExpr); root {
				p.errorAt(p.t.pos, p.t.end, CodeUnexpected, "a path is written .a.b", "unexpected '.' after '.'")
				p.next()
				return &BadExpr{From: x.Pos(), To: p.prevEnd()}
			}
			nt := p.peek()
			if nt.pos.Offset != p.t.end.Offset || nt.tok != IDENT && nt.tok != STRING && nt.tok != RAWSTRING {
				hint := ""
				if nt.tok == INT {
					hint = "index an array with brackets: .a[0]"
				}
				p.errorAt(p.t.pos, p.t.end, CodeUnexpected, hint, "expected a field name right after '.', found %s", describeToken(nt))
				p.next()
				return &BadExpr{From: x.Pos(), To: p.prevEnd()}
			}
			dot := p.t.pos
			p.next()
			x = p.field(x, dot)
		case LBRACK:
			if p.afterNL && p.t.bol {
				return x // a list on the next line, not an index
			}
			if !p.enter() {
				p.leave()
				return &BadExpr{From: x.Pos(), To: p.t.pos}
			}
			ix := &IndexExpr{X: x, Lbrack: p.t.pos}
			p.exprLev++
			p.next()
			if p.t.tok == RBRACK {
				p.errorHere(CodeExpectedExpr, "", "expected an index or key inside [], found ']'")
				ix.Index = &BadExpr{From: p.t.pos, To: p.t.pos}
			} else {
				ix.Index = p.parseExpr()
			}
			p.exprLev--
			ix.Rbrack = p.expectClose(RBRACK, ix.Lbrack, "index")
			p.leave()
			x = ix
		case LPAREN:
			if p.afterNL && p.t.bol {
				return x
			}
			if c := p.qualifiedCall(x); c != nil {
				x = c
				continue
			}
			from := x.Pos()
			p.errorAt(p.t.pos, p.t.end, CodeBadCall, "only the built-in functions can be called, by name: len(x)", "cannot call %s", exprKind(x))
			p.parseArgs()
			return &BadExpr{From: from, To: p.prevEnd()}
		default:
			return x
		}
	}
}

// field makes the FieldExpr for the name token after a '.' at dot.
func (p *parser) field(x Expr, dot Pos) Expr {
	f := &FieldExpr{X: x, Dot: dot, NamePos: p.t.pos}
	if p.t.tok == IDENT {
		f.Name = p.t.lit
		p.next()
	} else {
		f.Name, f.Quoted = p.basicLit().Str, true
	}
	return f
}

func (p *parser) parseOperand() Expr {
	switch p.t.tok {
	case DOT:
		dot := p.t.pos
		root := &RootExpr{Dot: dot}
		nt := p.peek()
		p.next()
		if nt.pos.Offset == p.t.pos.Offset && p.t.pos.Offset == dot.Offset+1 &&
			(nt.tok == IDENT || nt.tok == STRING || nt.tok == RAWSTRING) {
			return p.field(root, dot)
		}
		return root
	case META:
		m := &MetaExpr{Percent: p.t.pos, Name: p.t.lit[1:]}
		if m.Name != "tag" && m.Name != "time" {
			p.errorHere(CodeUnknownMeta, "", "unknown metadata %s; the record's metadata are %%tag and %%time", p.t.lit)
		}
		p.next()
		return m
	case REM:
		// % then a name, directly: metadata, which the scanner read as
		// modulo after a word that may be a name (drop when %tag == "x").
		if n := p.peek(); n.tok == IDENT && n.pos.Offset == p.t.end.Offset {
			m := &MetaExpr{Percent: p.t.pos, Name: n.lit}
			if m.Name != "tag" && m.Name != "time" {
				p.errorAt(p.t.pos, n.end, CodeUnknownMeta, "", "unknown metadata %%%s; the record's metadata are %%tag and %%time", n.lit)
			}
			p.next()
			p.next()
			return m
		}
	case IDENT:
		id := &Ident{NamePos: p.t.pos, Name: p.t.lit}
		p.next()
		if p.t.tok == LPAREN && !p.afterNL {
			c := &CallExpr{Fun: id}
			c.Lparen, c.Args, c.Rparen = p.parseArgs()
			return c
		}
		return id
	case INT, FLOAT, STRING, RAWSTRING, TRUE, FALSE, NULL:
		return p.basicLit()
	case POLICY, SET, REMOVE, RENAME, LIFT, DROP, STOP, IF, ELSE, LET, FOR, IN:
		if p.reservedNames[p.t.lit] {
			// A reserved word a let or for declared (E0021 there): read
			// it as that name, not as one more error.
			id := &Ident{NamePos: p.t.pos, Name: p.t.lit}
			p.next()
			return id
		}
	case LPAREN:
		defer p.leave()
		if !p.enter() {
			return &BadExpr{From: p.t.pos, To: p.t.pos}
		}
		x := &ParenExpr{Lparen: p.t.pos}
		p.exprLev++
		p.next()
		x.X = p.parseExpr()
		p.exprLev--
		x.Rparen = p.expectClose(RPAREN, x.Lparen, "parenthesis")
		return x
	case LBRACK:
		return p.parseList()
	case LBRACE:
		return p.parseMap()
	}
	hint := ""
	switch {
	case p.t.tok == QUO && p.peek().tok == QUO:
		hint = "comments start with #"
	case p.t.tok == ADD:
		hint = "there is no unary +; write the number alone"
	case p.t.tok == ASSIGN:
		hint = "use == to compare"
	}
	pos := p.t.pos
	p.errorHere(CodeExpectedExpr, hint, "expected an expression, found %s", p.describe())
	// Consume an operator so that parsing moves on, but keep anything that
	// ends a construct, where the caller recovers.
	if p.t.tok.IsOperator() && !isCloser(p.t.tok) && !p.afterNL {
		p.next()
	}
	return &BadExpr{From: pos, To: pos}
}

func isCloser(tok Token) bool {
	switch tok {
	case RPAREN, RBRACK, RBRACE, COMMA, COLON:
		return true
	}
	return false
}

// atUnclosedEnd reports whether a bracketed construct has run into something
// that cannot be inside it: the end of the file, or a statement keyword
// starting a new line. The bracket was then left open by mistake.
func (p *parser) atUnclosedEnd() bool {
	if p.t.tok == EOF {
		return true
	}
	if !p.afterNL || !p.t.bol {
		return false
	}
	if p.inDecl && (p.word(INPUT) || p.word(TAG) || p.word(EXPECT)) {
		return true
	}
	return p.t.tok != IDENT && isStmtStart(p.t.tok) || p.opensSection()
}

// expectClose consumes the closing token of a bracket opened at open.
func (p *parser) expectClose(tok Token, open Pos, what string) Pos {
	pos := p.t.pos
	if p.t.tok == tok {
		p.next()
		return pos
	}
	code := CodeUnexpected
	if p.atUnclosedEnd() {
		code = CodeUnclosed
	}
	p.errorHere(code, "", "expected '%s' to close the %s opened at %s, found %s", tok, what, open, p.describe())
	return p.prevEnd()
}

// parseArgs parses a parenthesized argument list.
func (p *parser) parseArgs() (lparen Pos, args []Expr, rparen Pos) {
	lparen = p.t.pos
	defer p.leave()
	if !p.enter() {
		return lparen, nil, lparen
	}
	p.exprLev++
	p.next()
	for p.t.tok != RPAREN && !p.atUnclosedEnd() {
		args = append(args, p.parseExpr())
		if !p.elemEnd(RPAREN, "argument list", "") {
			break
		}
	}
	p.exprLev--
	rparen = p.expectClose(RPAREN, lparen, "argument list")
	return lparen, args, rparen
}

// elemEnd ends an element of a comma-separated list that close closes: it
// takes the comma and reports whether another element may follow. Any
// other token but close is an error, with commaHint as the hint when the
// element ended its line, after which the list is skipped to close.
func (p *parser) elemEnd(close Token, what, commaHint string) bool {
	if p.t.tok == COMMA {
		p.next()
		return true
	}
	if p.t.tok != close && !p.atUnclosedEnd() {
		hint := ""
		if p.afterNL {
			hint = commaHint
		}
		p.errorHere(CodeUnexpected, hint, "expected ',' or '%s' in the %s, found %s", close, what, p.describe())
		p.skipToClose(close)
	}
	return false
}

func (p *parser) parseList() Expr { return p.parseListIn(RBRACK, "list") }

// parseListIn parses a list whose elements end at close: ] for a list
// literal, ) for the x in (a, b) people write by mistake.
func (p *parser) parseListIn(close Token, what string) *ListLit {
	l := &ListLit{Lbrack: p.t.pos}
	defer p.leave()
	if !p.enter() {
		l.Rbrack = l.Lbrack
		return l
	}
	p.exprLev++
	p.next()
	for p.t.tok != close && !p.atUnclosedEnd() {
		l.Elems = append(l.Elems, p.parseExpr())
		if !p.elemEnd(close, what, "separate the elements with commas") {
			break
		}
	}
	p.exprLev--
	l.Rbrack = p.expectClose(close, l.Lbrack, what)
	return l
}

func (p *parser) parseMap() Expr {
	m := &MapLit{Lbrace: p.t.pos}
	defer p.leave()
	if !p.enter() {
		m.Rbrace = m.Lbrace
		return m
	}
	p.exprLev++
	p.next()
	for p.t.tok != RBRACE && !p.atUnclosedEnd() {
		var key *BasicLit
		switch tok := p.t.tok; {
		case tok == STRING || tok == RAWSTRING:
			key = p.basicLit()
		case tok == IDENT || tok.IsKeyword():
			p.errorHere(CodeMapKey, `quote the key: "`+p.t.lit+`": value`, "map literal key %s is not a quoted string", p.t.lit)
			key = &BasicLit{ValuePos: p.t.pos, Kind: LitString, Raw: Quote(p.t.lit), Str: p.t.lit}
			p.next()
		default:
			p.errorHere(CodeMapKey, `a map literal is {"key": value, ...}`, "expected a quoted key in the map literal, found %s", p.describe())
			p.skipToClose(RBRACE)
		}
		if key == nil {
			break
		}
		e := &MapEntry{Key: key, Colon: p.t.pos}
		if p.t.tok != COLON {
			hint := ""
			if p.t.tok == ASSIGN {
				hint = `write "key": value`
			}
			p.errorHere(CodeUnexpected, hint, "expected ':' after the key %s, found %s", key.Raw, p.describe())
			p.skipToClose(RBRACE)
			break
		}
		p.next()
		e.Value = p.parseExpr()
		m.Entries = append(m.Entries, e)
		if !p.elemEnd(RBRACE, "map literal", "separate the entries with commas") {
			break
		}
	}
	p.exprLev--
	m.Rbrace = p.expectClose(RBRACE, m.Lbrace, "map literal")
	return m
}
