package check

import (
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// This file types the record of `schema otlp { ... }`: an OTLP log record
// as a policy sees it (docs/otlp.md). record.OTLPView is the one table of
// the view's fixed keys; the record is a closed object of them, with the
// types their kinds give, and the block may refine the keys the table
// calls Refinable (the body and the attribute maps), written as nested
// objects: resource: { attributes: { ... } }.

// viewType is the type the view gives a key before any refinement.
func viewType(f *record.ViewField) *types.Type {
	switch f.Kind {
	case record.Absent:
		return types.OptionalOf(types.AnyType)
	case record.Map:
		if f.Fields == nil {
			return types.MapOf(types.AnyType)
		}
		return viewObject(f.Fields)
	case record.Array:
		return types.ArrayOf(types.AnyType)
	}
	if t := types.OfRecordKind(f.Kind); t != nil {
		return t
	}
	panic("check: the OTLP view has a key of kind " + f.Kind.String())
}

// viewObject is the closed object of the keys of one level of the view.
func viewObject(view []record.ViewField) *types.Type {
	fields := make([]types.Field, len(view))
	for i := range view {
		fields[i] = types.Field{Name: view[i].Name, Type: viewType(&view[i])}
	}
	return types.ObjectOf(false, fields...)
}

// viewIndex returns the index of the key called name in one level of
// the view, or -1.
func viewIndex(view []record.ViewField, name string) int {
	for i := range view {
		if view[i].Name == name {
			return i
		}
	}
	return -1
}

// viewKey returns the key of one level of the view called name, or nil.
func viewKey(view []record.ViewField, name string) *record.ViewField {
	if i := viewIndex(view, name); i >= 0 {
		return &view[i]
	}
	return nil
}

func viewNames(view []record.ViewField) []string {
	names := make([]string, len(view))
	for i := range view {
		names[i] = view[i].Name
	}
	return names
}

// refinable lists the paths of the keys a schema otlp block may refine,
// for hints: "body, attributes, resource.attributes and scope.attributes".
func refinable() string {
	var paths []string
	var walk func(view []record.ViewField, prefix string)
	walk = func(view []record.ViewField, prefix string) {
		for i := range view {
			switch f := &view[i]; {
			case f.Refinable():
				paths = append(paths, prefix+f.Name)
			case f.Fields != nil:
				walk(f.Fields, prefix+f.Name+".")
			}
		}
	}
	walk(record.OTLPView(), "")
	return andList(paths)
}

// andList writes a, b and c.
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// otlpRecord types the record of schema otlp, refined by the block obj
// (nil for `schema otlp` without one).
func (c *checker) otlpRecord(obj *policy.ObjectType) *types.Type {
	return c.refineView(record.OTLPView(), obj, "")
}

// refineView types one level of the view (the root, the resource or the
// scope), at names it for messages ("" for the root, "resource."), with
// the refinements obj declares (nil when none).
func (c *checker) refineView(view []record.ViewField, obj *policy.ObjectType, at string) *types.Type {
	fields := make([]types.Field, len(view))
	for i := range view {
		fields[i] = types.Field{Name: view[i].Name, Type: viewType(&view[i])}
		c.typos.add(view[i].Name)
	}
	if obj == nil {
		return types.ObjectOf(false, fields...)
	}
	what := "an OTLP record"
	if at != "" {
		what = strings.TrimSuffix(at, ".")
	}
	if obj.Open {
		c.report(diag.Errorf(span{obj.Ellipsis, obj.Ellipsis.Advance("...")}, CodeViewRefine, "%s has only the keys of the OTLP view: it cannot be opened with ...", what).
			WithHint("remove the ...; to allow other attributes, end an attributes object with ..."))
	}
	seen := map[string]*policy.FieldDecl{}
	for _, fd := range obj.Fields {
		if fd == nil || fd.Type == nil {
			continue
		}
		name := span{fd.NamePos, fd.NamePos.Advance(fieldName(fd))}
		if prev := seen[fd.Name]; prev != nil {
			c.report(diag.Errorf(name, CodeDupField, "field %s declared twice", fd.Name).
				WithLabel("first declared at line %d", prev.NamePos.Line).
				WithHint("remove one of the two lines"))
			continue
		}
		seen[fd.Name] = fd
		i := viewIndex(view, fd.Name)
		if i < 0 {
			d := diag.Errorf(name, CodeViewKey, "the OTLP view has no key %s%s", at, quoteName(fd.Name)).
				WithLabel("%s has the keys %s", what, andList(viewNames(view)))
			switch s := suggest.Closest(fd.Name, viewNames(view)); {
			case s != "":
				d = d.WithHint("did you mean %s%s?", at, s)
			case at == "":
				d = d.WithHint("the other values of an OTLP record are attributes: declare it in attributes: { %s: ... }", quoteName(fd.Name))
			default:
				d = d.WithHint("the other values of %s are attributes: declare it in %s: { attributes: { %s: ... } }", what, what, quoteName(fd.Name))
			}
			c.report(d)
			continue
		}
		vf := &view[i]
		key := at + vf.Name
		var t *types.Type
		switch {
		case vf.Fields != nil:
			ot, ok := fd.Type.(*policy.ObjectType)
			if !ok {
				c.report(diag.Errorf(fd.Type, CodeViewRefine, "%s is refined by an object of its keys", key).
					WithLabel("%s is %s in every OTLP record", key, viewType(vf)).
					WithHint("write %s: { attributes: { ... } }", vf.Name))
				continue
			}
			t = c.refineView(vf.Fields, ot, key+".")
		case !vf.Refinable():
			c.report(diag.Errorf(name, CodeViewRefine, "cannot refine %s: the OTLP view gives it type %s", key, viewType(vf)).
				WithLabel("%s is %s in every OTLP record", key, viewType(vf)).
				WithHint("a schema otlp block refines only %s", refinable()))
			continue
		case vf.Kind == record.Map:
			t = c.typeExpr(fd.Type)
			switch {
			case t.IsInvalid():
				continue
			case t.IsOptional():
				c.report(diag.Errorf(fd.Type, CodeViewRefine, "%s is never absent: an OTLP record without attributes has an empty map", key).
					WithLabel("%s is written %s", key, t).
					WithHint("remove the ?"))
				continue
			case t.Kind != types.Object && t.Kind != types.Map:
				c.report(diag.Errorf(fd.Type, CodeViewRefine, "%s is a map, and is refined by an object or a map type, not %s", key, t).
					WithLabel("%s is map<any> in the OTLP view", key).
					WithHint(`write %s: { "http.method": string?, ... } or %s: map<string>`, vf.Name, vf.Name))
				continue
			}
		default:
			t = c.typeExpr(fd.Type)
		}
		fields[i] = types.Field{Name: vf.Name, Type: t, Decl: fd.NamePos}
	}
	return types.ObjectOf(false, fields...)
}

// viewWrite checks, in an OTLP policy, a write of a value of type t (nil
// for a lift, which moves unknown keys) to the record path p: an OTLP
// record holds only the keys of its view, and a fixed key only the type
// the view gives it. val is the value set, or the path a rename moves
// (moved); nil for a lift. It reports whether the write fits.
func (c *checker) viewWrite(p path, target, val policy.Expr, moved bool, t *types.Type) bool {
	if !c.otlp || !p.root || t != nil && t.IsInvalid() {
		return true
	}
	view := record.OTLPView()
	var xe policy.Expr = p.base
	at := ""
	for i, s := range p.segs {
		if view == nil {
			return true // inside the body or an attributes map: any key
		}
		node := p.nodes[i]
		if s.kind != segField {
			c.report(diag.Errorf(target, CodeViewWrite, "cannot write %s: %s has only the keys of the OTLP view", exprText(target), describe(xe)).
				WithLabel("%s is a key known only at run time", exprText(node)).
				WithHint("name the key: %s, or write attributes as .attributes[k]", andList(viewNames(view))))
			return false
		}
		vf := viewKey(view, s.name)
		if vf == nil {
			d := diag.Errorf(target, CodeViewWrite, "cannot write %s: the OTLP view has no key .%s%s", exprText(target), at, quoteName(s.name)).
				WithLabel("%s has the keys %s", describe(xe), andList(viewNames(view)))
			if sug := suggest.Closest(s.name, viewNames(view)); sug != "" {
				d = d.WithHint("did you mean %s?", stepText(xe, sug))
			} else {
				d = d.WithHint("keep other values in the attributes: %s", stepText(xe, "attributes")+"."+quoteName(s.name))
			}
			c.report(d)
			return false
		}
		if i == len(p.segs)-1 {
			return c.viewValue(vf, at+vf.Name, target, val, moved, t)
		}
		view, xe, at = vf.Fields, node, at+vf.Name+"."
	}
	// The record itself (set . = v), or a lift into one of the view's
	// objects.
	if t == nil {
		c.liftErr(target, describe(xe))
		return false
	}
	return c.fitsView(view, strings.TrimSuffix(at, "."), target, val, t)
}

// liftErr reports a lift of target into into, an object of the view.
func (c *checker) liftErr(target policy.Expr, into string) {
	c.report(diag.Errorf(target, CodeViewWrite, "cannot lift %s: its keys would go into %s, which holds only the keys of the OTLP view", exprText(target), into).
		WithHint(`leave the keys where they are and read them there: %s["key"]`, exprText(target)))
}

// viewValue checks a value of type t written to the key vf (at path
// key). val is the value set, or the path a rename moves when moved; nil
// for a field of an object written whole.
func (c *checker) viewValue(vf *record.ViewField, key string, target, val policy.Expr, moved bool, t *types.Type) bool {
	if t == nil {
		// A lift into this key's object.
		if vf.Fields == nil {
			return true
		}
		c.liftErr(target, "."+key)
		return false
	}
	want := viewType(vf)
	switch {
	case vf.Kind == record.Absent:
		return true
	case vf.Kind == record.Map:
		if t.IsOptional() || t.Kind != types.Map && t.Kind != types.Object {
			break
		}
		if t.Kind == types.Object && vf.Fields != nil {
			return c.fitsView(vf.Fields, key, target, val, t)
		}
		return true // a map's keys are known only at run time
	case types.AssignableTo(t, want):
		return true
	case val != nil && !moved && t.IsOptional() && types.AssignableTo(types.NonOptional(t), want):
		c.report(c.optionalErr(val, t, "a "+want.String()+" for ."+key))
		return false
	case val != nil && !moved && types.NonOptional(t).Kind == types.Any:
		c.report(anyErr(val, t, "the "+want.String()+" ."+key, want))
		return false
	}
	d := diag.Errorf(target, CodeViewWrite, "cannot set .%s to %s: the OTLP view's .%s is %s", key, t, key, want)
	if val == nil {
		c.report(d.WithHint("an OTLP record's .%s always holds %s", key, want))
		return false
	}
	d = d.WithLabel("%s is %s", exprText(val), t)
	conv := convertTo(val, t, want)
	switch {
	case conv == "":
		d = d.WithHint("an OTLP record's .%s always holds %s", key, want)
	case moved:
		d = d.WithHint("rename moves the value as it is: write set .%s = %s, then remove %s", key, conv, exprText(val))
	default:
		d = d.WithHint("convert it: set .%s = %s", key, conv)
	}
	c.report(d)
	return false
}

// convertTo writes an expression that turns x, of type t, into a want,
// for hints; "" when there is none to suggest.
func convertTo(x policy.Expr, t, want *types.Type) string {
	s := exprText(policy.Unparen(x))
	base := types.NonOptional(t).Kind
	switch want.Kind {
	case types.Int:
		return "to_int(" + s + ") ?? 0"
	case types.String:
		return "to_string(" + s + ")"
	case types.Timestamp:
		if base == types.String {
			return "parse_time(" + s + `, "%Y-%m-%dT%H:%M:%S%z") ?? now()`
		}
		if base == types.Any {
			return "parse_time(as_string(" + s + `) ?? "", "%Y-%m-%dT%H:%M:%S%z") ?? now()`
		}
	case types.Map:
		if base == types.Any {
			return "as_map(" + s + ") ?? {}"
		}
	}
	return ""
}

// fitsView checks an object of type t written whole to a level of the
// view (the record, its resource or its scope; key names it, "" for the
// record): each of its fields must be a key of the view and fit it.
func (c *checker) fitsView(view []record.ViewField, key string, target, val policy.Expr, t *types.Type) bool {
	if t.Kind != types.Object {
		return true // a map: its keys are known only at run time
	}
	at := ""
	if key != "" {
		at = key + "."
	}
	ok := true
	t.EachField(func(f types.Field) {
		if !ok {
			return
		}
		vf := viewKey(view, f.Name)
		if vf == nil {
			d := diag.Errorf(target, CodeViewWrite, "cannot set %s: the OTLP view has no key .%s%s", exprText(target), at, quoteName(f.Name))
			if val != nil {
				d = d.WithLabel("%s is %s", exprText(val), t)
			}
			if sug := suggest.Closest(f.Name, viewNames(view)); sug != "" {
				d = d.WithHint("did you mean .%s%s?", at, sug)
			} else {
				d = d.WithHint("the keys are %s", andList(viewNames(view)))
			}
			c.report(d)
			ok = false
			return
		}
		ok = c.viewValue(vf, at+vf.Name, target, nil, false, f.Type)
	})
	return ok
}

// viewOf returns, in an OTLP policy, the level of the view that the path
// xe is (the record, .resource or .scope), or nil when it is none.
func (c *checker) viewOf(xe policy.Expr) []record.ViewField {
	if !c.otlp {
		return nil
	}
	var name string
	var x policy.Expr
	switch e := policy.Unparen(xe).(type) {
	case *policy.RootExpr:
		return record.OTLPView()
	case *policy.FieldExpr:
		name, x = e.Name, e.X
	case *policy.IndexExpr:
		s, ok := constIndex(e.Index)
		if !ok || s.kind != segField {
			return nil
		}
		name, x = s.name, e.X
	default:
		return nil
	}
	if vf := viewKey(c.viewOf(x), name); vf != nil {
		return vf.Fields
	}
	return nil
}
