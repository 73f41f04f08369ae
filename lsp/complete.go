package lsp

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// placeholder stands for the name being typed after a '.', so that the
// text parses and the checker types what is before the '.'.
const placeholder = "__policyrun_lsp__"

// completion offers, after a '.', the fields of what is before it (the
// record's from the schema, or the OTLP view's for schema otlp, and those
// earlier statements set); after a '%', the record's metadata; in the
// schema block, the type names; elsewhere the locals in scope, the
// built-ins and the keywords. Nothing inside comments and strings.
func (s *server) completion(d *document, off int) any {
	list := completionList{Items: []completionItem{}}
	if inCommentOrString(d.text, off) {
		return list
	}
	from := off
	for from > 0 && isIdentByte(d.text[from-1]) {
		from--
	}
	if from < off && isDigit(d.text[from]) {
		return list // a number
	}
	edit := d.rangeOf(from, off)
	an := d.analysis()
	var before byte
	if from > 0 {
		before = d.text[from-1]
	}
	switch {
	case inSchema(an.file, off):
		if before != '.' && before != '%' {
			list.Items = typeItems(edit)
		}
	case before == '.' && qualifier(d.text, from-1) != "" && imported(an, qualifier(d.text, from-1)) != nil:
		list.Items = memberItems(imported(an, qualifier(d.text, from-1)), edit)
	case before == '.':
		if t := s.baseType(d, an, from); t != nil {
			list.Items = fieldItems(t, edit)
		}
	case before == '%':
		for _, m := range [...]struct{ name, typ string }{{"time", "timestamp"}, {"tag", "string"}} {
			list.Items = append(list.Items, completionItem{Label: m.name, Kind: kindVariable, Detail: m.typ,
				TextEdit: &textEdit{Range: edit, NewText: m.name}})
		}
	default:
		for _, l := range localsAt(an, off) {
			list.Items = append(list.Items, completionItem{Label: l.Name, Kind: kindVariable, Detail: l.Type.String(),
				SortText: "0" + l.Name, TextEdit: &textEdit{Range: edit, NewText: l.Name}})
		}
		for _, f := range builtin.All() {
			list.Items = append(list.Items, completionItem{Label: f.Name, Kind: kindFunction, Detail: f.Sig,
				Documentation: &markupContent{Kind: "markdown", Value: f.Doc},
				SortText:      "1" + f.Name, TextEdit: &textEdit{Range: edit, NewText: f.Name}})
		}
		for _, kws := range [][]string{policy.Keywords(), policy.ContextualKeywords()} {
			for _, k := range kws {
				list.Items = append(list.Items, completionItem{Label: k, Kind: kindKeyword,
					SortText: "2" + k, TextEdit: &textEdit{Range: edit, NewText: k}})
			}
		}
	}
	return list
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// qualifier is the name that ends right before the '.' at dot, when it is
// a bare name (not .a.b's b, nor a local's field: an import's name), or "".
func qualifier(text string, dot int) string {
	j := dot
	for j > 0 && isIdentByte(text[j-1]) {
		j--
	}
	if j == dot || isDigit(text[j]) || j > 0 && (text[j-1] == '.' || text[j-1] == '%') {
		return ""
	}
	return text[j:dot]
}

// baseType is the type of what stands before the '.' at from-1: the
// checker's, on the text with a placeholder name after the '.'; else,
// read from the text, a path of the record or of a local, typed from the
// schema.
func (s *server) baseType(d *document, an *analysis, from int) *types.Type {
	to := from
	for to < len(d.text) && isIdentByte(d.text[to]) {
		to++
	}
	trial := analyze(d.filename(), d.text[:from]+placeholder+d.text[to:], d.read)
	var base *types.Type
	policy.Inspect(trial.file, func(n policy.Node) bool {
		if fe, ok := n.(*policy.FieldExpr); ok && fe.NamePos.Offset == from && fe.Name == placeholder {
			base = trial.info.Types[fe.X]
		}
		return base == nil
	})
	if !base.IsInvalid() {
		return base
	}
	return textPathType(d.text[:from-1], an, from)
}

// textPathType types the path that text ends with (the text before a
// '.'): "" or an operator for the record, .a.b, x.a or .a["k"]; nil when
// text ends with something else.
func textPathType(text string, an *analysis, off int) *types.Type {
	var segs []pathSeg
	i := len(text)
	for {
		if i == 0 || !pathEnd(text[i-1]) {
			if i > 0 && strings.IndexByte(")}`", text[i-1]) >= 0 {
				return nil // a call, a literal, a raw string: the checker's to type
			}
			// The '.' of the record itself.
			return walkType(an.info.Root, segs)
		}
		switch c := text[i-1]; {
		case isIdentByte(c):
			j := i
			for j > 0 && isIdentByte(text[j-1]) {
				j--
			}
			name := text[j:i]
			if isDigit(name[0]) {
				return nil
			}
			if j > 0 && text[j-1] == '.' {
				segs = append([]pathSeg{{name: name}}, segs...)
				i = j - 1
				continue
			}
			for _, l := range localsAt(an, off) {
				if l.Name == name {
					return walkType(l.Type, segs)
				}
			}
			return nil
		case c == '"':
			j := strings.LastIndexByte(text[:i-1], '"')
			if j < 1 || text[j-1] != '.' {
				return nil
			}
			name, ok := unquote(text[j:i])
			if !ok {
				return nil
			}
			segs = append([]pathSeg{{name: name}}, segs...)
			i = j - 1
		case c == ']':
			depth, j := 0, i-1
			for ; j >= 0; j-- {
				if text[j] == ']' {
					depth++
				} else if text[j] == '[' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j < 0 {
				return nil
			}
			sg := pathSeg{index: true}
			if key, ok := unquote(text[j+1 : i-1]); ok {
				sg.name, sg.hasKey = key, true
			}
			segs = append([]pathSeg{sg}, segs...)
			i = j
		default:
			return nil
		}
	}
}

// pathEnd reports whether a path can end with c.
func pathEnd(c byte) bool { return isIdentByte(c) || c == '"' || c == ']' }

// unquote returns the text of a string literal without escapes (the
// paths completion reads; one with escapes is left alone).
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' || strings.ContainsAny(s[1:len(s)-1], "\\\"") {
		return "", false
	}
	return s[1 : len(s)-1], true
}

