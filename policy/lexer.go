package policy

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// An ErrorHandler receives each lexical error as the Scanner finds it.
type ErrorHandler func(e *Error)

// A Scanner turns policy source into tokens, in the manner of go/scanner.
//
// Newlines are significant but only where a statement can end: a newline
// becomes a NEWLINE token only when the token before it can end a statement
// (an identifier, a literal, a closing bracket, `drop`, `stop`, `...`, `?`
// and a few more). After an operator, a comma or an opening brace a newline
// is plain white space, so long expressions and multi-line literals can be
// broken after an operator or a comma. The parser also ignores NEWLINE
// tokens inside (), [] and map literals.
//
// Comments are returned as COMMENT tokens; they never end a statement by
// themselves, the newline after them does.
type Scanner struct {
	src []byte
	str string // src as a string, so that token texts are slices of it
	err ErrorHandler

	ch        rune // current character, -1 at end of input
	offset    int  // offset of ch
	rdOffset  int  // offset after ch
	line      int  // line of ch
	lineStart int  // offset of the first byte of ch's line

	insertNL bool  // a newline now ends a statement
	prev     Token // the last non-comment token returned
	prevEnd  int   // offset just past it

	ErrorCount int
}

const bom = 0xFEFF

// Init prepares s to scan src. Errors go to err, which may be nil.
func (s *Scanner) Init(src []byte, err ErrorHandler) {
	*s = Scanner{src: src, str: string(src), err: err, line: 1, prev: NEWLINE, prevEnd: -1}
	s.next()
	if s.ch == bom {
		s.next()
	}
}

func (s *Scanner) pos(off int) Pos {
	// Only ever called for offsets on the current line or earlier on it.
	return Pos{Offset: off, Line: s.line, Col: off - s.lineStart + 1}
}

func (s *Scanner) next() {
	if s.rdOffset >= len(s.src) {
		if s.ch == '\n' {
			s.line++
			s.lineStart = len(s.src)
		}
		s.offset = len(s.src)
		s.ch = -1
		return
	}
	if s.ch == '\n' {
		s.line++
		s.lineStart = s.rdOffset
	}
	s.offset = s.rdOffset
	r, w := rune(s.src[s.rdOffset]), 1
	if r >= utf8.RuneSelf {
		r, w = utf8.DecodeRune(s.src[s.rdOffset:])
		if r == utf8.RuneError && w == 1 {
			s.errorf(s.pos(s.offset), s.pos(s.offset+1), CodeInvalidChar, "", "invalid UTF-8 encoding")
		} else if r == bom && s.offset > 0 {
			s.errorf(s.pos(s.offset), s.pos(s.offset+w), CodeInvalidChar, "", "byte order mark in the middle of the file")
		}
	}
	s.rdOffset += w
	s.ch = r
}

func (s *Scanner) peek() byte {
	if s.rdOffset < len(s.src) {
		return s.src[s.rdOffset]
	}
	return 0
}

