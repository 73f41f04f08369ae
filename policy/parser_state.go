package policy

// stateKind returns the stateful statement the current token begins
// (DEDUPE, RATELIMIT, SAMPLE), or ILLEGAL. The words are contextual: a
// statement never begins with a name, so they begin one wherever a
// statement may start, and are names anywhere else.
func (p *parser) stateKind() Token {
	for _, k := range [...]Token{DEDUPE, RATELIMIT, SAMPLE} {
		if p.word(k) {
			return k
		}
	}
	return ILLEGAL
}

// stateUsage is the shape of each stateful statement, for hints.
var stateUsage = map[Token]string{
	DEDUPE:    `dedupe by .service, .msg within "1m" [count .repeats] [max_keys 100000]`,
	RATELIMIT: `rate_limit by .user to 100 per "1s" [max_keys 100000]`,
	SAMPLE:    `sample by .trace_id keep 1 in 10, or sample keep 1 in 10`,
}

// parseState parses a dedupe, rate_limit or sample statement.
func (p *parser) parseState(kind Token) Stmt {
	s := &StateStmt{Kw: p.t.pos, Kind: kind}
	p.next()
	bad := func(want string) Stmt {
		p.errorHere(CodeStateSyntax, "write "+stateUsage[kind], "expected %s in %s, found %s", want, kind, p.describe())
		p.sync()
		return &BadStmt{From: s.Kw, To: p.prevEnd()}
	}
	if p.word(BY) {
		p.nextWord()
		for {
			s.Keys = append(s.Keys, p.parseExpr())
			if p.t.tok != COMMA {
				break
			}
			p.next()
			p.skipNewlines()
		}
	} else if kind != SAMPLE {
		return bad("by and the key")
	}
	switch kind {
	case DEDUPE:
		if !p.word(WITHIN) {
			return bad("within and a duration")
		}
		p.nextWord()
		s.Window = p.parseExpr()
		if p.word(COUNT) {
			p.nextWord()
			s.Count = p.parsePath("count")
		}
	case RATELIMIT:
		if !p.word(TO) {
			return bad("to and a number of records")
		}
		p.nextWord()
		s.N = p.parseExpr()
		if !p.word(PER) {
			return bad("per and a duration")
		}
		p.nextWord()
		s.Window = p.parseExpr()
	case SAMPLE:
		if !p.word(KEEP) {
			return bad("keep 1 in N")
		}
		p.nextWord()
		if p.t.tok != INT || p.t.lit != "1" {
			return bad("keep 1 in N")
		}
		p.next()
		if p.t.tok != IN {
			return bad("in after keep 1")
		}
		p.next()
		p.skipNewlines()
		s.N = p.parseExpr()
	}
	if p.word(MAXKEYS) {
		if kind == SAMPLE {
			p.errorHere(CodeStateSyntax, "sample keeps no keys: the hash of a record's key says whether it is kept",
				"unexpected max_keys in sample")
			p.sync()
			return &BadStmt{From: s.Kw, To: p.prevEnd()}
		}
		p.nextWord()
		s.MaxKeys = p.parseExpr()
	}
	s.EndPos = p.prevEnd()
	p.expectStmtEnd(kind.String() + " statement")
	return s
}

func (p *printer) stateStmt(s *StateStmt) {
	p.tok(s.Kw, s.Kind.String())
	if s.Keys != nil {
		p.text(" by ")
		p.exprList(s.Keys)
	}
	switch s.Kind {
	case DEDUPE:
		p.clause(" within ", s.Window)
		p.clause(" count ", s.Count)
	case RATELIMIT:
		p.clause(" to ", s.N)
		p.clause(" per ", s.Window)
	case SAMPLE:
		p.clause(" keep 1 in ", s.N)
	}
	p.clause(" max_keys ", s.MaxKeys)
}

// clause writes the words before x and x, unless x is nil: a clause left
// out.
func (p *printer) clause(words string, x Expr) {
	if x != nil {
		p.text(words)
		p.expr(x)
	}
}
