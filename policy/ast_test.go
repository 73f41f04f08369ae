package policy

import "testing"

// parseValue parses src as the value of a set statement.
func parseValue(t *testing.T, src string) Expr {
	t.Helper()
	f, errs := ParseFile("x.policy", []byte("policy \"p\"\nset .out = "+src+"\n"))
	if len(errs) > 0 {
		t.Fatalf("%q: %v", src, errs)
	}
	return f.Stmts[0].(*SetStmt).Value
}

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
		e := parseValue(t, tt.src)
		got := Unparen(e)
		if s := dump(got); s != tt.want {
			t.Errorf("Unparen(%s) = %s, want %s", tt.src, s, tt.want)
		}
		// The node inside the parentheses itself, not a copy.
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
		lit, neg := SignedLit(parseValue(t, tt.src))
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
