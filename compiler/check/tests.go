package check

import (
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/suggest"
	"github.com/policyrun/policyrun/policy"
)

// tests checks the test blocks: constant JSON objects for input and
// expect, unique names, inputs that fit the schema, and param lines of
// declared parameters with constant values.
func (c *checker) tests(ts []*policy.Test) {
	names := map[string]*policy.Test{}
	for _, t := range ts {
		if t == nil {
			continue
		}
		if prev := names[t.Name]; prev != nil {
			c.report(diag.Errorf(span{t.NamePos, t.NamePos.Advance(policy.Quote(t.Name))}, CodeTestDup, "duplicate test name %s", policy.Quote(t.Name)).
				WithLabel("first used at line %d", prev.NamePos.Line).
				WithHint("give each test its own name: failures are reported by name"))
		} else {
			names[t.Name] = t
		}
		c.asserts(t)
		inputs := []policy.Expr{t.Input}
		if len(t.Inputs) > 0 {
			inputs = inputs[:0]
			for _, in := range t.Inputs {
				inputs = append(inputs, in.Value)
				c.testClocks(in.Clocks)
			}
		}
		for _, in := range inputs {
			if in == nil {
				continue
			}
			if bad := nonConstObject(in); bad != nil {
				c.report(constErr(bad, in, CodeTestInput, "test input"))
			} else if t.Expect != policy.ExpectFault && !(t.Expect == policy.ExpectDropped && c.file.OnFault == policy.OnFaultDrop) {
				c.fitsSchema(in.(*policy.MapLit), c.info.Root, path{root: true})
			}
		}
		for _, prm := range t.Params {
			if k := c.consts[prm.Name.Name]; k == nil || k.Param == nil {
				d := diag.Errorf(prm.Name, CodeParamUnknown, "policy %s has no parameter %s", c.file.Name, prm.Name.Name).
					WithHint("a test gives values to the parameters the policy declares with param")
				if s := suggest.Closest(prm.Name.Name, c.paramNames()); s != "" {
					d = d.WithHint("did you mean %s?", s)
				}
				c.report(d)
			}
			if bad := nonConst(prm.Value); bad != nil {
				c.report(diag.Errorf(bad, CodeTestInput, "the value of param %s must be constant JSON", prm.Name.Name).
					WithLabel("%s is not a JSON value", exprText(bad)).
					WithHint("tests give values literally: strings, numbers, true, false, null, arrays and objects"))
			}
		}
		switch {
		case t.Want == nil:
		case t.Expect == policy.ExpectRecord:
			if bad := nonConstObject(t.Want); bad != nil {
				c.report(constErr(bad, t.Want, CodeTestExpect, "expected record"))
			}
		case t.Expect == policy.ExpectRecords:
			for _, w := range t.Want.(*policy.ListLit).Elems {
				if bad := nonConstObject(w); bad != nil {
					c.report(constErr(bad, w, CodeTestExpect, "expected record"))
				}
			}
		}
	}
}

func constErr(bad, whole policy.Expr, code, what string) diag.Diagnostic {
	if bad == whole {
		return diag.Errorf(bad, code, "%s must be a JSON object", what).
			WithLabel("%s is not an object", exprText(bad)).
			WithHint(`write the record as {"key": value, ...}`)
	}
	return diag.Errorf(bad, code, "%s must be constant JSON", what).
		WithLabel("%s is not a JSON value", exprText(bad)).
		WithHint("tests give records literally: strings, numbers, true, false, null, arrays and objects")
}

// nonConstObject returns the first part of e that keeps it from being a
// constant JSON object (e itself when it is not an object), or nil.
func nonConstObject(e policy.Expr) policy.Expr {
	if _, ok := e.(*policy.MapLit); !ok {
		return e
	}
	return nonConst(e)
}

