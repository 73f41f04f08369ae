package policy

import "testing"

func TestUnparen(t *testing.T) {
	tests := []struct{ src, want string }{
		{".a", "(field . a)"},
		{"(.a)", "(field . a)"},
		{"(((.a)))", "(field . a)"},
		{"(a + b) * c", "(* (paren (+ a b)) c)"}, // only the outermost parentheses
		{"((a + b))", "(+ a b)"},
		{"(-(1))", "(-(paren int:1))"},
		{`([1, (2)])`, "[int:1 (paren int:2)]"},
		{"(f((x)))", "(call f (paren x))"},
	}
	for _, tt := range tests {
		f, errs := ParseFile("x.policy", []byte("policy \"p\"\nset .out = "+tt.src+"\n"))
		if len(errs) > 0 {
			t.Errorf("%q: %v", tt.src, errs)
			continue
		}
		e := f.Stmts[0].(*SetStmt).Value
		got := Unparen(e)
		if s := dump(got); s != tt.want {
			t.Errorf("Unparen(%s) = %s, want %s", tt.src, s, tt.want)
		}
		if _, ok := got.(*ParenExpr); ok {
			t.Errorf("Unparen(%s) is a ParenExpr", tt.src)
		}
		// The innermost node itself, not a copy.
		inner := e
		for p, ok := inner.(*ParenExpr); ok; p, ok = inner.(*ParenExpr) {
			inner = p.X
		}
		if got != inner {
			t.Errorf("Unparen(%s) is not the node inside the parentheses", tt.src)
		}
	}
	if got := Unparen(nil); got != nil {
		t.Errorf("Unparen(nil) = %v, want nil", got)
	}
}

func TestSignedLit(t *testing.T) {
	tests := []struct {
		src  string
		want string // dump of the literal, "" for none
		neg  bool
	}{
		{"1", "int:1", false},
		{`"a"`, `str:"a"`, false},
		{"(2.5)", "float:2.5", false},
		{"-1", "int:1", true},
		{"-(1)", "int:1", true},
		{"(-(1))", "int:1", true},
		{`-"a"`, `str:"a"`, true}, // the caller decides what a negated string is
		{"--1", "", false},
		{"!true", "", false},
		{".a", "", false},
		{"-.a", "", false},
		{"[1]", "", false},
		{"1 + 2", "", false},
	}
	for _, tt := range tests {
		f, errs := ParseFile("x.policy", []byte("policy \"p\"\nset .out = "+tt.src+"\n"))
		if len(errs) > 0 {
			t.Errorf("%q: %v", tt.src, errs)
			continue
		}
		lit, neg := SignedLit(f.Stmts[0].(*SetStmt).Value)
		got := ""
		if lit != nil {
			got = dump(lit)
		}
		if got != tt.want || neg != tt.neg {
			t.Errorf("SignedLit(%s) = %s, %v; want %s, %v", tt.src, got, neg, tt.want, tt.neg)
		}
	}
	if lit, neg := SignedLit(nil); lit != nil || neg {
		t.Errorf("SignedLit(nil) = %v, %v", lit, neg)
	}
}
