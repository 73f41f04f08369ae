package policy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/policyrun/policyrun/internal/termesc"
)

// Syntax error codes. They are stable: tools and the user reference refer to
// them, so a code is never reused for a different mistake. Syntax errors use
// E0001–E0099; the checker's codes start at E0100.
const (
	CodeUnexpected         = "E0001" // a token that cannot appear here
	CodeUnterminatedString = "E0002" // a string or raw string with no closing quote
	CodeBadEscape          = "E0003" // an escape other than \n \t \r \\ \" \u{HEX}
	CodeNumberRange        = "E0004" // an integer over int64, or a float over float64
	CodeMissingHeader      = "E0005" // the file does not start with policy "name"
	CodeInvalidChar        = "E0006" // a character that is not part of the language, or bad UTF-8
	CodeBadNumber          = "E0007" // a malformed number: misplaced '_', exponent without digits
	CodeDuplicateHeader    = "E0008" // a second policy header
	CodeSectionOrder       = "E0009" // schema after statements, statements after tests, two schemas
	CodeExpectedBrace      = "E0010" // a block without its '{'
	CodeUnclosed           = "E0011" // a '{', '(' or '[' never closed
	CodeAssignOp           = "E0012" // set or let without '=' (== where = was meant)
	CodeDropIf             = "E0013" // drop if C / stop if C instead of drop when C
	CodeExpectedPath       = "E0014" // set, remove, rename or lift of a bare name (a path starts with a dot)
	CodeUnknownMeta        = "E0015" // %name other than %tag and %time
	CodeMapKey             = "E0016" // a map literal key that is not a quoted string
	CodeInList             = "E0017" // in not followed by a list literal or a name
	CodeUnknownType        = "E0018" // a schema type name that does not exist
	CodeOnFault            = "E0019" // on_fault not followed by drop or keep
	CodeTestBlock          = "E0020" // a test block missing input or expect, or with a repeated or unknown line
	CodeKeywordName        = "E0021" // a reserved word where a variable name is needed
	CodeStmtEnd            = "E0022" // more tokens after a complete statement
	CodeExpectedExpr       = "E0023" // an operand is missing
	CodeForNames           = "E0024" // for with one name instead of two
	CodeSchemaField        = "E0025" // a schema line that is not name: type, or ... not last
	CodeExpectedString     = "E0026" // a string literal is needed (policy name, test name, tag, prefix)
	CodeBadCall            = "E0027" // a call of something that is not a built-in function name
	CodeUnexpectedStmt     = "E0028" // a statement keyword where none can start (else without if, stray })
	CodeTooDeep            = "E0029" // expressions, types or blocks nested over 1000 deep
	CodeSchemaName         = "E0030" // schema followed by a name other than otlp
	CodeReturnOutside      = "E0031" // return outside the body of a function
	CodeFuncHeader         = "E0032" // a fn header that is not fn name(p: T, ...) R {
	CodeParamHeader        = "E0033" // a param declaration that is not param name: T [= E]
	CodeModuleBody         = "E0034" // a module file holding what only a policy holds (schema, param, statements)
	CodeImportDecl         = "E0035" // an import that is not import "path.policy" [as name]
	CodeStateSyntax        = "E0036" // a dedupe, rate_limit or sample statement missing a part
)

