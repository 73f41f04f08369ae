package compiler

import (
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/pmap"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// stmts compiles a statement list and reports whether it always ends the
// run (an unconditional drop or stop): the code after it is dead and is
// not emitted.
func (g *gen) stmts(list []policy.Stmt) bool {
	for _, s := range list {
		if g.stmt(s) {
			return true
		}
	}
	return false
}

func (g *gen) stmt(s policy.Stmt) bool {
	switch s := s.(type) {
	case *policy.SetStmt:
		g.set(s)
	case *policy.RemoveStmt:
		for _, t := range s.Targets {
			g.writePath(t)
			p, prefix := g.target(t)
			g.emit(s.Pos(), vm.REMOVE, p, 0, 0, 0)
			g.invalidate(prefix)
		}
	case *policy.RenameStmt:
		g.readPath(s.From)
		g.writePath(s.From)
		g.writePath(s.To)
		from, fp := g.target(s.From)
		to, tp := g.target(s.To)
		g.emit(s.Pos(), vm.RENAME, from, to, 0, 0)
		g.invalidate(fp)
		g.invalidate(tp)
	case *policy.LiftStmt:
		g.readPath(s.Target)
		g.liftPath(s.Target)
		p, prefix := g.target(s.Target)
		pre := ""
		if s.Prefix != nil {
			pre = s.Prefix.Str
		}
		g.emit(s.Pos(), vm.LIFT, p, g.constStr(pre), 0, 0)
		if len(prefix) > 0 {
			prefix = prefix[:len(prefix)-1] // the parent gains keys
		}
		g.invalidate(prefix)
	case *policy.SplitStmt:
		g.split(s)
	case *policy.DropStmt:
		return g.end(s.Pos(), s.Cond, vm.DROP)
	case *policy.StopStmt:
		return g.end(s.Pos(), s.Cond, vm.KEEP)
	case *policy.IfStmt:
		return g.ifStmt(s)
	case *policy.Block:
		return g.stmts(s.Stmts)
	case *policy.LetStmt:
		g.let(s)
	case *policy.ForStmt:
		g.forStmt(s)
	case *policy.StateStmt:
		g.stateStmt(s)
	case *policy.ReturnStmt:
		return g.ret(s)
	}
	return false
}

func (g *gen) set(s *policy.SetStmt) {
	v := g.expr(s.Value)
	if types.NonOptional(g.typeOf(s.Target)).Kind == types.Float {
		v = g.toFloat(s.Value, v)
	}
	pos := s.Pos()
	switch t := policy.Unparen(s.Target).(type) {
	case *policy.MetaExpr:
		if t.Name == "tag" {
			g.emit(pos, vm.SETTAG, v, 0, 0, 0)
			g.access.SetsTag = true
		} else {
			g.emit(pos, vm.SETTIME, v, 0, 0, 0)
			g.access.SetsTime = true
		}
		return
	case *policy.RootExpr:
		g.writePath(t)
		g.emit(pos, vm.SETROOT, v, 0, 0, 0)
		g.invalidate(record.Path{})
		return
	}
	g.writePath(s.Target)
	if s.Op == policy.QASSIGN {
		g.readPath(s.Target) // only when absent or null
	}
	p, prefix := g.target(s.Target)
	op := vm.SET
	if s.Op == policy.QASSIGN {
		op = vm.SETQ
	}
	g.emit(pos, op, p, v, 0, 0)
	g.invalidate(prefix)
}

// end compiles drop and stop, conditional or not.
func (g *gen) end(pos policy.Pos, cond policy.Expr, op vm.Op) bool {
	if cond == nil {
		g.emit(pos, op, 0, 0, 0, 0)
		return true
	}
	if c, ok := g.fold(cond); ok && c.K == record.Bool {
		if c.N != 0 {
			g.emit(pos, op, 0, 0, 0, 0)
			return true
		}
		return false
	}
	for _, j := range g.jumpIf(cond, false) {
		defer g.patch(j)
	}
	g.emit(pos, op, 0, 0, 0, 0)
	return false
}

func (g *gen) ifStmt(s *policy.IfStmt) bool {
	pos := s.Pos()
	if c, ok := g.fold(s.Cond); ok && c.K == record.Bool {
		// A constant condition: only one branch is live.
		if c.N != 0 {
			return g.block(s.Body)
		}
		if s.Else != nil {
			return g.stmt(s.Else)
		}
		return false
	}
	jelse := g.jumpIf(s.Cond, false)
	saved, mark := g.saveCache(), len(g.writeLog)
	thenEnds := g.block(s.Body)
	if s.Else == nil {
		for _, j := range jelse {
			g.patch(j)
		}
		g.restoreCache(saved, mark)
		return false
	}
	jend := -1
	if !thenEnds {
		jend = g.emit(pos, vm.JMP, 0, 0, 0, 0)
	}
	for _, j := range jelse {
		g.patch(j)
	}
	g.cache = saved
	elseEnds := g.stmt(s.Else)
	if jend >= 0 {
		g.patch(jend)
	}
	g.restoreCache(saved, mark)
	return thenEnds && elseEnds
}

func (g *gen) block(b *policy.Block) bool {
	if b == nil {
		return false
	}
	return g.stmts(b.Stmts)
}

// mayBeContainer reports whether a value of type t can be a map or array,
// which a local must copy (the record may be edited in place later).
func mayBeContainer(t *types.Type) bool {
	switch types.NonOptional(t).Kind {
	case types.Array, types.Map, types.Object, types.Any, types.Invalid:
		return true
	}
	return false
}

func (g *gen) let(s *policy.LetStmt) {
	v := g.expr(s.Value)
	if s.Name == nil {
		return
	}
	l := g.info.Defs[s.Name]
	if l == nil {
		return // let _ = E
	}
	if !mayBeContainer(g.typeOf(s.Value)) {
		g.locals[l] = v
		return
	}
	r := g.newReg()
	g.emit(s.Pos(), vm.MOVE, r, v, 0, 0)
	g.emit(s.Pos(), vm.SNAP, r, 0, 0, 0)
	g.locals[l] = r
}

func (g *gen) forStmt(s *policy.ForStmt) {
	pos := s.Pos()
	x := g.expr(s.X)
	g.iterDepth++
	g.maxIters = max(g.maxIters, g.iterDepth)
	slot := uint16(g.iterDepth - 1)
	g.emit(pos, vm.ITER, slot, x, 0, 0)
	kv := g.newRegs(2)
	var vt *types.Type
	if s.Key != nil {
		if l := g.info.Defs[s.Key]; l != nil {
			g.locals[l] = kv
		}
	}
	if s.Value != nil {
		if l := g.info.Defs[s.Value]; l != nil {
			g.locals[l] = kv + 1
			vt = l.Type
		}
	}
	// The body runs again after its own writes: it starts with no cached
	// reads, and what it writes is forgotten after the loop.
	saved, mark := g.saveCache(), len(g.writeLog)
	g.cache = pmap.Map[*pathNode, *cached]{}
	loop := g.here()
	next := g.emit(pos, vm.NEXT, slot, kv, 0, 0)
	if vt != nil {
		// Elements are checked where they are read: here.
		g.guard(pos, kv+1, vm.MaskAll, maskOf(vt))
		g.widen(pos, kv+1, vt)
	}
	g.block(s.Body)
	g.emit(pos, vm.JMP, loop, 0, 0, 0)
	g.patch(next)
	g.iterDepth--
	g.restoreCache(saved, mark)
}

// jumpIf compiles the bool expression e as control flow: the code jumps
// when e has the value want and falls through otherwise. It returns the
// jumps, to be patched to their target. && and || need no bool register.
func (g *gen) jumpIf(e policy.Expr, want bool) []int {
	if c, ok := g.fold(e); ok && c.K == record.Bool {
		if (c.N != 0) == want {
			return []int{g.emit(e.Pos(), vm.JMP, 0, 0, 0, 0)}
		}
		return nil
	}
	switch x := policy.Unparen(e).(type) {
	case *policy.UnaryExpr:
		if x.Op == policy.NOT {
			return g.jumpIf(x.X, !want)
		}
	case *policy.BinaryExpr:
		if x.Op == policy.LAND || x.Op == policy.LOR {
			// For &&, a false left side decides; for ||, a true one.
			decides := x.Op == policy.LOR
			left := g.jumpIf(x.X, decides)
			// The right side runs only sometimes: its reads are not
			// cached past it.
			saved, mark := g.saveCache(), len(g.writeLog)
			var out []int
			if want == decides {
				out = append(left, g.jumpIf(x.Y, want)...)
			} else {
				out = g.jumpIf(x.Y, want)
				for _, j := range left {
					g.patch(j)
				}
			}
			g.restoreCache(saved, mark)
			return out
		}
	}
	r := g.expr(e)
	op := vm.JF
	if want {
		op = vm.JT
	}
	return []int{g.emit(e.Pos(), op, 0, r, 0, 0)}
}
