package policy

// TestInput is one input line of a test block, with the at and wait
// lines just before it, which set the clock its run reads (the value of
// now() and of the record's %time, and the clock of dedupe, rate_limit
// and sample). A test's inputs run in order through one instance of the
// policy, with fresh state.
type TestInput struct {
	Pos    Pos
	Value  Expr
	Clocks []*TestClock
}

// TestClock is `at "2026-01-01T00:00:00Z"` (an RFC 3339 time: the clock
// is set to it) or `wait "30s"` (a duration: the clock moves on by it).
type TestClock struct {
	Pos   Pos
	Wait  bool
	Value *BasicLit
}

func (c *TestClock) word() string {
	if c.Wait {
		return "wait"
	}
	return "at"
}

// parseTestClock parses an at or a wait line of a test block.
func (p *parser) parseTestClock() *TestClock {
	c := &TestClock{Pos: p.t.pos, Wait: p.word(WAIT)}
	p.nextWord()
	usage := `write at "2026-01-01T00:00:30Z" or wait "30s" on a line before an input`
	lit, _, ok := p.parseStringLit(c.word(), usage)
	if !ok {
		p.sync()
		return nil
	}
	c.Value = lit
	p.expectStmtEnd(c.word())
	return c
}
