package policy

// StateStmt is one of the statements that remember records across runs
// (docs/language.md, "State"):
//
//	dedupe by Keys within Window [count Count] [max_keys MaxKeys]
//	rate_limit by Keys to N per Window [max_keys MaxKeys]
//	sample by Keys keep 1 in N
//	sample keep 1 in N
//
// Keys is nil for sample keep 1 in N; Window, N, Count and MaxKeys are
// nil where the statement has none.
type StateStmt struct {
	Kw      Pos
	Kind    Token // DEDUPE, RATELIMIT or SAMPLE
	Keys    []Expr
	Window  Expr
	N       Expr
	Count   Expr
	MaxKeys Expr
	EndPos  Pos // the end of the statement's last part
}

func (s *StateStmt) Pos() Pos { return s.Kw }
func (s *StateStmt) End() Pos { return s.EndPos }
func (*StateStmt) stmtNode()  {}
func (s *StateStmt) parts() []Expr {
	var out []Expr
	out = append(out, s.Keys...)
	for _, x := range []Expr{s.N, s.Window, s.Count, s.MaxKeys} {
		if x != nil {
			out = append(out, x)
		}
	}
	return out
}

func inspectState(s *StateStmt, f func(Node) bool) {
	for _, x := range s.parts() {
		Inspect(x, f)
	}
}
