package policy

// This file parses what modules add to the language: the module header,
// import declarations, and the assert lines of a module's tests.

// parseModuleHeader parses `module "name"`: the file is a module, which
// holds imports, constants, functions and tests only.
func (p *parser) parseModuleHeader() {
	f := p.file
	f.Policy, f.Module = p.t.pos, true
	p.next()
	if lit, pos, ok := p.parseStringLit("module name", `name the module: module "pii"`); ok {
		f.Name, f.NamePos = lit.Str, pos
	}
	if p.word(ONFAULT) {
		p.errorHere(CodeModuleBody, "on_fault belongs to the policies that import the module", "a module has no on_fault: it runs no records")
		p.sync()
		return
	}
	p.expectStmtEnd("module header")
}

// notInModule reports what, at the current token, in a module file.
func (p *parser) notInModule(what string) {
	p.errorHere(CodeModuleBody, "a module holds import, const, fn and test only: move it to a policy that imports the module",
		"%s in module %q", what, p.file.Name)
}

// parseImport parses `import "path.policy" [as name]` from the word import.
func (p *parser) parseImport() *ImportDecl {
	d := &ImportDecl{Import: p.t.pos}
	p.next()
	if p.t.tok != STRING && p.t.tok != RAWSTRING {
		p.errorHere(CodeImportDecl, `write import "pii.policy", the module's file relative to this one`,
			"expected the module's path after import, found %s", p.describe())
		p.sync()
		return nil
	}
	d.Path = p.basicLit()
	if p.word(AS) {
		d.As = p.t.pos
		p.next()
		if p.t.tok != IDENT {
			p.errorHere(CodeImportDecl, `write import "pii.policy" as p: a name to call its functions by, p.mask(.msg)`,
				"expected a name after as, found %s", p.describe())
			p.sync()
			return nil
		}
		d.Name = &Ident{NamePos: p.t.pos, Name: p.t.lit}
		p.next()
	}
	p.expectStmtEnd("import")
	return d
}

// parseAssert parses `assert C` in a test block, from the word assert.
func (p *parser) parseAssert() *Assert {
	a := &Assert{Assert: p.t.pos}
	p.nextWord()
	a.Cond = p.parseExpr()
	p.expectStmtEnd("assert")
	return a
}

// qualifiedCall parses the arguments of module.name( ... ), x being the
// module.name before the '(', and returns nil when x is anything else.
func (p *parser) qualifiedCall(x Expr) *CallExpr {
	fx, ok := x.(*FieldExpr)
	if !ok || fx.Quoted {
		return nil
	}
	qual, ok := fx.X.(*Ident)
	if !ok {
		return nil
	}
	c := &CallExpr{Qual: qual, Fun: &Ident{NamePos: fx.NamePos, Name: fx.Name}}
	c.Lparen, c.Args, c.Rparen = p.parseArgs()
	return c
}
