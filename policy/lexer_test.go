package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

type scanned struct {
	tok Token
	lit string
}

func scanAll(src string) ([]scanned, []*Error) {
	var s Scanner
	var errs []*Error
	s.Init([]byte(src), func(e *Error) { errs = append(errs, e) })
	var out []scanned
	for {
		_, tok, lit := s.Scan()
		if tok == EOF {
			return out, errs
		}
		out = append(out, scanned{tok, lit})
		if len(out) > 10000 {
			panic("scanner does not reach EOF")
		}
	}
}

func fmtScanned(toks []scanned) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch {
		case t.tok == NEWLINE:
			b.WriteString("NL")
		case t.tok.IsOperator():
			b.WriteString(t.tok.String())
		case t.tok.IsKeyword():
			b.WriteString(strings.ToUpper(t.tok.String()))
		default:
			fmt.Fprintf(&b, "%s(%s)", t.tok, t.lit)
		}
	}
	return b.String()
}

func TestScanTokens(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		// identifiers and keywords
		{"app _x a1_b", "IDENT(app) IDENT(_x) IDENT(a1_b) NL"},
		{"policy set remove rename lift drop stop if else let for in true false null",
			"POLICY SET REMOVE RENAME LIFT DROP STOP IF ELSE LET FOR IN TRUE FALSE NULL NL"},
		// contextual keywords are identifiers to the scanner
		{"schema prefix when to test input tag expect dropped fault on_fault keep otlp",
			"IDENT(schema) IDENT(prefix) IDENT(when) IDENT(to) IDENT(test) IDENT(input) IDENT(tag) IDENT(expect) IDENT(dropped) IDENT(fault) IDENT(on_fault) IDENT(keep) IDENT(otlp) NL"},
		{"drop when %tag", "DROP IDENT(when) % IDENT(tag) NL"},
		// keywords right after '.' are field names
		{".tag .input.set", ". IDENT(tag) . IDENT(input) . IDENT(set) NL"},
		{". if", ". IF"},
		// numbers
		{"0 42 1_000", "INT(0) INT(42) INT(1_000) NL"},
		{"1.5 1e3 2.5E-3 1e+10 1_0.2_5", "FLOAT(1.5) FLOAT(1e3) FLOAT(2.5E-3) FLOAT(1e+10) FLOAT(1_0.2_5) NL"},
		{"1.a", "INT(1) . IDENT(a) NL"},
		// strings
		{`"" "a b" "\n\t\r\\\"" "\u{e9}\u{1F600}"`, `STRING("") STRING("a b") STRING("\n\t\r\\\"") STRING("\u{e9}\u{1F600}") NL`},
		{"`a\\d+` `two\nlines`", "RAWSTRING(`a\\d+`) RAWSTRING(`two\nlines`) NL"},
		// metadata and modulo
		{"%tag, %time", "META(%tag) , META(%time) NL"},
		{"%tag %time", "META(%tag) % IDENT(time) NL"},
		{"a % b", "IDENT(a) % IDENT(b) NL"},
		{"a %b", "IDENT(a) % IDENT(b) NL"},
		{"7%2", "INT(7) % INT(2) NL"},
		{"(%tag)", "( META(%tag) ) NL"},
		{"x == %tag", "IDENT(x) == META(%tag) NL"},
		// operators and delimiters
		{". , : ? ... ( ) [ ] { } = ?= ?? || && ! == != < <= > >= + - * / %",
			". , : ? ... ( ) [ ] { } = ?= ?? || && ! == != < <= > >= + - * / %"},
		{"array<map<int>>", "IDENT(array) < IDENT(map) < IDENT(int) > >"},
		{"a?b??c?=d", "IDENT(a) ? IDENT(b) ?? IDENT(c) ?= IDENT(d) NL"},
		// comments: kept, do not end statements by themselves
		{"# only", "COMMENT(# only)"},
		{"set .a = 1 # note\nx", "SET . IDENT(a) = INT(1) COMMENT(# note) NL IDENT(x) NL"},
		{"a # c\r\nb", "IDENT(a) COMMENT(# c) NL IDENT(b) NL"},
		// newline rule: after a token that can end a statement only
		{"a\n\n\nb", "IDENT(a) NL IDENT(b) NL"},
		{"a +\nb", "IDENT(a) + IDENT(b) NL"},
		{"f(a,\nb)", "IDENT(f) ( IDENT(a) , IDENT(b) ) NL"},
		{"{\n\"a\": 1\n}", "{ STRING(\"a\") : INT(1) NL } NL"},
		{"drop\nstop\n", "DROP NL STOP NL"},
		{"expect dropped\nexpect fault\n", "IDENT(expect) IDENT(dropped) NL IDENT(expect) IDENT(fault) NL"},
		{"...\nx: int?\n", "... NL IDENT(x) : IDENT(int) ? NL"},
		{"a ==\n b", "IDENT(a) == IDENT(b) NL"},
		{"if x {\n", "IF IDENT(x) {"},
		{"\n\n", ""},
		{"\ufeffx", "IDENT(x) NL"},
	}
	for _, tt := range tests {
		toks, errs := scanAll(tt.src)
		if len(errs) > 0 {
			t.Errorf("%q: unexpected errors %v", tt.src, errs)
		}
		if got := fmtScanned(toks); got != tt.want {
			t.Errorf("%q:\n got %s\nwant %s", tt.src, got, tt.want)
		}
	}
}

