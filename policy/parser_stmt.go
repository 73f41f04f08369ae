package policy

import "fmt"

// parseStmt parses one statement and the end of its line. It returns a
// BadStmt for a line it cannot make sense of, after reporting it.
func (p *parser) parseStmt() Stmt {
	p.exprLev, p.afterNL = 0, false
	if p.word(RETURN) {
		return p.parseReturn()
	}
	if p.isSplit() {
		return p.parseSplit()
	}
	if k := p.stateKind(); k != ILLEGAL {
		return p.parseState(k)
	}
	switch p.t.tok {
	case SET:
		return p.parseSet()
	case REMOVE:
		return p.parseRemove()
	case RENAME:
		return p.parseRename()
	case LIFT:
		return p.parseLift()
	case DROP:
		s := &DropStmt{Drop: p.t.pos}
		s.Cond = p.parseCond("drop")
		p.expectStmtEnd("drop statement")
		return s
	case STOP:
		s := &StopStmt{Stop: p.t.pos}
		s.Cond = p.parseCond("stop")
		p.expectStmtEnd("stop statement")
		return s
	case IF:
		s := p.parseIf()
		p.expectStmtEnd("if statement")
		return s
	case LET:
		return p.parseLet()
	case FOR:
		return p.parseFor()
	}

	from := p.t.pos
	hint := ""
	switch {
	case p.t.tok == ELSE:
		hint = "else goes right after the } that closes an if block: } else {"
	case p.t.tok == IDENT && p.peek().tok == ASSIGN:
		hint = "declare a local with let " + p.t.lit + " = ..., or write a field with set ." + p.t.lit + " = ..."
	case p.t.tok == DOT || p.t.tok == META:
		hint = "to write a field, say set: set .a = value"
	case p.t.tok == IDENT && p.peek().tok == LPAREN:
		hint = "a call is an expression; use its value, as in set .x = " + p.t.lit + "(...)"
	case p.t.tok == QUO && p.peek().tok == QUO:
		hint = "comments start with #"
	case p.t.tok.Precedence() > 0:
		hint = "a newline before an operator ends the statement; break the line after the operator instead"
	}
	p.errorHere(CodeUnexpectedStmt, hint, "expected a statement, found %s", p.describe())
	p.next()
	p.sync()
	return &BadStmt{From: from, To: p.prevEnd()}
}

// parsePath parses the operand of set, remove, rename or lift. A bare name
// there is a syntax error: it reads like a field without its dot. Other
// expressions that are not record paths (m["k"] on a local, a call, a
// literal) are left to the checker, which knows what they are.
func (p *parser) parsePath(stmt string) Expr {
	x := p.parsePostfix()
	if id, ok := x.(*Ident); ok {
		p.errorAt(x.Pos(), x.End(), CodeExpectedPath, "a record path starts with a dot: ."+id.Name+"; locals are immutable",
			"%s needs a record path such as .a.b, found the name %s", stmt, id.Name)
	}
	return x
}

// exprKind names an expression for a message.
func exprKind(x Expr) string {
	switch x := x.(type) {
	case *Ident:
		return "the name " + x.Name
	case *CallExpr:
		return "a call of " + x.Fun.Name
	case *BasicLit:
		return "the literal " + x.Raw
	case *ListLit:
		return "a list literal"
	case *MapLit:
		return "a map literal"
	case *ParenExpr:
		return "a parenthesized expression"
	case *UnaryExpr, *BinaryExpr:
		return "an operator expression"
	}
	return "an expression"
}

func (p *parser) parseSet() Stmt {
	s := &SetStmt{Set: p.t.pos}
	p.next()
	s.Target = p.parsePath("set")
	s.OpPos, s.Op = p.t.pos, p.t.tok
	switch p.t.tok {
	case ASSIGN, QASSIGN:
		p.next()
	case EQL:
		// Report, then read on as if it were '=', to find later mistakes.
		p.errorHere(CodeAssignOp, "use = to assign; == compares", "expected '=' after the path in set, found '=='")
		s.Op = ASSIGN
		p.next()
	default:
		hint := "write set .path = value"
		switch op := p.t.tok; {
		case op == COLON:
			hint = "use = to assign, not :"
		case (op == ADD || op == SUB || op == MUL || op == QUO || op == REM) &&
			p.i+1 < len(p.toks) && p.toks[p.i+1].tok == ASSIGN && p.toks[p.i+1].pos.Offset == p.t.end.Offset:
			path := string(p.src[s.Target.Pos().Offset:s.Target.End().Offset])
			hint = fmt.Sprintf("there is no %s=: write set %s = %s %s value", op, path, path, op)
		}
		p.errorHere(CodeAssignOp, hint, "expected '=' after the path in set, found %s", p.describe())
		p.sync()
		return &BadStmt{From: s.Set, To: p.prevEnd()}
	}
	s.Value = p.parseExpr()
	p.expectStmtEnd("set statement")
	return s
}

