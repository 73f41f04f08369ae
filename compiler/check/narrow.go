package check

import (
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
)

// narrow returns the state in which cond is known to be true (positive) or
// false. cond must have been checked in st already: narrowing reads the
// types recorded for its operands. st is not changed.
func (c *checker) narrow(cond policy.Expr, st *state, positive bool) *state {
	switch e := cond.(type) {
	case *policy.ParenExpr:
		return c.narrow(e.X, st, positive)
	case *policy.UnaryExpr:
		if e.Op == policy.NOT {
			return c.narrow(e.X, st, !positive)
		}
	case *policy.BinaryExpr:
		switch e.Op {
		case policy.LAND, policy.LOR:
			if positive != (e.Op == policy.LAND) {
				break
			}
			// A chain a && b && c is narrowed once per operand: the
			// checking of each && narrowed the chain on its left already.
			k := narrowKey{e, st, positive}
			if ns, ok := c.narrowed[k]; ok {
				return ns
			}
			ns := c.narrow(e.Y, c.narrow(e.X, st, positive), positive)
			c.narrowed[k] = ns
			return ns
		case policy.EQL, policy.NEQ:
			equal := (e.Op == policy.EQL) == positive
			for _, side := range [][2]policy.Expr{{e.X, e.Y}, {e.Y, e.X}} {
				v, lt, ok := constValue(side[1])
				switch {
				case !ok:
				case lt.Kind == types.Null && !equal:
					return c.nonNull(side[0], st)
				case lt.Kind != types.Null && equal && v != nil:
					return c.narrowTo(side[0], lt, st)
				}
			}
		case policy.IN:
			if set := c.info.InSets[e]; positive && set != nil && len(set.Values) > 0 {
				for _, v := range set.Values {
					if v == nil {
						return st
					}
				}
				return c.narrowTo(e.X, set.Elem, st)
			}
		}
	case *policy.CallExpr:
		f := c.info.Calls[e]
		if f == nil || len(e.Args) != 1 {
			return st
		}
		switch {
		case f.ID == builtin.Exists && positive:
			return c.present(e.Args[0], st)
		case f.ID == builtin.IsNull && !positive:
			return c.nonNull(e.Args[0], st)
		case signatures[f.ID].narrows != nil && f.ID != builtin.IsNull && positive:
			return c.narrowTo(e.Args[0], signatures[f.ID].narrows, st)
		}
	}
	return st
}

// narrowKey is a narrowing of a && or || chain, remembered while one
// statement is checked (its state does not change meanwhile).
type narrowKey struct {
	cond     policy.Expr
	st       *state
	positive bool
}

// nonNull returns st with the path e (and every path above it) known to be
// present.
func (c *checker) nonNull(e policy.Expr, st *state) *state {
	return c.known(e, st, false)
}

// present returns st with the path e known to exist: every path above it
// holds a map, an object or an array, so is not null, but e itself may be a
// present null and stays optional (an any? is an any, which holds null).
// Only e != null and the is_ tests prove a plain value there.
func (c *checker) present(e policy.Expr, st *state) *state {
	return c.known(e, st, true)
}

// known is nonNull, or with mayBeNull present: the two differ only in
// what they prove of e itself.
func (c *checker) known(e policy.Expr, st *state, mayBeNull bool) *state {
	p, ok := c.splitPath(policy.Unparen(e))
	if !ok || !p.root && p.local == nil {
		return st
	}
	ns := st.clone()
	for i := 0; i <= len(p.segs); i++ {
		n := p.node(i)
		if n == nil {
			break
		}
		node := p.base
		if i > 0 {
			node = p.nodes[i-1]
		}
		t := c.info.Types[node]
		if t == nil || !t.IsOptional() || t.Kind == types.Null {
			continue
		}
		if mayBeNull && i == len(p.segs) && types.NonOptional(t).Kind != types.Any {
			ns.setPresent(n)
		} else {
			ns.setFact(n, types.NonOptional(t))
		}
	}
	return ns
}

// narrowTo returns st with the path e known to hold a value of type to (an
// is_ test, an equality with a literal, membership in a list).
func (c *checker) narrowTo(e policy.Expr, to *types.Type, st *state) *state {
	p, ok := c.splitPath(policy.Unparen(e))
	if !ok || !p.root && p.local == nil {
		return st
	}
	t := c.info.Types[p.lastNode()]
	if t == nil || t.IsInvalid() {
		return st
	}
	base := types.NonOptional(t)
	var nt *types.Type
	switch {
	case base.Kind == types.Any:
		nt = to
	case base.Kind == to.Kind || base.IsNumeric() && to.IsNumeric():
		nt = base
	default:
		return st
	}
	ns := c.nonNull(e, st)
	if ns == st {
		ns = st.clone()
	}
	ns.setFact(p.node(len(p.segs)), nt)
	return ns
}

func (p path) lastNode() policy.Expr {
	if len(p.nodes) == 0 {
		return p.base
	}
	return p.nodes[len(p.nodes)-1]
}