func TestScanPositions(t *testing.T) {
	src := "set .a = \"é\" # c\n  drop when `x\ny` == 1\n"
	var s Scanner
	s.Init([]byte(src), nil)
	want := []struct {
		tok       Token
		off, l, c int
	}{
		{SET, 0, 1, 1}, {DOT, 4, 1, 5}, {IDENT, 5, 1, 6}, {ASSIGN, 7, 1, 8}, {STRING, 9, 1, 10},
		{COMMENT, 14, 1, 15}, {NEWLINE, 17, 1, 18},
		{DROP, 20, 2, 3}, {IDENT, 25, 2, 8}, {RAWSTRING, 30, 2, 13}, {EQL, 36, 3, 4}, {INT, 39, 3, 7},
		{NEWLINE, 40, 3, 8}, {EOF, 41, 4, 1},
	}
	for _, w := range want {
		pos, tok, lit := s.Scan()
		if tok != w.tok || pos.Offset != w.off || pos.Line != w.l || pos.Col != w.c {
			t.Errorf("got %s %q at %d %v, want %s at %d %d:%d", tok, lit, pos.Offset, pos, w.tok, w.off, w.l, w.c)
		}
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct{ lit, want string }{
		{`""`, ""},
		{`"abc"`, "abc"},
		{`"a\nb"`, "a\nb"},
		{`"\t\r\\\""`, "\t\r\\\""},
		{`"\u{e9}"`, "é"},
		{`"\u{1F600}x"`, "😀x"},
		{`"\u{41}\u{42}"`, "AB"},
		{`"é"`, "é"},
		{`"unterminated`, "unterminated"},
		{`"a\\"`, `a\`},
	}
	for _, tt := range tests {
		if got := unquote(tt.lit); got != tt.want {
			t.Errorf("unquote(%s) = %q, want %q", tt.lit, got, tt.want)
		}
		// Quote must produce something unquote reads back.
		if got := unquote(Quote(tt.want)); got != tt.want {
			t.Errorf("unquote(Quote(%q)) = %q", tt.want, got)
		}
	}
}

func TestScanErrors(t *testing.T) {
	tests := []struct {
		src  string
		code string
		pos  string // line:col
		tok  string // the token stream, errors notwithstanding
	}{
		{`"abc`, CodeUnterminatedString, "1:1", `STRING("abc) NL`},
		{"\"abc\nx", CodeUnterminatedString, "1:1", "STRING(\"abc) NL IDENT(x) NL"},
		{"`abc", CodeUnterminatedString, "1:1", "RAWSTRING(`abc) NL"},
		{`"a\qb"`, CodeBadEscape, "1:3", `STRING("a\qb") NL`},
		{`"\x41"`, CodeBadEscape, "1:2", `STRING("\x41") NL`},
		{`"\u0041"`, CodeBadEscape, "1:2", `STRING("\u0041") NL`},
		{`"\u{}"`, CodeBadEscape, "1:2", `STRING("\u{}") NL`},
		{`"\u{12"`, CodeBadEscape, "1:2", `STRING("\u{12") NL`},
		{`"\u{110000}"`, CodeBadEscape, "1:2", `STRING("\u{110000}") NL`},
		{`"\u{D800}"`, CodeBadEscape, "1:2", `STRING("\u{D800}") NL`},
		{`"\u{1234567}"`, CodeBadEscape, "1:2", `STRING("\u{1234567}") NL`},
		{"\"a\\", CodeBadEscape, "1:3", "STRING(\"a\\) NL"},
		{"1__0", CodeBadNumber, "1:3", "INT(1__0) NL"},
		{"1_", CodeBadNumber, "1:2", "INT(1_) NL"},
		{"1e", CodeBadNumber, "1:1", "FLOAT(1e) NL"},
		{"1e+", CodeBadNumber, "1:1", "FLOAT(1e+) NL"},
		{"1.5_", CodeBadNumber, "1:4", "FLOAT(1.5_) NL"},
		{"a @ b", CodeInvalidChar, "1:3", "IDENT(a) ILLEGAL(@) IDENT(b) NL"},
		{"'x y' z", CodeInvalidChar, "1:1", "ILLEGAL('x y') IDENT(z) NL"},
		{"'x\ny", CodeInvalidChar, "1:1", "ILLEGAL('x) NL IDENT(y) NL"},
		{"a; b", CodeInvalidChar, "1:2", "IDENT(a) ILLEGAL(;) IDENT(b) NL"},
		{"a & b", CodeInvalidChar, "1:3", "IDENT(a) ILLEGAL(&) IDENT(b) NL"},
		{"a | b", CodeInvalidChar, "1:3", "IDENT(a) ILLEGAL(|) IDENT(b) NL"},
		{"é", CodeInvalidChar, "1:1", "ILLEGAL(é) NL"},
		{"a \xff", CodeInvalidChar, "1:3", "IDENT(a) ILLEGAL(\xff) NL"},
		{"x\n  $", CodeInvalidChar, "2:3", "IDENT(x) NL ILLEGAL($) NL"},
		{"a \ufffd", CodeInvalidChar, "1:3", "IDENT(a) ILLEGAL(\ufffd) NL"},
		{"a \ufeff", CodeInvalidChar, "1:3", "IDENT(a) ILLEGAL(\ufeff) NL"},
	}
	for _, tt := range tests {
		toks, errs := scanAll(tt.src)
		if len(errs) == 0 {
			t.Errorf("%q: no error, want %s", tt.src, tt.code)
			continue
		}
		if len(errs) > 1 && errs[1].Pos == errs[0].Pos {
			t.Errorf("%q: two errors at one place: %v and %v", tt.src, errs[0], errs[1])
		}
		if errs[0].Code != tt.code || errs[0].Pos.String() != tt.pos {
			t.Errorf("%q: got %s at %s (%s), want %s at %s", tt.src, errs[0].Code, errs[0].Pos, errs[0].Msg, tt.code, tt.pos)
		}
		if got := fmtScanned(toks); got != tt.tok {
			t.Errorf("%q: tokens\n got %s\nwant %s", tt.src, got, tt.tok)
		}
	}
}

// Every code in the table is unique, in range and documented once.
func TestErrorCodesTable(t *testing.T) {
	seen := map[string]bool{}
	for i, c := range Codes {
		if seen[c.Code] {
			t.Errorf("code %s listed twice", c.Code)
		}
		seen[c.Code] = true
		if want := fmt.Sprintf("E%04d", i+1); c.Code != want {
			t.Errorf("Codes[%d] = %s, want %s (keep the table in code order)", i, c.Code, want)
		}
		if c.Meaning == "" {
			t.Errorf("code %s has no meaning", c.Code)
		}
	}
}

// Keywords and ContextualKeywords list the words Lookup and IsContextual
// know, each once: a reserved word scans as its token, a contextual one as
// IDENT.
func TestKeywordLists(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keywords() {
		if tok := Lookup(k); !tok.IsKeyword() || tok.String() != k {
			t.Errorf("Keywords: %q looks up as %v", k, tok)
		}
		if seen[k] {
			t.Errorf("%q listed twice", k)
		}
		seen[k] = true
	}
	for _, k := range ContextualKeywords() {
		if tok := Lookup(k); tok != IDENT {
			t.Errorf("ContextualKeywords: %q looks up as %v, want IDENT", k, tok)
		}
		if seen[k] {
			t.Errorf("%q listed twice", k)
		}
		seen[k] = true
	}
	for _, k := range []string{"policy", "set", "null"} {
		if !slices.Contains(Keywords(), k) {
			t.Errorf("Keywords lacks %q", k)
		}
	}
	for _, k := range []string{"when", "otlp", "on_fault"} {
		if !slices.Contains(ContextualKeywords(), k) {
			t.Errorf("ContextualKeywords lacks %q", k)
		}
	}
}