func (s *Scanner) errorf(pos, end Pos, code, hint, format string, args ...any) {
	s.ErrorCount++
	if s.err != nil {
		s.err(&Error{Pos: pos, End: end, Code: code, Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
}

func isLetter(ch rune) bool { return 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || ch == '_' }
func isDigit(ch rune) bool  { return '0' <= ch && ch <= '9' }
func isHex(ch rune) bool {
	return isDigit(ch) || 'a' <= ch && ch <= 'f' || 'A' <= ch && ch <= 'F'
}

// endsOperand reports whether tok can be the last token of an operand, which
// decides whether a following '%' is modulo or starts %tag.
func endsOperand(tok Token) bool {
	switch tok {
	case IDENT, INT, FLOAT, STRING, RAWSTRING, META, RPAREN, RBRACK, RBRACE, TRUE, FALSE, NULL, DOT:
		return true
	}
	return false
}

// endsStatement reports whether a newline after tok ends a statement. An
// ILLEGAL token does, so that a bad character does not pull the next line
// into its statement.
func endsStatement(tok Token) bool {
	switch tok {
	case DROP, STOP, ELLIPSIS, QUESTION, ILLEGAL:
		return true
	}
	return endsOperand(tok)
}

// Scan returns the next token, its position and its source text (for
// NEWLINE it is "\n", or "" for the one made up at the end of the input).
// At the end of the input it returns EOF forever.
func (s *Scanner) Scan() (pos Pos, tok Token, lit string) {
	for s.ch == ' ' || s.ch == '\t' || s.ch == '\r' || s.ch == '\n' && !s.insertNL {
		s.next()
	}
	pos = s.pos(s.offset)
	start := s.offset
	afterDot := s.prev == DOT && s.prevEnd == start

	switch ch := s.ch; {
	case ch == -1:
		if s.insertNL {
			s.insertNL = false
			return pos, NEWLINE, ""
		}
		return pos, EOF, ""
	case ch == '\n':
		s.insertNL = false
		s.next()
		s.prev, s.prevEnd = NEWLINE, start+1
		return pos, NEWLINE, "\n"
	case ch == '#':
		for s.ch != '\n' && s.ch != -1 {
			s.next()
		}
		end := s.offset
		if end > start && s.src[end-1] == '\r' {
			end--
		}
		return pos, COMMENT, s.str[start:end]
	case isLetter(ch):
		for isLetter(s.ch) || isDigit(s.ch) {
			s.next()
		}
		lit = s.str[start:s.offset]
		tok = IDENT
		if !afterDot {
			tok = Lookup(lit)
		}
	case isDigit(ch):
		tok = s.number()
		lit = s.str[start:s.offset]
	case ch == '"':
		s.string()
		tok, lit = STRING, s.str[start:s.offset]
	case ch == '`':
		s.rawString()
		tok, lit = RAWSTRING, s.str[start:s.offset]
	case ch == '\'':
		// 'text' is one mistake, not two stray quotes.
		s.next()
		for s.ch != '\'' && s.ch != '\n' && s.ch != -1 {
			s.next()
		}
		if s.ch == '\'' {
			s.next()
		}
		tok, lit = ILLEGAL, s.str[start:s.offset]
		s.errorf(pos, s.pos(s.offset), CodeInvalidChar, `strings are written in double quotes: "text"`, "invalid character '\\''")
	default:
		s.next()
		tok = s.operator(ch, start)
		lit = s.str[start:s.offset]
	}
	s.insertNL = endsStatement(tok)
	s.prev, s.prevEnd = tok, s.offset
	return pos, tok, lit
}

// orEq returns withEq, taking the '=', when one follows: the second
// character of ==, !=, <= and >=; tok otherwise.
func (s *Scanner) orEq(withEq, tok Token) Token {
	if s.ch == '=' {
		s.next()
		return withEq
	}
	return tok
}

// doubled returns tok, taking the second ch, for the operators || and &&,
// written with ch twice; a lone ch, at pos, is an invalid character.
func (s *Scanner) doubled(ch rune, pos Pos, tok Token, hint string) Token {
	if s.ch == ch {
		s.next()
		return tok
	}
	s.errorf(pos, pos.Advance(string(ch)), CodeInvalidChar, hint, "invalid character '%c'", ch)
	return ILLEGAL
}

func (s *Scanner) operator(ch rune, start int) Token {
	pos := s.pos(start)
	switch ch {
	case '.':
		if s.ch == '.' && s.peek() == '.' {
			s.next()
			s.next()
			return ELLIPSIS
		}
		return DOT
	case ',':
		return COMMA
	case ':':
		return COLON
	case '?':
		switch s.ch {
		case '?':
			s.next()
			return COALESCE
		case '=':
			s.next()
			return QASSIGN
		}
		return QUESTION
	case '(':
		return LPAREN
	case ')':
		return RPAREN
	case '[':
		return LBRACK
	case ']':
		return RBRACK
	case '{':
		return LBRACE
	case '}':
		return RBRACE
	case '=':
		return s.orEq(EQL, ASSIGN)
	case '!':
		return s.orEq(NEQ, NOT)
	case '<':
		return s.orEq(LEQ, LSS)
	case '>':
		return s.orEq(GEQ, GTR)
	case '|':
		return s.doubled('|', pos, LOR, "use || for a logical or")
	case '&':
		return s.doubled('&', pos, LAND, "use && for a logical and")
	case '+':
		return ADD
	case '-':
		return SUB
	case '*':
		return MUL
	case '/':
		return QUO
	case '%':
		if isLetter(s.ch) && !endsOperand(s.prev) {
			for isLetter(s.ch) || isDigit(s.ch) {
				s.next()
			}
			return META
		}
		return REM
	}
	end := s.pos(s.offset)
	hint := ""
	switch ch {
	case ';':
		hint = "statements end at the end of the line; there are no semicolons"
	case bom:
		return ILLEGAL // reported by next
	case utf8.RuneError:
		if _, w := utf8.DecodeRune(s.src[start:]); w == 1 {
			return ILLEGAL // invalid UTF-8, reported by next
		}
	}
	if ch >= utf8.RuneSelf && unicode.IsLetter(ch) {
		// .größe: log keys are often not ASCII.
		hint = `names are ASCII identifiers; quote others: ."größe", or "größe": in a schema`
	}
	if ch >= utf8.RuneSelf {
		s.errorf(pos, end, CodeInvalidChar, hint, "invalid character %U %q", ch, ch)
	} else {
		s.errorf(pos, end, CodeInvalidChar, hint, "invalid character %q", ch)
	}
	return ILLEGAL
}

// number scans an integer or a float: digits with '_' between them, an
// optional fraction (a '.' followed by a digit) and an optional exponent.
func (s *Scanner) number() Token {
	start := s.offset
	tok := INT
	badSep := -1
	digits := func() {
		last := rune(0)
		for isDigit(s.ch) || s.ch == '_' {
			if s.ch == '_' && last != 0 && !isDigit(last) && badSep < 0 {
				badSep = s.offset
			}
			last = s.ch
			s.next()
		}
		if last == '_' && badSep < 0 {
			badSep = s.offset - 1
		}
	}
	digits()
	if s.ch == '.' && isDigit(rune(s.peek())) {
		tok = FLOAT
		s.next()
		if s.ch == '_' && badSep < 0 {
			badSep = s.offset
		}
		digits()
	}
	if s.ch == 'e' || s.ch == 'E' {
		tok = FLOAT
		s.next()
		if s.ch == '+' || s.ch == '-' {
			s.next()
		}
		if s.ch == '_' && badSep < 0 {
			badSep = s.offset
		}
		if !isDigit(s.ch) && s.ch != '_' {
			s.errorf(s.pos(start), s.pos(s.offset), CodeBadNumber, "write the exponent as digits, as in 1e3 or 2.5e-3", "exponent has no digits")
		}
		digits()
	}
	if badSep >= 0 {
		s.errorf(s.pos(badSep), s.pos(badSep+1), CodeBadNumber, "write 1_000, not 1__000 or 1000_", "'_' must separate successive digits")
	}
	return tok
}

// string scans a "..." literal, checking escapes. An unterminated string
// ends at the end of its line so that the next line still parses.
func (s *Scanner) string() {
	start := s.offset
	s.next() // opening quote
	for {
		switch s.ch {
		case '"':
			s.next()
			return
		case '\n', -1:
			s.errorf(s.pos(start), s.pos(s.offset), CodeUnterminatedString, `close the string with " on the same line, or use a raw string in backquotes for several lines`, "string literal not terminated")
			return
		case '\\':
			s.escape()
		default:
			s.next()
		}
	}
}

// escape checks one escape sequence; s.ch is the backslash.
func (s *Scanner) escape() {
	start := s.offset
	s.next()
	switch s.ch {
	case 'n', 't', 'r', '\\', '"':
		s.next()
		return
	case 'u':
		s.next()
		if s.ch != '{' {
			s.errorf(s.pos(start), s.pos(s.offset), CodeBadEscape, `write a code point as \u{HEX}, as in \u{e9}`, `invalid escape sequence: \u must be followed by {HEX}`)
			return
		}
		s.next()
		n, v := 0, rune(0)
		for isHex(s.ch) {
			if n < 7 {
				v = v<<4 | rune(hexVal(s.ch))
			}
			n++
			s.next()
		}
		if s.ch != '}' || n == 0 {
			s.errorf(s.pos(start), s.pos(s.offset), CodeBadEscape, `write a code point as \u{HEX}, as in \u{e9}`, `invalid escape sequence: \u{ needs hex digits and a closing }`)
			return
		}
		s.next()
		if n > 6 || v > utf8.MaxRune || 0xD800 <= v && v < 0xE000 {
			s.errorf(s.pos(start), s.pos(s.offset), CodeBadEscape, "", "escape sequence is not a valid Unicode code point")
		}
		return
	case '\n', -1:
		s.errorf(s.pos(start), s.pos(s.offset), CodeBadEscape, "", "escape sequence not terminated")
		return
	}
	s.next()
	s.errorf(s.pos(start), s.pos(s.offset), CodeBadEscape,
		`the escapes are \n \t \r \\ \" and \u{HEX}; for a regex, a raw string in backquotes needs no escapes`,
		"invalid escape sequence %s", s.str[start:s.offset])
}

func hexVal(ch rune) int {
	switch {
	case '0' <= ch && ch <= '9':
		return int(ch - '0')
	case 'a' <= ch && ch <= 'f':
		return int(ch - 'a' + 10)
	case 'A' <= ch && ch <= 'F':
		return int(ch - 'A' + 10)
	}
	return 0
}

// rawString scans a `...` literal; it may span lines.
func (s *Scanner) rawString() {
	start := s.pos(s.offset)
	s.next()
	for s.ch != '`' {
		if s.ch == -1 {
			s.errorf(start, start.Advance("`"), CodeUnterminatedString, "close the raw string with a backquote", "raw string literal not terminated")
			return
		}
		s.next()
	}
	s.next()
}