// Codes lists every syntax error code with a one-line meaning, in code
// order. The user reference is written from it.
var Codes = []struct{ Code, Meaning string }{
	{CodeUnexpected, "unexpected token: the parser needed something else here"},
	{CodeUnterminatedString, `unterminated string: a "..." string must close on its line; a raw string needs its closing backquote`},
	{CodeBadEscape, `invalid escape sequence: only \n \t \r \\ \" and \u{HEX} exist`},
	{CodeNumberRange, "number out of range: integers are int64, floats float64"},
	{CodeMissingHeader, `missing policy header: a file starts with policy "name"`},
	{CodeInvalidChar, "invalid character, or source that is not UTF-8"},
	{CodeBadNumber, "malformed number: '_' must separate digits; an exponent needs digits"},
	{CodeDuplicateHeader, "a file has exactly one policy header"},
	{CodeSectionOrder, "sections out of order: header, then the declarations (at most one schema, const, fn), then statements, then tests"},
	{CodeExpectedBrace, "missing '{': if, else, for, schema and test bodies go in braces"},
	{CodeUnclosed, "unclosed '{', '(' or '['"},
	{CodeAssignOp, "set and let assign with = (or ?= for set); == compares"},
	{CodeDropIf, "drop and stop take a condition with when, not if"},
	{CodeExpectedPath, "set, remove, rename and lift need a record path such as .a.b, not a bare name"},
	{CodeUnknownMeta, "unknown metadata: there are %tag and %time"},
	{CodeMapKey, `map literal keys are quoted strings: {"key": value}`},
	{CodeInList, "in needs a list literal or the name of a constant list on its right: x in [a, b]"},
	{CodeUnknownType, "unknown type name in a schema"},
	{CodeOnFault, "on_fault takes drop or keep"},
	{CodeTestBlock, "a test block has one input, at most one tag and one expect"},
	{CodeKeywordName, "a reserved word cannot name a variable"},
	{CodeStmtEnd, "a statement ends at the end of its line: something follows it"},
	{CodeExpectedExpr, "an expression is missing"},
	{CodeForNames, "for names two variables: for k, v in E (use _ for one you do not need)"},
	{CodeSchemaField, "a schema line is name: type, and ... can only be the last line of an object"},
	{CodeExpectedString, "a string literal is needed here"},
	{CodeBadCall, "only built-in functions can be called, by name"},
	{CodeUnexpectedStmt, "this cannot start a statement here"},
	{CodeTooDeep, "nesting deeper than 1000 levels (brackets, operators, types or blocks)"},
	{CodeSchemaName, "unknown schema name: the only named schema is otlp (schema otlp { ... })"},
	{CodeReturnOutside, "return is a statement of function bodies only; a policy ends with drop or stop"},
	{CodeFuncHeader, "a function is declared fn name(p: T, q: U = constant) R { ... }"},
	{CodeParamHeader, "a parameter is declared param name: T, or param name: T = constant"},
	{CodeModuleBody, "a module holds import, const, fn and test declarations only: no schema, param, on_fault or statements"},
	{CodeImportDecl, `an import is written import "path.policy", or import "path.policy" as name`},
	{CodeStateSyntax, `dedupe by E, … within "D" [count P] [max_keys N]; rate_limit by E, … to N per "D" [max_keys N]; sample by E, … keep 1 in N; sample keep 1 in N`},
}

// An Error is a syntax error: a stable code, the span it covers, a message
// and, where one helps, a hint on how to fix it.
type Error struct {
	Pos, End Pos
	Code     string
	Msg      string
	Hint     string
}

// Error formats e as "line:col: error[CODE]: msg". Callers that know the
// file name put it in front.
func (e *Error) Error() string {
	return fmt.Sprintf("%s: error[%s]: %s", e.Pos, e.Code, e.Msg)
}

// ErrorList is a list of syntax errors. It sorts by position.
type ErrorList []*Error

func (l ErrorList) Len() int      { return len(l) }
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l ErrorList) Less(i, j int) bool {
	if l[i].Pos.Offset != l[j].Pos.Offset {
		return l[i].Pos.Offset < l[j].Pos.Offset
	}
	return l[i].Code < l[j].Code
}

// Sort sorts the list by position, stably.
func (l ErrorList) Sort() { sort.Stable(l) }

// Error describes the first error and how many more there are.
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	return fmt.Sprintf("%s (and %d more errors)", l[0], len(l)-1)
}

// Err returns l as an error, or nil when l is empty, so that an empty list
// never becomes a non-nil error interface.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Report writes every error as "file:line:col: error[CODE]: msg", with the
// hint on the following line when there is one, control characters escaped
// as in diagnostics (\x1b).
func (l ErrorList) Report(filename string) string {
	var b strings.Builder
	for _, e := range l {
		// Messages may quote the source: escape what a terminal acts on.
		fmt.Fprintf(&b, "%s:%s: error[%s]: %s\n", termesc.String(filename), e.Pos, e.Code, termesc.String(e.Msg))
		if e.Hint != "" {
			fmt.Fprintf(&b, "  = help: %s\n", termesc.String(e.Hint))
		}
	}
	return b.String()
}
