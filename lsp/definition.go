package lsp

import (
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
)

// definition goes from a local to its let or for, and from a field of
// the record to its line in the schema block.
func (s *server) definition(d *document, off int) any {
	an := d.analysis()
	if imp, m := importAt(an, off); imp != nil {
		if m == nil {
			return nil
		}
		// The module's file, at its header.
		return []Location{{URI: fileURI(m.Path), Range: Range{}}}
	}
	at := nodeAt(an.file, off)
	switch n := at.node.(type) {
	case *policy.Ident:
		if at.call != nil {
			if fn := an.info.Funcs[at.call]; fn != nil {
				return declLocation(d, an, fn.Decl.Name, fn, nil)
			}
			return nil
		}
		l := an.info.Uses[n]
		if l == nil {
			l = an.info.Defs[n]
		}
		if l != nil && l.Decl != nil {
			return []Location{{URI: d.uri, Range: d.nodeRange(l.Decl)}}
		}
		// A constant or a parameter: its declared name.
		if k := an.info.Consts[n]; k != nil {
			var name *policy.Ident
			if k.Param != nil {
				name = k.Param.Name
			} else {
				name = k.Decl.Name
			}
			return []Location{{URI: d.uri, Range: d.nodeRange(name)}}
		}
	case *policy.FieldExpr:
		if k := an.info.Consts[n]; k != nil && k.Decl != nil {
			return declLocation(d, an, k.Decl.Name, nil, k)
		}
		if pos, ok := fieldDefinition(an, n); ok {
			from, to := d.wordAround(pos.Offset)
			if fd := schemaField(an.file.Schema, n); fd != nil {
				from, to = fd.NamePos.Offset, fd.NamePos.Offset+len(fieldDeclText(fd))
			}
			return []Location{{URI: d.uri, Range: d.rangeOf(from, to)}}
		}
	case *policy.FieldDecl:
		return []Location{{URI: d.uri, Range: d.rangeOf(n.NamePos.Offset, n.NamePos.Offset+len(fieldDeclText(n)))}}
	}
	return nil
}

// fieldDefinition returns where the field fe reads is declared: its line
// in the schema block for a path of the record, else where the type of
// fe's object says it was declared (a let's object literal, a set).
func fieldDefinition(an *analysis, fe *policy.FieldExpr) (policy.Pos, bool) {
	if fd := schemaField(an.file.Schema, fe); fd != nil {
		return fd.NamePos, true
	}
	t := an.info.Types[fe.X]
	if t.IsInvalid() {
		return policy.Pos{}, false
	}
	t = types.NonOptional(t)
	if t.Kind != types.Object {
		return policy.Pos{}, false
	}
	f, ok := t.Field(fe.Name)
	if !ok || !f.Decl.IsValid() {
		return policy.Pos{}, false
	}
	return f.Decl, true
}

// A pathSeg is one step of a path: a field name, or an index (with the
// key when it is a constant string).
type pathSeg struct {
	name   string
	index  bool
	hasKey bool
}

// recordPath returns the steps of e from the record's root, and false
// when e is no path of the record.
func recordPath(e policy.Expr) ([]pathSeg, bool) {
	var segs []pathSeg
	for {
		switch x := e.(type) {
		case *policy.FieldExpr:
			segs = append(segs, pathSeg{name: x.Name})
			e = x.X
		case *policy.IndexExpr:
			sg := pathSeg{index: true}
			if lit, ok := x.Index.(*policy.BasicLit); ok && lit.Kind == policy.LitString {
				sg.name, sg.hasKey = lit.Str, true
			}
			segs = append(segs, sg)
			e = x.X
		case *policy.ParenExpr:
			e = x.X
		case *policy.RootExpr:
			for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
				segs[i], segs[j] = segs[j], segs[i]
			}
			return segs, true
		default:
			return nil, false
		}
	}
}

// schemaField returns the declaration in the schema block of the field
// the path e ends in, or nil.
func schemaField(s *policy.Schema, e policy.Expr) *policy.FieldDecl {
	segs, ok := recordPath(e)
	if !ok || len(segs) == 0 || s == nil || s.Type == nil {
		return nil
	}
	var t policy.TypeExpr = s.Type
	var decl *policy.FieldDecl
	for _, sg := range segs {
		for {
			o, ok := t.(*policy.OptionalType)
			if !ok {
				break
			}
			t = o.Elem
		}
		decl = nil
		switch tt := t.(type) {
		case *policy.ObjectType:
			if tt == nil || sg.index && !sg.hasKey {
				return nil
			}
			for _, fd := range tt.Fields {
				if fd != nil && fd.Name == sg.name {
					decl = fd // the first, as the checker keeps it
					break
				}
			}
			if decl == nil {
				return nil
			}
			t = decl.Type
		case *policy.ArrayType:
			if !sg.index {
				return nil
			}
			t = tt.Elem
		case *policy.MapType:
			if !sg.index {
				return nil
			}
			t = tt.Elem
		default:
			return nil
		}
	}
	return decl
}