func (p *parser) parseRemove() Stmt {
	s := &RemoveStmt{Remove: p.t.pos}
	p.next()
	for {
		s.Targets = append(s.Targets, p.parsePath("remove"))
		if p.t.tok != COMMA {
			break
		}
		p.next()
	}
	if p.t.tok == DOT && !p.atStmtEnd() {
		p.errorHere(CodeUnexpected, "write remove .a, .b", "expected ',' between the paths in remove, found %s", p.describe())
		p.sync()
		return s
	}
	p.expectStmtEnd("remove statement")
	return s
}

func (p *parser) parseRename() Stmt {
	s := &RenameStmt{Rename: p.t.pos}
	p.next()
	s.From = p.parsePath("rename")
	if !p.word(TO) {
		p.errorHere(CodeUnexpected, "write rename .old to .new", "expected 'to' after the path in rename, found %s", p.describe())
		p.sync()
		return &BadStmt{From: s.Rename, To: p.prevEnd()}
	}
	s.ToPos = p.t.pos
	p.nextWord()
	s.To = p.parsePath("rename")
	p.expectStmtEnd("rename statement")
	return s
}

func (p *parser) parseLift() Stmt {
	s := &LiftStmt{Lift: p.t.pos}
	p.next()
	s.Target = p.parsePath("lift")
	if p.word(PREFIX) {
		p.nextWord()
		if lit, _, ok := p.parseStringLit("prefix", `write lift .k prefix "k_"`); ok {
			s.Prefix = lit
		}
	}
	p.expectStmtEnd("lift statement")
	return s
}

// parseCond parses the optional `when C` of drop and stop.
func (p *parser) parseCond(stmt string) Expr {
	p.next()
	switch {
	case p.word(WHEN):
		p.nextWord()
		return p.parseExpr()
	case p.t.tok == IF:
		p.errorHere(CodeDropIf, "write "+stmt+" when C", "expected when after %s, found if", stmt)
		p.next()
		return p.parseExpr()
	case !p.atStmtEnd():
		p.errorHere(CodeStmtEnd, "a condition follows when: "+stmt+" when C",
			"unexpected %s after %s; a statement ends at the end of its line", p.describe(), stmt)
		p.sync()
	}
	return nil
}

// parseIf parses an if statement with its else chain, without the line end.
func (p *parser) parseIf() *IfStmt {
	s := &IfStmt{If: p.t.pos}
	p.next()
	s.Cond = p.parseExpr()
	s.Body = p.parseBlock("if condition")
	p.skipNewlinesBefore(ELSE)
	if p.t.tok == ELSE {
		p.next()
		if p.t.tok == IF {
			s.Else = p.parseElseIf()
		} else {
			s.Else = p.parseBlock("else")
		}
	}
	return s
}

// parseElseIf parses the if of an else if, one level deeper: it is the
// else block { if ... } it stands for.
func (p *parser) parseElseIf() *IfStmt {
	defer p.leave()
	if !p.enter() {
		s := &IfStmt{If: p.t.pos}
		p.next()
		p.sync()
		s.Cond = &BadExpr{From: s.If, To: s.If}
		s.Body = &Block{Lbrace: s.If, Rbrace: s.If}
		return s
	}
	return p.parseIf()
}

// parseBlock parses { stmts }. When the '{' is missing it looks for one
// later on the line, so that `if .a = 1 {` still parses its body.
func (p *parser) parseBlock(after string) *Block {
	p.skipNewlinesBefore(LBRACE)
	if p.t.tok != LBRACE {
		hint := "a body goes in braces: if C { ... }"
		switch {
		case p.t.tok == ASSIGN:
			hint = "use == to compare; = assigns"
		case after == "else":
			hint = "write } else { ... } or } else if C { ... }"
		case after == "for clause":
			hint = "write for k, v in E { ... }"
		}
		p.errorHere(CodeExpectedBrace, hint, "expected '{' after the %s, found %s", after, p.describe())
		j := -1
		for k := p.i; k < len(p.toks) && p.toks[k].tok != NEWLINE && p.toks[k].tok != EOF; k++ {
			if p.toks[k].tok == LBRACE {
				j = k
			}
		}
		if j < 0 {
			pos := p.prevEnd()
			p.sync()
			return &Block{Lbrace: pos, Rbrace: pos}
		}
		p.seek(j)
	}
	return p.parseBlockBody()
}