// walkType follows segs from t.
func walkType(t *types.Type, segs []pathSeg) *types.Type {
	for _, sg := range segs {
		if t.IsInvalid() {
			return nil
		}
		t = types.NonOptional(t)
		switch {
		case t.Kind == types.Object && (!sg.index || sg.hasKey):
			f, ok := t.Field(sg.name)
			if !ok {
				return nil
			}
			t = f.Type
		case sg.index && (t.Kind == types.Array || t.Kind == types.Map):
			t = t.Elem
		default:
			return nil
		}
	}
	return t
}

// fieldItems are the declared fields of object t (or t?), in their order.
func fieldItems(t *types.Type, edit Range) []completionItem {
	t = types.NonOptional(t)
	if t.Kind != types.Object {
		return nil
	}
	var items []completionItem
	for i, f := range t.Fields() {
		items = append(items, completionItem{
			Label: f.Name, Kind: kindField, Detail: f.Type.String(),
			SortText: fmt.Sprintf("%05d", i), FilterText: f.Name,
			TextEdit: &textEdit{Range: edit, NewText: fieldNameText(f.Name)},
		})
	}
	return items
}

func typeItems(edit Range) []completionItem {
	var items []completionItem
	for _, name := range []string{"bool", "int", "float", "string", "bytes", "timestamp", "null", "any", "array", "map", "otlp"} {
		items = append(items, completionItem{Label: name, Kind: kindTypeName, TextEdit: &textEdit{Range: edit, NewText: name}})
	}
	return items
}

// inSchema reports whether off is inside the schema block.
func inSchema(f *policy.File, off int) bool {
	s := f.Schema
	if s == nil || s.Type == nil {
		return false
	}
	return s.Type.Lbrace.Offset < off && (!s.Type.Rbrace.IsValid() || off <= s.Type.Rbrace.Offset)
}

// inCommentOrString reports whether off is inside a comment or a string
// literal of text.
func inCommentOrString(text string, off int) bool {
	var sc policy.Scanner
	sc.Init([]byte(text), nil)
	for {
		pos, tok, lit := sc.Scan()
		if tok == policy.EOF || pos.Offset >= off {
			return false
		}
		end := pos.Offset + len(lit)
		switch tok {
		case policy.COMMENT:
			if off <= end {
				return true
			}
		case policy.STRING, policy.RAWSTRING:
			if off < end || off == end && !closed(lit) {
				return true
			}
		}
	}
}

// closed reports whether the string literal lit has its closing quote.
func closed(lit string) bool {
	if len(lit) < 2 || lit[len(lit)-1] != lit[0] {
		return false
	}
	if lit[0] == '`' {
		return true
	}
	n := 0
	for i := len(lit) - 2; i > 0 && lit[i] == '\\'; i-- {
		n++
	}
	return n%2 == 0
}

// localsAt returns the locals in scope at off: the lets before it in its
// block and the blocks around it, and the variables of the fors around
// it. An inner local hides an outer one of the same name.
func localsAt(an *analysis, off int) []*check.Local {
	var out []*check.Local
	add := func(id *policy.Ident) {
		if id == nil {
			return
		}
		l := an.info.Defs[id]
		if l == nil {
			return
		}
		for i, o := range out {
			if o.Name == l.Name {
				out = append(out[:i], out[i+1:]...)
				break
			}
		}
		out = append(out, l)
	}
	within := func(b *policy.Block) bool {
		return b != nil && b.Lbrace.IsValid() && b.Lbrace.Offset < off && (!b.Rbrace.IsValid() || off <= b.Rbrace.Offset)
	}
	var walk func(stmts []policy.Stmt)
	walk = func(stmts []policy.Stmt) {
		for _, st := range stmts {
			if st == nil || st.Pos().Offset >= off {
				return
			}
			switch st := st.(type) {
			case *policy.LetStmt:
				if st.Value != nil && st.End().Offset < off {
					add(st.Name)
				}
			case *policy.ForStmt:
				if within(st.Body) {
					add(st.Key)
					add(st.Value)
					walk(st.Body.Stmts)
				}
			case *policy.IfStmt:
				for cur := st; cur != nil; {
					if within(cur.Body) {
						walk(cur.Body.Stmts)
						break
					}
					next, _ := cur.Else.(*policy.IfStmt)
					if b, ok := cur.Else.(*policy.Block); ok && within(b) {
						walk(b.Stmts)
					}
					cur = next
				}
			case *policy.Block:
				if within(st) {
					walk(st.Stmts)
				}
			}
		}
	}
	walk(an.file.Stmts)
	return out
}
