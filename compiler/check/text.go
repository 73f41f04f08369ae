package check

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
)

// exprText writes e back as source, compactly, for messages and labels.
func exprText(e policy.Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func writeExpr(b *strings.Builder, e policy.Expr) {
	switch e := e.(type) {
	case *policy.RootExpr:
		b.WriteByte('.')
	case *policy.MetaExpr:
		b.WriteString("%" + e.Name)
	case *policy.Ident:
		b.WriteString(e.Name)
	case *policy.FieldExpr:
		if _, root := e.X.(*policy.RootExpr); !root {
			writeExpr(b, e.X)
		}
		b.WriteString("." + quoteName(e.Name))
	case *policy.IndexExpr:
		writeExpr(b, e.X)
		b.WriteByte('[')
		writeExpr(b, e.Index)
		b.WriteByte(']')
	case *policy.CallExpr:
		b.WriteString(e.Fun.Name + "(")
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, a)
		}
		b.WriteByte(')')
	case *policy.BinaryExpr:
		writeExpr(b, e.X)
		b.WriteString(" " + e.Op.String() + " ")
		writeExpr(b, e.Y)
	case *policy.UnaryExpr:
		b.WriteString(e.Op.String())
		writeExpr(b, e.X)
	case *policy.ParenExpr:
		b.WriteByte('(')
		writeExpr(b, e.X)
		b.WriteByte(')')
	case *policy.BasicLit:
		if e.Raw != "" {
			b.WriteString(e.Raw)
		} else if e.Kind == policy.LitString {
			b.WriteString(policy.Quote(e.Str))
		}
	case *policy.ListLit:
		b.WriteString("[...]")
	case *policy.MapLit:
		b.WriteString("{...}")
	default:
		b.WriteString("?")
	}
}

// stepText is the path xe.name, as the user would write it.
func stepText(xe policy.Expr, name string) string {
	if _, root := xe.(*policy.RootExpr); root {
		return "." + quoteName(name)
	}
	return exprText(xe) + "." + quoteName(name)
}

func quoteName(name string) string {
	for i := 0; i < len(name); i++ {
		ch := name[i]
		if !(ch == '_' || 'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || i > 0 && '0' <= ch && ch <= '9') {
			return policy.Quote(name)
		}
	}
	if name == "" || policy.Lookup(name) != policy.IDENT {
		return policy.Quote(name)
	}
	return name
}

// defaultFor returns a literal of type t, for hints ("?? 0").
func defaultFor(t *types.Type) string {
	switch types.NonOptional(t).Kind {
	case types.String:
		return `""`
	case types.Int:
		return "0"
	case types.Float:
		return "0.0"
	case types.Bool:
		return "false"
	case types.Map, types.Object:
		return "{}"
	case types.Array:
		return "[]"
	case types.Timestamp:
		return "now()"
	}
	return "<default>"
}

// narrowHint suggests how to get a value of kind want out of an any.
func narrowHint(e policy.Expr, want *types.Type) string {
	// (.n ?? 0) + 1 on an any: the default gives no type, the as_ does.
	if b, ok := policy.Unparen(e).(*policy.BinaryExpr); ok && b.Op == policy.COALESCE {
		if lit, ok := policy.Unparen(b.Y).(*policy.BasicLit); ok {
			as := map[policy.LitKind]builtin.ID{policy.LitInt: builtin.AsInt, policy.LitFloat: builtin.AsFloat,
				policy.LitString: builtin.AsString, policy.LitBool: builtin.AsBool}[lit.Kind]
			if as != builtin.Invalid {
				return fmt.Sprintf("a default does not narrow an any: write %s(%s) ?? %s", as, exprText(policy.Unparen(b.X)), exprText(b.Y))
			}
		}
	}
	x := exprText(policy.Unparen(e)) // as_int(x), not as_int((x))
	switch types.NonOptional(want).Kind {
	case types.String:
		return "narrow it first: as_string(" + x + `) ?? "", or test is_string(` + x + ")"
	case types.Int:
		return "narrow it first: as_int(" + x + ") ?? 0, or to_int(" + x + ") ?? 0 to convert"
	case types.Float:
		return "narrow it first: as_float(" + x + ") ?? 0.0, or to_float(" + x + ") ?? 0.0 to convert"
	case types.Bool:
		return "narrow it first: as_bool(" + x + ") ?? false, or test is_bool(" + x + ")"
	case types.Map, types.Object:
		return "narrow it first: as_map(" + x + ") ?? {}"
	case types.Array:
		return "narrow it first: as_array(" + x + ") ?? []"
	}
	return "narrow it first with an is_ test or an as_ conversion, e.g. as_string(" + x + `) ?? ""`
}

func (c *checker) optionalErr(e policy.Expr, t *types.Type, what string) diag.Diagnostic {
	x := exprText(e)
	d := diag.Errorf(e, CodeOptional, "%s may be absent or null, and %s is needed here", x, what).
		WithLabel("%s is %s", x, t)
	if !rootedPath(e) {
		// exists() takes a path (E0406): a computed value is tested
		// through a local.
		return d.WithHint("write %s ?? %s, or bind it with let and test it with != null first", x, defaultFor(t))
	}
	if _, local := policy.Unparen(e).(*policy.Ident); local {
		return d.WithHint("write %s ?? %s, or test %s != null first", x, defaultFor(t), x)
	}
	if c.presentReads[policy.Unparen(e)] {
		// Inside if exists(P): P exists, but may hold null.
		return d.WithHint("exists(%s) is true for a present null too: test %s != null instead, or write %s ?? %s", x, x, x, defaultFor(t))
	}
	return d.WithHint("write %s ?? %s, or test %s != null first", x, defaultFor(t), x)
}

func anyErr(e policy.Expr, t *types.Type, what string, want *types.Type) diag.Diagnostic {
	x := exprText(e)
	return diag.Errorf(e, CodeAnyUse, "%s has type %s and must be narrowed before use as %s", x, t, what).
		WithLabel("%s is %s", x, t).
		WithHint("%s", narrowHint(e, want))
}

func (c *checker) undefined(id *policy.Ident) {
	d := diag.Errorf(id, CodeUndefined, "undefined: %s", id.Name)
	switch {
	case builtin.Lookup(id.Name) != nil || c.funcs[id.Name] != nil:
		d = d.WithHint("%s is a function: call it as %s(...)", id.Name, id.Name)
	case c.importedConst(id.Name) != "":
		d = d.WithHint("did you mean %s? a module's constants are read by the module's name", c.importedConst(id.Name))
	default:
		names := c.constNames()
		for s := c.scope; s != nil; s = s.parent {
			for n := range s.names {
				names = append(names, n)
			}
		}
		if s := suggest.Closest(id.Name, names); s != "" {
			d = d.WithHint("did you mean %s?", s)
		} else {
			d = d.WithHint("record fields start with a dot: .%s", id.Name)
		}
	}
	c.report(d)
}

// rootedPath reports whether e is a path exists() can test: fields and
// indexes down to the record, metadata or a local (not split(...)[0]).
func rootedPath(e policy.Expr) bool {
	for {
		switch x := policy.Unparen(e).(type) {
		case *policy.FieldExpr:
			e = x.X
		case *policy.IndexExpr:
			e = x.X
		case *policy.RootExpr, *policy.MetaExpr, *policy.Ident:
			return true
		default:
			return false
		}
	}
}
