package check

import (
	"fmt"
	"strconv"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
)

// The hints of expression diagnostics: what to write instead, in the
// user's own terms.

func truthHint(e policy.Expr, x *types.Type) string {
	s := exprText(e)
	switch x.Kind {
	case types.String:
		return s + ` != ""`
	case types.Int, types.Float:
		return s + " != 0"
	case types.Map, types.Array, types.Object:
		return "len(" + s + ") > 0"
	}
	return "exists(" + s + ")"
}

// compareHint suggests a fix for comparing values of different types; the
// classic is .status == "500" on an int.
func compareHint(e *policy.BinaryExpr, x, y *types.Type) string {
	num, str := e.X, e.Y
	nt, stt := x, y
	if types.NonOptional(y).IsNumeric() {
		num, str, nt, stt = e.Y, e.X, y, x
	}
	if types.NonOptional(nt).IsNumeric() && types.NonOptional(stt).Kind == types.String {
		if lit, ok := policy.Unparen(str).(*policy.BasicLit); ok && lit.Kind == policy.LitString {
			if _, err := strconv.ParseFloat(lit.Str, 64); err == nil {
				return "compare with the number " + lit.Str + ", or write to_string(" + exprText(num) + ") " + e.Op.String() + " " + policy.Quote(lit.Str)
			}
		}
		conv := "to_int"
		if types.NonOptional(nt).Kind == types.Float {
			conv = "to_float"
		}
		return "convert one side: to_string(" + exprText(num) + ") " + e.Op.String() + " " + exprText(str) + ", or " + conv + "(" + exprText(str) + ") " + e.Op.String() + " " + exprText(num)
	}
	return "values of different types are never equal; convert one side first (to_string, to_int, ...)"
}

// parseTimeHint writes parse_time(s, layout) ?? now(), with the layout of
// a literal guessed from its shape.
func parseTimeHint(s policy.Expr) string {
	layout := "%Y-%m-%dT%H:%M:%SZ"
	if lit, ok := policy.Unparen(s).(*policy.BasicLit); ok && lit.Kind == policy.LitString {
		switch len(lit.Str) {
		case len("2006-01-02"):
			layout = "%Y-%m-%d"
		case len("2006-01-02 15:04:05"):
			layout = "%Y-%m-%d" + lit.Str[10:11] + "%H:%M:%S"
		}
	}
	return fmt.Sprintf("(parse_time(%s, %q) ?? now())", exprText(s), layout)
}

// orderHint suggests a fix for ordering a number against a string.
func orderHint(e *policy.BinaryExpr, x *types.Type) string {
	str, num := e.X, e.Y
	if x.IsNumeric() {
		str, num = e.Y, e.X
	}
	if lit, ok := policy.Unparen(str).(*policy.BasicLit); ok && lit.Kind == policy.LitString {
		if _, err := strconv.ParseFloat(lit.Str, 64); err == nil {
			return "compare with the number " + lit.Str + " (no quotes)"
		}
	}
	conv := "(to_int(" + exprText(str) + ") ?? 0)"
	if x.IsNumeric() {
		return "convert the string first: " + exprText(num) + " " + e.Op.String() + " " + conv
	}
	return "convert the string first: " + conv + " " + e.Op.String() + " " + exprText(num)
}

// precedenceHint rewrites the hint of an E0307 reported on the rightmost
// operand of a ?? whose left side is an unparenthesised operation: in
// `.a / to_float(.b) ?? 1.0` the default applies to the whole quotient,
// and "write to_float(.b) ?? 0.0" is what the user thinks they wrote.
func (c *checker) precedenceHint(e *policy.BinaryExpr, diags []diag.Diagnostic) {
	var op string
	switch x := e.X.(type) {
	case *policy.BinaryExpr:
		op = x.Op.String()
	case *policy.UnaryExpr:
		op = "unary " + x.Op.String()
	default:
		return
	}
	for i := range diags {
		d := &diags[i]
		if d.Code != CodeOptional || d.End != e.X.End() {
			continue
		}
		// Walk down the right edge of e.X to the operand d covers.
		var operand policy.Expr
		for n := e.X; n != nil && operand == nil; {
			switch x := n.(type) {
			case *policy.BinaryExpr:
				n = x.Y
			case *policy.UnaryExpr:
				n = x.X
			default:
				n = nil
			}
			if n != nil && n.Pos() == d.Pos {
				operand = n
			}
		}
		if operand == nil {
			continue
		}
		d.Hint = fmt.Sprintf("?? binds more loosely than %s, so its default applies to the whole of %s: write (%s ?? %s)",
			op, exprText(e.X), exprText(operand), exprText(e.Y))
	}
}

// orListHint rewrites the hint of an E0304 on the literal of
// `.level == "error" || "warn"` (English for .level in ["error", "warn"]).
func (c *checker) orListHint(e *policy.BinaryExpr, diags []diag.Diagnostic) {
	lit, ok := policy.Unparen(e.Y).(*policy.BasicLit)
	if !ok || lit.Kind == policy.LitBool || lit.Kind == policy.LitNull {
		return
	}
	cmp, ok := policy.Unparen(e.X).(*policy.BinaryExpr)
	// == with || and != with && are the lists people mean.
	if !ok || !(cmp.Op == policy.EQL && e.Op == policy.LOR || cmp.Op == policy.NEQ && e.Op == policy.LAND) {
		return
	}
	first, ok := policy.Unparen(cmp.Y).(*policy.BasicLit)
	if !ok || first.Kind != lit.Kind {
		return
	}
	for i := range diags {
		d := &diags[i]
		if d.Code != CodeLogic || d.Pos != e.Y.Pos() {
			continue
		}
		x, a, b := exprText(cmp.X), exprText(cmp.Y), exprText(e.Y)
		if cmp.Op == policy.EQL {
			d.Hint = fmt.Sprintf("compare each value: %s == %s %s %s == %s, or write %s in [%s, %s]", x, a, e.Op, x, b, x, a, b)
		} else {
			d.Hint = fmt.Sprintf("compare each value: %s != %s %s %s != %s, or write !(%s in [%s, %s])", x, a, e.Op, x, b, x, a, b)
		}
	}
}