func nonConst(e policy.Expr) policy.Expr {
	switch e := e.(type) {
	case *policy.BasicLit:
		return nil
	case *policy.UnaryExpr:
		if lit, ok := e.X.(*policy.BasicLit); ok && e.Op == policy.SUB && (lit.Kind == policy.LitInt || lit.Kind == policy.LitFloat) {
			return nil
		}
	case *policy.ListLit:
		for _, x := range e.Elems {
			if b := nonConst(x); b != nil {
				return b
			}
		}
		return nil
	case *policy.MapLit:
		for _, ent := range e.Entries {
			if ent == nil {
				continue
			}
			if b := nonConst(ent.Value); b != nil {
				return b
			}
		}
		return nil
	case *policy.BadExpr:
		return nil // the parser reported it
	}
	return e
}

// fitsSchema warns about the first place a test input breaks the declared
// schema: running it will fault, which the test should then expect.
func (c *checker) fitsSchema(lit *policy.MapLit, t *types.Type, at path) bool {
	t = types.NonOptional(t)
	if t.Kind != types.Object {
		return true
	}
	for _, ent := range lit.Entries {
		if ent == nil || ent.Key == nil {
			continue
		}
		fp := at
		fp.segs = append(append([]seg(nil), at.segs...), seg{kind: segField, name: ent.Key.Str})
		name := pathText(fp)
		f, found := t.Field(ent.Key.Str)
		if !found {
			continue // the schema is checked only where the policy reads
		}
		if sub, ok := ent.Value.(*policy.MapLit); ok && types.NonOptional(f.Type).Kind == types.Object {
			if !c.fitsSchema(sub, f.Type, fp) {
				return false
			}
			continue
		}
		vt := literalType(ent.Value)
		if !c.isRead(fp) {
			continue // the policy never reads it, so it cannot fault there
		}
		if c.otlp && !f.Decl.IsValid() && types.NonOptional(f.Type).Kind == types.Timestamp && (vt.Kind == types.String || vt.Kind == types.Int) {
			// A timestamp of the view (.observed_time) is written in a
			// test input as the view is written in JSON: an RFC 3339
			// string or unix nanoseconds (record.DecodeOTLPView).
			continue
		}
		if !types.AssignableTo(vt, f.Type) && !(vt.Kind == types.Int && types.NonOptional(f.Type).Kind == types.Float) {
			d := diag.Warnf(ent.Value, CodeTestInputType, "test input %s is %s, but the schema declares %s", name, vt, f.Type)
			if f.Decl.IsValid() {
				d = d.WithLabel("declared at line %d", f.Decl.Line)
			} else {
				d = d.WithLabel("the OTLP view gives %s type %s", name, f.Type)
			}
			c.report(d.WithHint("fix the input, or write expect fault if the test is about a record that breaks the schema"))
			return false
		}
	}
	return true
}

// literalType types a constant JSON literal without recording anything.
func literalType(e policy.Expr) *types.Type {
	switch e := e.(type) {
	case *policy.BasicLit:
		return litType(e)
	case *policy.UnaryExpr:
		return literalType(e.X)
	case *policy.ListLit:
		var acc *types.Type = types.NeverType
		for _, x := range e.Elems {
			acc = types.Merge(acc, literalType(x))
		}
		return types.ArrayOf(acc)
	case *policy.MapLit:
		obj := types.ObjectOf(false)
		for _, ent := range e.Entries {
			if ent != nil && ent.Key != nil {
				if _, found := obj.Field(ent.Key.Str); !found {
					obj = obj.WithField(types.Field{Name: ent.Key.Str, Type: literalType(ent.Value)})
				}
			}
		}
		return obj
	}
	return types.InvalidType
}

// isRead reports whether the policy reads the record path p or a path under
// it.
func (c *checker) isRead(p path) bool {
	n := c.withNodes(p).node(len(p.segs))
	return n != nil && n.read
}

func pathText(p path) string {
	var b []byte
	for _, s := range p.segs {
		b = append(b, '.')
		b = append(b, quoteName(s.name)...)
	}
	return string(b)
}
