package lsp

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// found is the node under a position: the innermost expression whose span
// holds it, or the name of a schema field.
type found struct {
	node policy.Node
	call *policy.CallExpr  // the call whose function name node is
	decl *policy.FieldDecl // node is the name of this schema field
}

// nodeAt finds the node of f at byte offset off.
func nodeAt(f *policy.File, off int) found {
	var res found
	calls := map[*policy.Ident]*policy.CallExpr{}
	holds := func(from, to policy.Pos) bool { return from.Offset <= off && off < to.Offset }
	policy.Inspect(f, func(n policy.Node) bool {
		switch n := n.(type) {
		case *policy.FieldDecl:
			if holds(n.NamePos, n.NamePos.Advance(fieldDeclText(n))) {
				res = found{node: n, decl: n}
			}
		case *policy.CallExpr:
			if n.Fun != nil {
				calls[n.Fun] = n
			}
			if holds(n.Pos(), n.End()) {
				res = found{node: n}
			}
		case *policy.BadExpr:
		case policy.Expr:
			if holds(n.Pos(), n.End()) {
				res = found{node: n}
				if id, ok := n.(*policy.Ident); ok {
					res.call = calls[id]
				}
			}
		}
		return true
	})
	return res
}

func fieldDeclText(fd *policy.FieldDecl) string {
	if fd.Quoted {
		return policy.Quote(fd.Name)
	}
	return fd.Name
}

// hover is the type of the path, local or expression under the cursor, a
// built-in's signature and doc, or a schema field's declared type.
func (s *server) hover(d *document, off int) any {
	an := d.analysis()
	if imp, m := importAt(an, off); imp != nil {
		if m == nil {
			return nil
		}
		rng := d.nodeRange(imp)
		return hover{Contents: markupContent{Kind: "markdown", Value: importDoc(imp, m)}, Range: &rng}
	}
	at := nodeAt(an.file, off)
	if at.node == nil {
		return nil
	}
	var text string
	rng := d.nodeRange(at.node)
	switch n := at.node.(type) {
	case *policy.FieldDecl:
		text = code(fieldDeclText(n) + ": " + d.source(n.Type))
		rng = d.rangeOf(n.NamePos.Offset, n.NamePos.Offset+len(fieldDeclText(n)))
	case *policy.CallExpr:
		if n.Fun == nil {
			return nil
		}
		text = callDoc(an, n)
		if t := an.info.Types[n]; text != "" && !t.IsInvalid() {
			text = code(shortSource(d, n)+": "+typeText(t)) + "\n\n" + text
		}
	case *policy.Ident:
		switch {
		case at.call != nil:
			text = callDoc(an, at.call)
		case an.info.Consts[n] != nil:
			k := an.info.Consts[n]
			if k.Param != nil {
				text = paramDoc(d, k.Param)
			} else {
				text = code("const "+k.Name+": "+typeText(k.Type)) + fmt.Sprintf("\n\ndeclared at line %d", k.Decl.Const.Line)
			}
		case declaredParam(an.file, n) != nil:
			text = paramDoc(d, declaredParam(an.file, n))
		case an.info.Defs[n] != nil:
			l := an.info.Defs[n]
			text = localDoc(l, l.Type)
		case an.info.Uses[n] != nil:
			t := an.info.Types[n]
			if t.IsInvalid() {
				t = an.info.Uses[n].Type
			}
			text = localDoc(an.info.Uses[n], t)
		}
	case policy.Expr:
		t := an.info.Types[n]
		if t.IsInvalid() {
			return nil
		}
		label := shortSource(d, n)
		if label != "" {
			label += ": "
		}
		text = code(label + typeText(t))
		if k := an.info.Consts[n]; k != nil && k.Decl != nil && moduleOf(an, nil, k) != nil {
			m := moduleOf(an, nil, k)
			text = code("const "+m.Name+"."+k.Name+": "+typeText(k.Type)) + "\n\n" + declaredAt(m, k.Decl.Const.Line)
		} else if fe, ok := n.(*policy.FieldExpr); ok {
			if pos, ok := fieldDefinition(an, fe); ok {
				text += fmt.Sprintf("\n\ndeclared at line %d", pos.Line)
			}
		}
	}
	if text == "" {
		return nil
	}
	return hover{Contents: markupContent{Kind: "markdown", Value: text}, Range: &rng}
}

