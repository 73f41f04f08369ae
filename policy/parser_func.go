package policy

// This file parses the declarations of names: const, fn and param, and the
// return statement of function bodies.

// parseConst parses `const name = E` from the word const.
func (p *parser) parseConst() Decl {
	d := &ConstDecl{Const: p.t.pos}
	p.next()
	d.Name = p.declName("const")
	if d.Name == nil {
		p.sync()
		return nil
	}
	if p.t.tok != ASSIGN {
		p.errorHere(CodeAssignOp, "a constant is written const name = value", "expected '=' after the name in const, found %s", p.describe())
		if p.t.tok != EQL && p.t.tok != COLON {
			p.sync()
			return nil
		}
	}
	p.next()
	d.Value = p.parseExpr()
	p.expectStmtEnd("const declaration")
	return d
}

// parseParamDecl parses `param name: T [= E]` from the word param.
func (p *parser) parseParamDecl() Decl {
	d := &ParamDecl{Param: p.t.pos}
	p.next()
	if d.Name = p.declName("param"); d.Name == nil {
		p.sync()
		return nil
	}
	if p.t.tok != COLON {
		p.errorHere(CodeParamHeader, "write param "+d.Name.Name+": string, or param "+d.Name.Name+": int = 3",
			"expected ':' and a type after the parameter %s, found %s", d.Name.Name, p.describe())
		p.sync()
		return nil
	}
	p.next()
	d.Type = p.parseType()
	if _, bad := d.Type.(*BadType); bad {
		p.sync()
		return nil
	}
	switch {
	case p.t.tok == ASSIGN:
		p.next()
		d.Default = p.parseExpr()
	case p.t.bol:
		// array<string> ends in '>', after which the scanner makes no
		// NEWLINE (an operator may continue on the next line): the next
		// line's first token ends the declaration all the same.
		return d
	}
	p.expectStmtEnd("param declaration")
	return d
}

// declName parses the name a const or fn declares. A reserved word is
// E0021 and still names it, so that its uses add no error.
func (p *parser) declName(what string) *Ident {
	if p.t.tok == IDENT || p.t.tok.IsKeyword() {
		return p.parseName(what)
	}
	p.errorHere(CodeUnexpected, "", "expected a name after %s, found %s", what, p.describe())
	return nil
}

// parseFunc parses `fn name(p: T, q: U = E) R { ... }` from the word fn.
func (p *parser) parseFunc() Decl {
	d := &FuncDecl{Fn: p.t.pos}
	p.next()
	if d.Name = p.declName("fn"); d.Name == nil {
		p.sync()
		return nil
	}
	if p.t.tok != LPAREN {
		p.errorHere(CodeFuncHeader, "write fn "+d.Name.Name+"(s: string) string { ... }", "expected '(' after the function's name, found %s", p.describe())
		p.syncFunc()
		return nil
	}
	d.Lparen = p.t.pos
	if !p.params(d) {
		p.syncFunc()
		return nil
	}
	if p.t.tok == LBRACE && !p.objectTypeAhead() || p.atStmtEnd() {
		p.errorHere(CodeFuncHeader, "declare what the function returns: fn "+d.Name.Name+"(...) string { ... }",
			"expected the result type after the parameters, found %s", p.describe())
		d.Result = &BadType{From: p.t.pos, To: p.t.pos}
	} else {
		d.Result = p.parseType()
	}
	p.inFunc = true
	d.Body = p.parseBlock("function header")
	p.inFunc = false
	p.expectStmtEnd("function")
	return d
}

// syncFunc skips the rest of a broken function header; the body after it
// is parsed as a function's, so that its own mistakes are found.
func (p *parser) syncFunc() {
	p.inFunc = true
	p.sync()
	p.inFunc = false
}

// params parses the parameter list of d from its '(' up to and past ')'.
// Newlines inside the parentheses are white space, as in a call.
func (p *parser) params(d *FuncDecl) bool {
	p.exprLev++
	p.next()
	defer func() { p.exprLev-- }()
	for p.t.tok != RPAREN {
		if p.t.tok != IDENT && !p.t.tok.IsKeyword() {
			p.errorHere(CodeFuncHeader, "a parameter is written name: type, as in s: string", "expected a parameter name, found %s", p.describe())
			return false
		}
		prm := &Param{Name: p.parseName("fn")}
		if p.t.tok != COLON {
			p.errorHere(CodeFuncHeader, "give each parameter a type: "+prm.Name.Name+": string", "expected ':' and a type after the parameter %s, found %s", prm.Name.Name, p.describe())
			return false
		}
		p.next()
		prm.Type = p.parseType()
		if _, bad := prm.Type.(*BadType); bad {
			return false
		}
		if p.t.tok == ASSIGN {
			p.next()
			prm.Default = p.parseExpr()
		}
		d.Params = append(d.Params, prm)
		switch p.t.tok {
		case COMMA:
			p.next()
		case RPAREN:
		default:
			p.errorHere(CodeFuncHeader, "separate parameters with commas", "expected ',' or ')' after a parameter, found %s", p.describe())
			return false
		}
	}
	d.Rparen = p.t.pos
	p.exprLev--
	p.next()
	p.exprLev++
	return true
}

// objectTypeAhead reports whether the '{' at the current token opens an
// object type ({ name: T ... } or { ... }) rather than a body.
func (p *parser) objectTypeAhead() bool {
	j := p.i + 1
	for j < len(p.toks)-1 && p.toks[j].tok == NEWLINE {
		j++
	}
	t := p.toks[j]
	if t.tok == ELLIPSIS {
		return true
	}
	return (t.tok == IDENT || t.tok == STRING || t.tok.IsKeyword()) && j+1 < len(p.toks) && p.toks[j+1].tok == COLON
}

// parseReturn parses `return E`. Outside a function it is E0031, parsed
// all the same so that the line's other mistakes are found.
func (p *parser) parseReturn() Stmt {
	s := &ReturnStmt{Return: p.t.pos}
	if !p.inFunc {
		p.errorHere(CodeReturnOutside, "a policy ends with drop or stop; return is for the body of a fn",
			"return outside a function")
	}
	p.next()
	s.Value = p.parseExpr()
	p.expectStmtEnd("return statement")
	return s
}
