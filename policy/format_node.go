package policy

// This file writes statements and expressions for Format.

func (p *printer) stmt(s Stmt) {
	switch s := s.(type) {
	case *SetStmt:
		p.tok(s.Set, "set ")
		p.expr(s.Target)
		p.space()
		p.tok(s.OpPos, s.Op.String())
		p.text(" ")
		p.expr(s.Value)
	case *RemoveStmt:
		p.tok(s.Remove, "remove ")
		p.exprList(s.Targets)
	case *StateStmt:
		p.stateStmt(s)
	case *RenameStmt:
		p.tok(s.Rename, "rename ")
		p.expr(s.From)
		p.space()
		p.tok(s.ToPos, "to")
		p.text(" ")
		p.expr(s.To)
	case *LiftStmt:
		p.tok(s.Lift, "lift ")
		p.expr(s.Target)
		if s.Prefix != nil {
			p.text(" prefix ")
			p.tok(s.Prefix.Pos(), s.Prefix.Raw)
		}
	case *SplitStmt:
		p.tok(s.Split, "split ")
		p.expr(s.Target)
	case *DropStmt:
		p.tok(s.Drop, "drop")
		if s.Cond != nil {
			p.text(" when ")
			p.expr(s.Cond)
		}
	case *StopStmt:
		p.tok(s.Stop, "stop")
		if s.Cond != nil {
			p.text(" when ")
			p.expr(s.Cond)
		}
	case *IfStmt:
		p.ifStmt(s)
	case *LetStmt:
		p.binding(s.Let, "let ", s.Name, s.Value)
	case *ForStmt:
		p.tok(s.For, "for ")
		p.tok(s.Key.NamePos, s.Key.Name)
		p.text(", ")
		p.tok(s.Value.NamePos, s.Value.Name)
		p.text(" in ")
		p.expr(s.X)
		p.block(s.Body)
	case *ReturnStmt:
		p.tok(s.Return, "return ")
		p.expr(s.Value)
	case *Block:
		// Not produced by the parser as a statement of its own.
		p.block(s)
	}
}

func (p *printer) ifStmt(s *IfStmt) {
	p.tok(s.If, "if ")
	p.expr(s.Cond)
	p.block(s.Body)
	if s.Else == nil {
		return
	}
	// Comments between } and else push else onto a line of its own, at the
	// indentation of the }; the parser accepts else after a newline.
	base := p.base
	broke := false
	for p.pending(s.Else.Pos()) {
		if !p.trailing() {
			p.ownLine(base)
		}
		broke = true
	}
	if broke {
		p.openLine(base)
		p.text("else")
	} else {
		p.text(" else")
	}
	switch e := s.Else.(type) {
	case *IfStmt:
		p.text(" ")
		p.ifStmt(e)
	case *Block:
		p.block(e)
	}
}

// block writes { stmts }, the statements one level deeper than the line
// the block starts on.
func (p *printer) block(b *Block) {
	indent := p.base
	p.space()
	p.tok(b.Lbrace, "{")
	p.blockStart = true
	for _, s := range b.Stmts {
		p.item(s.Pos(), indent+1, false)
		p.stmt(s)
	}
	p.closer(b.Rbrace, indent, "}")
	p.base = indent
}

// exprList writes a, b, c keeping the line breaks the source had after
// the commas.
func (p *printer) exprList(xs []Expr) {
	for i, x := range xs {
		if i > 0 {
			p.text(",")
			if x.Pos().Line > xs[i-1].End().Line {
				p.breakBefore(x.Pos())
			} else {
				p.text(" ")
			}
		}
		p.expr(x)
	}
}

func (p *printer) expr(x Expr) {
	switch x := x.(type) {
	case *RootExpr:
		p.tok(x.Dot, ".")
	case *MetaExpr:
		p.tok(x.Percent, "%"+x.Name)
	case *Ident:
		p.tok(x.NamePos, x.Name)
	case *FieldExpr:
		if _, root := x.X.(*RootExpr); !root {
			p.expr(x.X)
		}
		p.tok(x.Dot, ".")
		if x.Quoted {
			p.tok(x.NamePos, Quote(x.Name))
		} else {
			p.tok(x.NamePos, x.Name)
		}
	case *IndexExpr:
		p.expr(x.X)
		p.tok(x.Lbrack, "[")
		p.expr(x.Index)
		p.tok(x.Rbrack, "]")
	case *CallExpr:
		if x.Qual != nil {
			p.tok(x.Qual.NamePos, x.Qual.Name+".")
		}
		p.tok(x.Fun.NamePos, x.Fun.Name)
		p.tok(x.Lparen, "(")
		if len(x.Args) > 0 && x.Args[0].Pos().Line > x.Lparen.Line {
			p.vertical(x.Args, nil, x.Rparen, ")")
			return
		}
		p.exprList(x.Args)
		p.tok(x.Rparen, ")")
	case *BinaryExpr:
		p.expr(x.X)
		p.space()
		p.tok(x.OpPos, x.Op.String())
		if x.Y.Pos().Line > x.X.End().Line {
			p.breakBefore(x.Y.Pos())
		} else {
			p.text(" ")
		}
		p.expr(x.Y)
	case *UnaryExpr:
		p.tok(x.OpPos, x.Op.String())
		p.expr(x.X)
	case *ParenExpr:
		p.tok(x.Lparen, "(")
		p.expr(x.X)
		p.tok(x.Rparen, ")")
	case *BasicLit:
		p.tok(x.ValuePos, x.Raw)
	case *ListLit:
		p.tok(x.Lbrack, "[")
		if x.Rbrack.Line > x.Lbrack.Line {
			p.vertical(x.Elems, nil, x.Rbrack, "]")
			return
		}
		p.exprList(x.Elems)
		p.tok(x.Rbrack, "]")
	case *MapLit:
		p.tok(x.Lbrace, "{")
		if x.Rbrace.Line > x.Lbrace.Line {
			p.vertical(nil, x.Entries, x.Rbrace, "}")
			return
		}
		for i, e := range x.Entries {
			if i > 0 {
				p.text(", ")
			}
			p.entry(e)
		}
		p.tok(x.Rbrace, "}")
	}
}

func (p *printer) entry(e *MapEntry) {
	p.tok(e.Key.ValuePos, e.Key.Raw)
	p.tok(e.Colon, ":")
	p.text(" ")
	p.expr(e.Value)
}

// vertical writes the elements (or entries) of a bracketed list one per
// line, one level deeper than the line the list starts on, and the closing
// bracket on a line of its own. An empty list with no comments inside
// closes right away.
func (p *printer) vertical(xs []Expr, entries []*MapEntry, close Pos, closeText string) {
	indent := p.cur.indent
	base := p.base
	n := len(xs) + len(entries)
	if n == 0 && !p.pending(close) {
		p.tok(close, closeText)
		return
	}
	p.blockStart = true
	for i := 0; i < n; i++ {
		var pos Pos
		if xs != nil {
			pos = xs[i].Pos()
		} else {
			pos = entries[i].Key.Pos()
		}
		p.item(pos, indent+1, false)
		if xs != nil {
			p.expr(xs[i])
		} else {
			p.entry(entries[i])
		}
		if i < n-1 {
			p.text(",")
		}
	}
	p.closer(close, indent, closeText)
	p.base = base
}