// paramDoc is a parameter's declaration and where its value comes from.
func paramDoc(d *document, p *policy.ParamDecl) string {
	decl := "param " + p.Name.Name + ": " + d.source(p.Type)
	if p.Default != nil {
		decl += " = " + d.source(p.Default)
	}
	return code(decl) + fmt.Sprintf("\n\nparameter declared at line %d: its value is given when the policy is loaded "+
		"(eval --param, params: in a pipeline or Collector config, a test's param line)", p.Param.Line)
}

// declaredParam is the parameter id declares, nil when it declares none.
func declaredParam(f *policy.File, id *policy.Ident) *policy.ParamDecl {
	if f == nil {
		return nil
	}
	for _, dc := range f.Decls {
		if p, ok := dc.(*policy.ParamDecl); ok && p.Name == id {
			return p
		}
	}
	return nil
}

// callDoc is the signature and doc of the function the call c calls: a
// built-in, or a function of the file.
func callDoc(an *analysis, c *policy.CallExpr) string {
	if an.info != nil {
		if fn := an.info.Funcs[c]; fn != nil {
			return code("fn "+fn.Sig()) + "\n\n" + declaredAt(moduleOf(an, fn, nil), fn.Decl.Fn.Line)
		}
	}
	if c.Qual != nil {
		return ""
	}
	return builtinDoc(c.Fun.Name)
}

// builtinDoc is the signature and the doc line of the built-in name, or
// "" when there is none.
func builtinDoc(name string) string {
	f := builtin.Lookup(name)
	if f == nil {
		return ""
	}
	return code(f.Sig) + "\n\n" + f.Doc
}

func localDoc(l *check.Local, t *types.Type) string {
	if t.IsInvalid() {
		return ""
	}
	switch l.Kind {
	case check.ForKey:
		return code(l.Name+": "+typeText(t)) + fmt.Sprintf("\n\nthe key of the for at line %d", l.Decl.Pos().Line)
	case check.ForValue:
		return code(l.Name+": "+typeText(t)) + fmt.Sprintf("\n\nthe value of the for at line %d", l.Decl.Pos().Line)
	case check.Param:
		return code(l.Name+": "+typeText(t)) + fmt.Sprintf("\n\na parameter of the fn at line %d", l.Decl.Pos().Line)
	}
	return code("let "+l.Name+": "+typeText(t)) + fmt.Sprintf("\n\ndeclared at line %d", l.Decl.Pos().Line)
}

// shortSource is the text of n when it fits on one short line, else "".
func shortSource(d *document, n policy.Node) string {
	s := d.source(n)
	if len(s) > 60 || strings.ContainsAny(s, "\r\n") {
		return ""
	}
	return s
}

func code(s string) string { return "```policy\n" + s + "\n```" }

// typeText writes t as the language does, an object too long for one line
// one field a line.
func typeText(t *types.Type) string {
	s := t.String()
	base, opt := t, ""
	if t.Kind == types.Optional {
		base, opt = t.Elem, "?"
	}
	if len(s) <= 60 || base.Kind != types.Object {
		return s
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, f := range base.Fields() {
		fmt.Fprintf(&b, "  %s: %s\n", fieldNameText(f.Name), f.Type)
	}
	if base.Open {
		b.WriteString("  ...\n")
	}
	b.WriteString("}" + opt)
	return b.String()
}

// fieldNameText is a field name as a path writes it.
func fieldNameText(name string) string {
	if isName(name) {
		return name
	}
	return policy.Quote(name)
}
