package compiler

import (
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// step is one step of a path expression: a constant key or index, or a
// dynamic index expression.
type step struct {
	node policy.Expr // the FieldExpr or IndexExpr of this step
	st   record.Step
	dyn  policy.Expr // nil for a constant step
}

// flatten splits a path expression into its base (the innermost
// non-step expression) and its steps, outermost last.
func flatten(e policy.Expr) (policy.Expr, []step) {
	e = policy.Unparen(e)
	var steps []step
	for {
		switch x := e.(type) {
		case *policy.FieldExpr:
			steps = append(steps, step{node: x, st: record.KeyStep(x.Name)})
			e = policy.Unparen(x.X)
			continue
		case *policy.IndexExpr:
			s := step{node: x}
			switch c := constOf(x.Index); {
			case c.K == record.String:
				s.st = record.KeyStep(c.S)
			case c.K == record.Int:
				s.st = record.IndexStep(int(int64(c.N)))
			default:
				s.dyn = x.Index
			}
			steps = append(steps, s)
			e = policy.Unparen(x.X)
			continue
		}
		break
	}
	for i, j := 0, len(steps)-1; i < j; i, j = i+1, j-1 {
		steps[i], steps[j] = steps[j], steps[i]
	}
	return e, steps
}

// constOf returns the value of a literal string or int (possibly negated)
// expression, or a zero Reg.
func constOf(e policy.Expr) vm.Reg {
	lit, neg := policy.SignedLit(e)
	if lit == nil {
		return vm.Reg{}
	}
	switch {
	case lit.Kind == policy.LitString && !neg:
		return vm.String(lit.Str)
	case lit.Kind == policy.LitInt && neg:
		return vm.Int(-lit.Int)
	case lit.Kind == policy.LitInt:
		return vm.Int(lit.Int)
	}
	return vm.Reg{}
}

// maskOf is the set of kinds a value of type t may have at run time.
func maskOf(t *types.Type) vm.Mask {
	if t == nil {
		return vm.MaskAll
	}
	switch t.Kind {
	case types.Optional:
		return maskOf(t.Elem) | vm.MaskOf(record.Absent, record.Null)
	case types.Null:
		return vm.MaskOf(record.Absent, record.Null)
	case types.Float:
		// A float field accepts an int, read as a float (WIDEN).
		return vm.MaskOf(record.Float, record.Int)
	case types.Array:
		return vm.MaskOf(record.Array)
	case types.Map, types.Object:
		return vm.MaskOf(record.Map)
	}
	if k, ok := t.Kind.RecordKind(); ok {
		return vm.MaskOf(k)
	}
	return vm.MaskAll // any, never, invalid
}

// readMask is what a read of node must find: the schema's guard and the
// (possibly narrowed) type the rest of the policy relies on.
func (g *gen) readMask(node policy.Expr) vm.Mask {
	m := maskOf(g.info.Types[node])
	if gd, ok := g.info.Guards[node]; ok {
		m &= maskOf(gd)
	}
	return m
}

// widen converts an int read where a float is expected.
func (g *gen) widen(pos policy.Pos, r reg, t *types.Type) {
	if types.NonOptional(t).Kind == types.Float {
		g.emit(pos, vm.WIDEN, r, 0, 0, 0)
	}
}

// guard emits a GUARD of r unless what r may hold already fits m, and
// returns what r holds after it.
func (g *gen) guard(pos policy.Pos, r reg, have, m vm.Mask) vm.Mask {
	if have&^m == 0 {
		return have
	}
	g.emit(pos, vm.GUARD, r, uint16(m), 0, 0)
	return have & m
}

// read compiles a path expression that reads: the record, a local or any
// expression, followed by field and index steps. lastAny drops the check
// of the final value (exists(P) reads without one).
func (g *gen) read(e policy.Expr, lastAny bool) reg {
	base, steps := flatten(e)
	if len(steps) > 0 && g.info.Consts[steps[0].node] != nil {
		// net.codes[0]: the steps start from a module's constant.
		base, steps = steps[0].node, steps[1:]
	}
	pos := e.Pos()
	var cur reg
	have := vm.MaskAll
	fromRoot := false
	switch b := base.(type) {
	case *policy.RootExpr:
		fromRoot = true
	default:
		cur = g.expr(b)
		if len(steps) == 0 {
			return cur
		}
	}
	if fromRoot {
		g.readSteps(steps)
	}
	if fromRoot && len(steps) == 0 {
		r := g.newReg()
		g.emit(pos, vm.ROOT, r, 0, 0, 0)
		return r
	}
	// start: the index of the first step not yet loaded into cur.
	start := 0
	var prefix record.Path
	node := g.rootPath // the node of prefix
	if fromRoot {
		// The longest cached constant prefix.
		n := g.rootPath
		for i := 0; i < len(steps) && steps[i].dyn == nil; i++ {
			n = g.child(n, steps[i].st)
			if old := g.cacheGet(n); old != nil {
				// Entries are shared with saved caches: change a copy.
				c := &cached{r: old.r, mask: old.mask}
				g.cache = g.cache.Set(n, c)
				node = n
				cur, have, start = c.r, c.mask, i+1
				m := g.stepMask(steps, i, lastAny)
				c.mask = g.guard(pos, c.r, c.mask, m)
				if i == len(steps)-1 && !lastAny && types.NonOptional(g.typeOf(steps[i].node)).Kind == types.Float && c.mask.Has(record.Int) {
					g.emit(pos, vm.WIDEN, c.r, 0, 0, 0)
					c.mask &^= vm.MaskOf(record.Int)
				}
				have = c.mask
			}
		}
		prefix = prefix[:0]
		for i := 0; i < start; i++ {
			prefix = append(prefix, steps[i].st)
		}
	}
	constant := fromRoot // still on a constant path from the root
	rooted := fromRoot && start == 0
	from := start // the first step not yet followed into cur
	for i := start; i < len(steps); i++ {
		s := steps[i]
		m := g.stepMask(steps, i, lastAny)
		if s.dyn != nil {
			k := g.expr(s.dyn)
			if rooted {
				cur = g.newReg()
				g.emit(pos, vm.ROOT, cur, 0, 0, 0)
				rooted = false
			}
			r := g.newReg()
			g.emit(pos, vm.INDEX, r, cur, k, 0)
			cur, constant, from = r, false, i+1
			have = g.guard(pos, r, vm.MaskAll, m)
			if i == len(steps)-1 && !lastAny {
				g.widen(pos, r, g.typeOf(s.node))
			}
			continue
		}
		if constant {
			prefix = append(prefix, s.st)
			node = g.child(node, s.st)
		}
		// Load at the end of a run of constant steps: where a check is
		// due, before a dynamic step, or at the last step.
		if i < len(steps)-1 && m == vm.MaskAll && steps[i+1].dyn == nil {
			continue
		}
		r := g.newReg()
		parent := reg(0) // the container's register, when it was loaded
		hasParent := !rooted && from == i
		if rooted {
			g.emit(pos, vm.GET, r, g.path(vm.Path{Steps: append(record.Path(nil), prefix...)}), 0, 0)
			rooted = false
		} else {
			var rel record.Path
			for k := from; k <= i; k++ {
				rel = append(rel, steps[k].st)
			}
			g.emit(pos, vm.GETIN, r, cur, g.path(vm.Path{Steps: rel}), 0)
			parent = cur
		}
		cur, from = r, i+1
		if pg, ok := g.info.PresentGuards[s.node]; ok && hasParent && !(lastAny && i == len(steps)-1) && m&maskOf(pg) != m {
			// Required where its container is: absent there is a fault,
			// absent because the container is, not (the container's
			// absence is all that m lets through beyond pg).
			g.emit(pos, vm.GUARDP, r, uint16(m&maskOf(pg)), parent, 0)
			have = m
		} else {
			have = g.guard(pos, r, vm.MaskAll, m)
		}
		if !lastAny {
			g.widen(pos, r, g.typeOf(s.node))
			if types.NonOptional(g.typeOf(s.node)).Kind == types.Float {
				have &^= vm.MaskOf(record.Int)
			}
		}
		if constant {
			g.cachePut(node, r, have)
		}
	}
	_ = have
	return cur
}

// stepMask is the check of the value step i reads.
func (g *gen) stepMask(steps []step, i int, lastAny bool) vm.Mask {
	if lastAny && i == len(steps)-1 {
		return vm.MaskAll
	}
	return g.readMask(steps[i].node)
}

// target resolves the path of a set, remove, rename or lift: a record
// path whose dynamic steps are evaluated now. It returns the path index and
// the constant prefix that the write may change.
func (g *gen) target(e policy.Expr) (uint16, record.Path) {
	_, steps := flatten(e)
	p := vm.Path{}
	var prefix record.Path
	constant := true
	for i, s := range steps {
		if s.dyn != nil {
			r := g.expr(s.dyn)
			p.Steps = append(p.Steps, record.KeyStep(""))
			p.DynAt = append(p.DynAt, i)
			p.Dyn = append(p.Dyn, r)
			constant = false
			continue
		}
		p.Steps = append(p.Steps, s.st)
		if constant {
			prefix = append(prefix, s.st)
		}
	}
	return g.path(p), prefix
}