// parseBlockBody parses a block from its '{', the current token.
func (p *parser) parseBlockBody() *Block {
	b := &Block{Lbrace: p.t.pos}
	defer p.leave()
	if !p.enter() {
		// Too deep: skip the block, with the blocks in it.
		for depth := 0; p.t.tok != EOF; p.next() {
			switch p.t.tok {
			case LBRACE:
				depth++
			case RBRACE:
				depth--
			}
			if depth == 0 {
				b.Rbrace = p.t.pos
				p.next()
				return b
			}
		}
		b.Rbrace = p.prevEnd()
		return b
	}
	p.next()
	for {
		if rbrace, done := p.bodyEnd(b.Lbrace, startsDecl, "add a } to close the block", "this block"); done {
			b.Rbrace = rbrace
			return b
		}
		b.Stmts = append(b.Stmts, p.parseStmt())
	}
}

// startsDecl reports whether tok starts what only the top level holds.
func startsDecl(tok Token) bool {
	return tok == TEST || tok == SCHEMA || tok == POLICY || tok == CONST || tok == FN || tok == PARAM
}

// bodyEnd is called before each item of a {...} body (a block, a test, an
// object type) whose '{' is at lbrace, and skips the blank lines before
// it. At '}' it takes the brace; at the end of the file, or on a line that
// starts with what ends says cannot be inside, it reports the '{' of what
// as never closed. Either way the body is over: it returns where it ends
// and true. Otherwise an item follows: false.
func (p *parser) bodyEnd(lbrace Pos, ends func(Token) bool, hint, what string) (Pos, bool) {
	p.skipNewlines()
	switch tok := p.t.tok; {
	case tok == RBRACE:
		rbrace := p.t.pos
		p.next()
		return rbrace, true
	case tok == EOF || p.t.bol && ends(p.stmtTok()):
		p.errorAt(lbrace, lbrace.Advance("{"), CodeUnclosed, hint, "the '{' of %s is never closed (found %s)", what, p.describe())
		return p.prevEnd(), true
	}
	return Pos{}, false
}

func (p *parser) parseLet() Stmt {
	s := &LetStmt{Let: p.t.pos}
	p.next()
	name := p.parseName("let")
	if name == nil {
		p.sync()
		return &BadStmt{From: s.Let, To: p.prevEnd()}
	}
	s.Name = name
	switch p.t.tok {
	case ASSIGN:
		p.next()
	case EQL, QASSIGN:
		p.errorHere(CodeAssignOp, "let binds a name with =: let x = value", "expected '=' after the name in let, found %s", p.describe())
		p.next()
	default:
		p.errorHere(CodeAssignOp, "let binds a name with =: let x = value", "expected '=' after the name in let, found %s", p.describe())
		p.sync()
		return &BadStmt{From: s.Let, To: p.prevEnd()}
	}
	s.Value = p.parseExpr()
	p.expectStmtEnd("let statement")
	return s
}

// parseName parses a variable name for let or for.
func (p *parser) parseName(stmt string) *Ident {
	switch {
	case p.t.tok == IDENT:
		id := &Ident{NamePos: p.t.pos, Name: p.t.lit}
		p.next()
		return id
	case p.t.tok.IsKeyword():
		p.errorHere(CodeKeywordName, "choose another name, such as "+p.t.lit+"_ (the reserved words are "+reservedList+")",
			"%s is a reserved word and cannot name a variable", p.t.lit)
		if p.reservedNames == nil {
			p.reservedNames = map[string]bool{}
		}
		p.reservedNames[p.t.lit] = true
		id := &Ident{NamePos: p.t.pos, Name: p.t.lit}
		p.next()
		return id
	}
	hint := ""
	if stmt == "let" && p.t.tok == DOT {
		hint = "let declares a local; to write a record field use set .a = value"
	}
	p.errorHere(CodeUnexpected, hint, "expected a variable name after %s, found %s", stmt, p.describe())
	return nil
}

func (p *parser) parseFor() Stmt {
	s := &ForStmt{For: p.t.pos}
	p.next()
	first := p.parseName("for")
	if first == nil {
		p.sync()
		return &BadStmt{From: s.For, To: p.prevEnd()}
	}
	if p.t.tok == COMMA {
		p.next()
		s.Key = first
		if s.Value = p.parseName("for"); s.Value == nil {
			p.sync()
			return &BadStmt{From: s.For, To: p.prevEnd()}
		}
	} else {
		p.errorAt(first.Pos(), first.End(), CodeForNames, "write for _, "+first.Name+" in E (or for "+first.Name+", _ in E for the keys)",
			"for needs two names, the key (or index) and the value")
		s.Key, s.Value = &Ident{NamePos: first.NamePos, Name: "_"}, first
	}
	if p.t.tok != IN {
		p.errorHere(CodeUnexpected, "write for k, v in E { ... }", "expected in after the loop variables, found %s", p.describe())
		p.sync()
		return &BadStmt{From: s.For, To: p.prevEnd()}
	}
	p.next()
	s.X = p.parseExpr()
	s.Body = p.parseBlock("for clause")
	p.expectStmtEnd("for statement")
	return s
}
