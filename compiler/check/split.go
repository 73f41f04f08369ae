package check

import (
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// split checks split P: a record path of an array or an optional array,
// at the top level of the policy, once. From here on P holds one element:
// the array's element type, never absent (docs/language.md, "split").
//
// Top level only, because a split in a branch or a loop would make the
// records after it run different statements (or split again, per element),
// and once, so that the records a run makes are bounded by max_split.
func (c *checker) split(s *policy.SplitStmt, st *state) {
	switch {
	case c.scope.parent != nil:
		c.report(diag.Errorf(span{s.Split, s.Split.Advance("split")}, CodeSplitPlace, "split inside a block: split stands at the top level of the policy").
			WithHint("move the split out of the if or for; the statements after it run on each record, and may test the element with if"))
		return
	case c.split1 != nil:
		c.report(diag.Errorf(span{s.Split, s.Split.Advance("split")}, CodeSplitTwice, "second split in the policy").
			WithLabel("the policy splits at line %d", c.split1.Split.Line).
			WithHint("split once: one policy's split, then a second policy (a second filter) for the next"))
		return
	}
	c.split1 = s
	p, ok := c.editTarget(s.Target, "split", st)
	if !ok {
		return
	}
	t, _ := c.read(s.Target, st)
	if t.IsInvalid() {
		return
	}
	for i, sg := range p.segs {
		if sg.kind == segDyn {
			c.report(diag.Errorf(p.nodes[i], CodeSplitType, "split needs a path of constant steps, and %s is computed", exprText(p.nodes[i].(*policy.IndexExpr).Index)).
				WithHint("name the array's place in the record: split .events, split .attributes[\"events\"]"))
			return
		}
		if sg.kind == segInt {
			// An element of an array keeps no type of its own after
			// the split (the array's type says what every element is),
			// so P could not read as one element: refused rather than
			// typed as any.
			c.report(diag.Errorf(p.nodes[i], CodeSplitType, "split needs a path of keys, and %s is an array index", exprText(p.nodes[i].(*policy.IndexExpr).Index)).
				WithHint("copy the array to a key first: set .part = %s, then split .part", exprText(s.Target)))
			return
		}
	}
	base := types.NonOptional(t)
	if base.Kind != types.Array {
		d := diag.Errorf(s.Target, CodeSplitType, "split needs an array, and %s is %s", exprText(s.Target), t).
			WithLabel("%s is %s%s", exprText(s.Target), t, c.declaredAt(s.Target))
		switch base.Kind {
		case types.Any:
			d = d.WithHint("declare it in the schema as array<T>, or set it first: set %s = as_array(%s) ?? []", exprText(s.Target), exprText(s.Target))
		case types.String:
			d = d.WithHint("split a string into an array first: set %s = split(%s, \",\")", exprText(s.Target), exprText(s.Target))
		default:
			d = d.WithHint("split makes one record per element of an array")
		}
		c.report(d)
		return
	}
	elem := base.Elem
	if !c.writable(p, st) || !c.viewWrite(p, s.Target, s.Target, false, elem) {
		return
	}
	c.setAt[s.Split.Offset] = true
	c.write(st, p, elem, s.Split, false)
	c.info.Types[s.Target] = elem
}

// SplitPath is the record path of a split's P: the checker holds P to
// field steps (E0650), so that the backends read and write it as a
// record.Path. ok is false for anything else.
func SplitPath(e policy.Expr) (p record.Path, ok bool) {
	switch x := e.(type) {
	case *policy.ParenExpr:
		return SplitPath(x.X)
	case *policy.FieldExpr:
		if p, ok = SplitPath(x.X); ok {
			p = append(p, record.KeyStep(x.Name))
		}
		return p, ok
	case *policy.RootExpr:
		return record.Path{}, true
	}
	return nil, false
}
