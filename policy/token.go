package policy

// Token is a lexical token of the policy language.
type Token int

const (
	ILLEGAL Token = iota
	EOF
	COMMENT // # ... to end of line
	NEWLINE // ends a statement

	literalBeg
	IDENT     // app, x, _
	INT       // 1_000
	FLOAT     // 1.5, 1e3
	STRING    // "..."
	RAWSTRING // `...`
	META      // %tag, %time (the lexer emits these when '%' is directly followed by a letter in operand position)
	literalEnd

	operatorBeg
	DOT      // .
	COMMA    // ,
	COLON    // :
	QUESTION // ? (optional types)
	ELLIPSIS // ...
	LPAREN   // (
	RPAREN   // )
	LBRACK   // [
	RBRACK   // ]
	LBRACE   // {
	RBRACE   // }
	LANGLE   // < in types (array<T>); the parser reads LSS there
	ASSIGN   // =
	QASSIGN  // ?=
	COALESCE // ??
	LOR      // ||
	LAND     // &&
	NOT      // !
	EQL      // ==
	NEQ      // !=
	LSS      // <
	LEQ      // <=
	GTR      // >
	GEQ      // >=
	ADD      // +
	SUB      // -
	MUL      // *
	QUO      // /
	REM      // %
	operatorEnd

	// The reserved words: keywords everywhere but after a '.', where they
	// are field names.
	keywordBeg
	POLICY
	SET
	REMOVE
	RENAME
	LIFT
	DROP
	STOP
	IF
	ELSE
	LET
	FOR
	IN
	TRUE
	FALSE
	NULL
	keywordEnd

	// The contextual keywords: words that mean something in one place
	// only. The scanner returns them as IDENT, and the parser reads them as
	// keywords where the grammar expects them (lift .k prefix "p_", drop
	// when C, rename .a to .b, a test's input, tag and expect, the header's
	// on_fault, schema otlp, const, fn and param at the start of a declaration,
	// return and split at the start of a statement); anywhere else they are names:
	// let tag = 1, let fn = 2.
	contextualBeg
	SCHEMA
	PREFIX
	WHEN
	TO
	TEST
	INPUT
	TAG
	EXPECT
	DROPPED
	FAULT
	ONFAULT
	KEEP
	OTLP
	CONST
	FN
	RETURN
	PARAM
	MODULE
	IMPORT
	AS
	ASSERT
	SPLIT
	DEDUPE
	RATELIMIT
	SAMPLE
	BY
	WITHIN
	COUNT
	PER
	MAXKEYS
	AT
	WAIT
	contextualEnd
)

var tokens = [...]string{
	ILLEGAL:   "ILLEGAL",
	EOF:       "EOF",
	COMMENT:   "COMMENT",
	NEWLINE:   "newline",
	IDENT:     "IDENT",
	INT:       "INT",
	FLOAT:     "FLOAT",
	STRING:    "STRING",
	RAWSTRING: "RAWSTRING",
	META:      "META",
	DOT:       ".",
	COMMA:     ",",
	COLON:     ":",
	QUESTION:  "?",
	ELLIPSIS:  "...",
	LPAREN:    "(",
	RPAREN:    ")",
	LBRACK:    "[",
	RBRACK:    "]",
	LBRACE:    "{",
	RBRACE:    "}",
	LANGLE:    "<",
	ASSIGN:    "=",
	QASSIGN:   "?=",
	COALESCE:  "??",
	LOR:       "||",
	LAND:      "&&",
	NOT:       "!",
	EQL:       "==",
	NEQ:       "!=",
	LSS:       "<",
	LEQ:       "<=",
	GTR:       ">",
	GEQ:       ">=",
	ADD:       "+",
	SUB:       "-",
	MUL:       "*",
	QUO:       "/",
	REM:       "%",
	POLICY:    "policy",
	SCHEMA:    "schema",
	SET:       "set",
	REMOVE:    "remove",
	RENAME:    "rename",
	LIFT:      "lift",
	PREFIX:    "prefix",
	DROP:      "drop",
	STOP:      "stop",
	WHEN:      "when",
	TO:        "to",
	IF:        "if",
	ELSE:      "else",
	LET:       "let",
	FOR:       "for",
	IN:        "in",
	TEST:      "test",
	INPUT:     "input",
	TAG:       "tag",
	EXPECT:    "expect",
	DROPPED:   "dropped",
	FAULT:     "fault",
	ONFAULT:   "on_fault",
	KEEP:      "keep",
	OTLP:      "otlp",
	CONST:     "const",
	FN:        "fn",
	RETURN:    "return",
	PARAM:     "param",
	MODULE:    "module",
	IMPORT:    "import",
	AS:        "as",
	ASSERT:    "assert",
	SPLIT:     "split",
	DEDUPE:    "dedupe",
	RATELIMIT: "rate_limit",
	SAMPLE:    "sample",
	BY:        "by",
	WITHIN:    "within",
	COUNT:     "count",
	PER:       "per",
	MAXKEYS:   "max_keys",
	AT:        "at",
	WAIT:      "wait",
	TRUE:      "true",
	FALSE:     "false",
	NULL:      "null",
}

func (t Token) String() string {
	if 0 <= t && int(t) < len(tokens) && tokens[t] != "" {
		return tokens[t]
	}
	return "token(?)"
}

var keywords map[string]Token

// reservedList is the reserved words, for hints: "policy set ... null".
var reservedList string

func init() {
	keywords = make(map[string]Token, keywordEnd-keywordBeg)
	for t := keywordBeg + 1; t < keywordEnd; t++ {
		keywords[tokens[t]] = t
		if reservedList != "" {
			reservedList += " "
		}
		reservedList += tokens[t]
	}
}

// Lookup maps an identifier to its keyword token, or IDENT: a reserved
// word gives its token, any other word (a contextual keyword too) IDENT.
func Lookup(ident string) Token {
	if t, ok := keywords[ident]; ok {
		return t
	}
	return IDENT
}

// Keywords returns the reserved words, keywords everywhere but after a '.',
// in the order of their tokens. Editor grammars are held to this list.
func Keywords() []string { return tokenTexts(keywordBeg, keywordEnd) }

// ContextualKeywords returns the contextual keywords (IsContextual), in the
// order of their tokens.
func ContextualKeywords() []string { return tokenTexts(contextualBeg, contextualEnd) }

func tokenTexts(beg, end Token) []string {
	out := make([]string, 0, end-beg-1)
	for t := beg + 1; t < end; t++ {
		out = append(out, tokens[t])
	}
	return out
}

// IsKeyword reports whether t is a reserved word, a keyword everywhere.
func (t Token) IsKeyword() bool { return keywordBeg < t && t < keywordEnd }

// IsContextual reports whether t is a contextual keyword: a keyword only
// where the grammar expects it, and otherwise an identifier (IDENT).
func (t Token) IsContextual() bool { return contextualBeg < t && t < contextualEnd }

// IsOperator reports whether t is an operator or delimiter.
func (t Token) IsOperator() bool { return operatorBeg < t && t < operatorEnd }

// Precedence returns the binary precedence of t (docs/language.md,
// "Expressions and operators"), lowest 1,
// or 0 when t is not a binary operator.
func (t Token) Precedence() int {
	switch t {
	case COALESCE:
		return 1
	case LOR:
		return 2
	case LAND:
		return 3
	case EQL, NEQ, LSS, LEQ, GTR, GEQ, IN:
		return 4
	case ADD, SUB:
		return 5
	case MUL, QUO, REM:
		return 6
	}
	return 0
}
