package check

import (
	"fmt"
	"unicode/utf8"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/printf"
	"github.com/policyrun/policyrun/policy"
)

// formatArgs checks the call format(fmt, args...): fmt must be a constant
// (constParam reported it when it is not), well formed, with one verb per
// argument, each fitting its argument's type. Errors point at the verb in
// the literal.
func (c *checker) formatArgs(e *policy.CallExpr, args []*types.Type) {
	lit, ok := c.constLit(e.Args[0])
	if !ok {
		return // a parameter of a function is checked at each call
	}
	c.checkFormat(lit, e.Args[1:], args[1:], nil)
}

// fmtSite is a call that gives a function's format parameter its
// constant: at is the call's argument, use says where the body formats.
type fmtSite struct {
	at  policy.Expr
	use string
}

// place returns d, about the body's value x, at the call's argument, which
// is what does not fit x: the body alone has no format to check.
func (s *fmtSite) place(d diag.Diagnostic) diag.Diagnostic {
	if s == nil {
		return d
	}
	d.Pos, d.End = s.at.Pos(), s.at.End()
	d.Label = d.Label + ", in the body"
	return s.note(d)
}

// note adds to d's hint where the body formats.
func (s *fmtSite) note(d diag.Diagnostic) diag.Diagnostic {
	if s == nil {
		return d
	}
	if d.Hint == "" {
		d.Hint = s.use
	} else {
		d.Hint = s.use + ": " + d.Hint
	}
	return d
}

// checkFormat checks the constant format lit against the values vals, of
// types valTypes, that it formats; site is the call that gives lit to a
// function's format(param, ...), nil for a format written in the call.
func (c *checker) checkFormat(lit *policy.BasicLit, vals []policy.Expr, valTypes []*types.Type, site *fmtSite) {
	verbs, perr := printf.Verbs(lit.Str)
	if perr != nil {
		c.report(site.note(diag.Errorf(litSpan(lit, perr.Start, perr.End), CodeFormat, "bad format: %s", perr.Msg).
			WithLabel("this directive").
			WithHint("the verbs are %%s %%q (strings), %%d (ints), %%f (numbers), %%x (ints, strings), %%v (anything); write %%%% for a %%")))
		return
	}
	for i, v := range verbs {
		if i >= len(vals) {
			c.report(site.note(diag.Errorf(litSpan(lit, v.Start, v.End), CodeFormat, "%s has no argument: the format has %d verbs and %d %s",
				lit.Str[v.Start:v.End], len(verbs), len(vals), plural(len(vals), "argument", "arguments")).
				WithLabel("verb %d", i+1).
				WithHint("pass one argument per verb, or write %%%% for a %%")))
			return
		}
		c.formatVerb(lit, v, i, vals[i], valTypes[i], site)
	}
	if len(vals) > len(verbs) {
		a := vals[len(verbs)]
		c.report(site.place(diag.Errorf(a, CodeFormat, "the format has %d %s and %d %s", len(verbs), plural(len(verbs), "verb", "verbs"), len(vals), plural(len(vals), "argument", "arguments")).
			WithLabel("%s has no verb", exprText(a)).
			WithHint("add a verb for it to the format (%%v takes anything), or remove it")))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// verbKinds are the types each verb takes.
var verbKinds = map[byte][]types.Kind{
	's': {types.String, types.Bytes},
	'q': {types.String, types.Bytes},
	'x': {types.Int, types.String, types.Bytes},
	'd': {types.Int},
	'f': {types.Int, types.Float},
}

var verbWants = map[byte]string{'s': "a string", 'q': "a string", 'x': "an int or a string", 'd': "an int", 'f': "a number"}

// formatVerb checks that argument i (a, of type t) of format fits the verb v.
func (c *checker) formatVerb(lit *policy.BasicLit, v printf.Verb, i int, a policy.Expr, t *types.Type, site *fmtSite) {
	if t.IsInvalid() {
		return
	}
	verb := lit.Str[v.Start:v.End]
	what := fmt.Sprintf("the argument of %s", verb)
	if t.IsOptional() {
		c.report(site.place(c.optionalErr(a, t, what)))
		return
	}
	if v.Verb == 'v' {
		return // %v takes anything present
	}
	kinds := verbKinds[v.Verb]
	if t.Kind == types.Any {
		want := types.StringType
		if kinds[0] == types.Int {
			want = types.IntType
		}
		c.report(site.place(anyErr(a, t, what, want)))
		return
	}
	for _, k := range kinds {
		if t.Kind == k {
			return
		}
	}
	c.report(site.note(diag.Errorf(litSpan(lit, v.Start, v.End), CodeFormatVerb, "%s needs %s, and argument %d, %s, is %s", verb, verbWants[v.Verb], i+2, exprText(a), t).
		WithLabel("%s formats %s", verb, verbWants[v.Verb]).
		WithHint("%s", verbHint(t, exprText(a)))))
}

// verbHint says which verbs fit a value of type t.
func verbHint(t *types.Type, x string) string {
	switch t.Kind {
	case types.String, types.Bytes:
		return "for a string write %s (or %q to quote it, %x for its bytes in hex, %v)"
	case types.Int:
		return "for an int write %d (or %x for hex, %f, %v)"
	case types.Float:
		return fmt.Sprintf("for a float write %%f (%%.2f for two decimals) or %%v; for an int, round it first: floor(%s), round(%s)", x, x)
	}
	return "write %v, which writes any value as to_string does"
}

// litSpan is the span of the bytes [start, end) of the string literal
// lit's value, in the source: escapes make the two differ.
func litSpan(lit *policy.BasicLit, start, end int) span {
	return span{lit.Pos().Advance(lit.Raw[:rawOffset(lit.Raw, start)]), lit.Pos().Advance(lit.Raw[:rawOffset(lit.Raw, end)])}
}

// rawOffset is the offset in raw, a string literal as written (with its
// quotes), of the byte at offset i of its value.
func rawOffset(raw string, i int) int {
	if raw == "" {
		return 0
	}
	if raw[0] == '`' {
		return min(1+i, len(raw))
	}
	r, v := 1, 0 // offsets in raw and in the value
	for r < len(raw)-1 && v < i {
		if raw[r] != '\\' || r+1 >= len(raw) {
			r, v = r+1, v+1
			continue
		}
		if raw[r+1] != 'u' {
			r, v = r+2, v+1 // \n \t \r \\ \"
			continue
		}
		// \u{HEX}
		j := r + 2
		for j < len(raw) && raw[j] != '}' {
			j++
		}
		var code rune
		for _, h := range raw[min(r+3, j):j] {
			code = code*16 + rune(hexVal(h))
		}
		r, v = min(j+1, len(raw)), v+utf8.RuneLen(code)
	}
	return r
}

func hexVal(h rune) int {
	switch {
	case '0' <= h && h <= '9':
		return int(h - '0')
	case 'a' <= h && h <= 'f':
		return int(h-'a') + 10
	case 'A' <= h && h <= 'F':
		return int(h-'A') + 10
	}
	return 0
}
