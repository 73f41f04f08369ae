package policy

// isSplit reports whether the current token starts a split statement:
// the word split before anything but what makes it a name or a call
// (split = 1, split(s, ","): split is a built-in function too).
func (p *parser) isSplit() bool {
	if !p.word(SPLIT) {
		return false
	}
	switch p.peek().tok {
	case LPAREN, ASSIGN, QASSIGN:
		return false
	}
	return true
}

// parseSplit parses `split P`. Where a split may stand (top level, once)
// and what P must hold are the checker's to say.
func (p *parser) parseSplit() Stmt {
	s := &SplitStmt{Split: p.t.pos}
	p.next()
	if p.atStmtEnd() {
		p.errorHere(CodeExpectedPath, "write split .events: the path of an array", "split needs a record path such as .events, found %s", p.describe())
		p.sync()
		return &BadStmt{From: s.Split, To: p.prevEnd()}
	}
	s.Target = p.parsePath("split")
	p.expectStmtEnd("split statement")
	return s
}
