package compiler

import (
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// typeOf is the checked type of e (invalid when unknown).
func (g *gen) typeOf(e policy.Expr) *types.Type {
	if t := g.info.Types[e]; t != nil {
		return t
	}
	return types.InvalidType
}

// kindOf is the kind of e's type, ignoring optionality only when want is
// set... it returns the plain kind of a non-optional type, or Invalid for
// optional and other types that need dynamic handling.
func (g *gen) plainKind(e policy.Expr) types.Kind {
	t := g.typeOf(e)
	if t.IsOptional() {
		return types.Invalid
	}
	return t.Kind
}

// expr compiles e and returns the register that holds its value. The
// register may be a constant, a local or a cached read: callers never
// write to it.
func (g *gen) expr(e policy.Expr) reg {
	if c, ok := g.fold(e); ok {
		return g.constant(c)
	}
	pos := e.Pos()
	switch e := e.(type) {
	case *policy.ParenExpr:
		return g.expr(e.X)
	case *policy.RootExpr, *policy.FieldExpr, *policy.IndexExpr:
		if k := g.info.Consts[e]; k != nil {
			return g.expr(k.Value) // a module's constant, net.marker
		}
		return g.read(e, false)
	case *policy.MetaExpr:
		r := g.newReg()
		if e.Name == "tag" {
			g.emit(pos, vm.TAG, r, 0, 0, 0)
			g.access.ReadsTag = true
		} else {
			g.emit(pos, vm.TIME, r, 0, 0, 0)
			g.access.ReadsTime = true
		}
		return r
	case *policy.Ident:
		if k := g.info.Consts[e]; k != nil {
			return g.expr(k.Value)
		}
		l := g.info.Uses[e]
		r, ok := g.locals[l]
		if l == nil || !ok {
			failf("%s: unknown local %s", e.Pos(), e.Name)
		}
		return r
	case *policy.UnaryExpr:
		x := g.expr(e.X)
		r := g.newReg()
		switch {
		case e.Op == policy.NOT:
			g.emit(pos, vm.NOT, r, x, 0, 0)
		case g.typeOf(e).Kind == types.Float:
			g.emit(pos, vm.NEG_FLT, r, g.toFloat(e.X, x), 0, 0)
		default:
			g.emit(pos, vm.NEG_INT, r, x, 0, 0)
		}
		return r
	case *policy.BinaryExpr:
		return g.binary(e)
	case *policy.CallExpr:
		return g.call(e)
	case *policy.ListLit:
		slot := g.pushBuilder()
		g.emit(pos, vm.ARRNEW, slot, uint16(len(e.Elems)), 0, 0)
		for _, x := range e.Elems {
			v := g.expr(x)
			g.emit(x.Pos(), vm.ARRPUT, slot, v, 0, 0)
		}
		g.builderDepth--
		r := g.newReg()
		g.emit(pos, vm.ARREND, r, slot, 0, 0)
		return r
	case *policy.MapLit:
		slot := g.pushBuilder()
		g.emit(pos, vm.MAPNEW, slot, uint16(len(e.Entries)), 0, 0)
		for _, ent := range e.Entries {
			v := g.expr(ent.Value)
			g.emit(ent.Key.Pos(), vm.MAPPUT, slot, g.constStr(ent.Key.Str), v, 0)
		}
		g.builderDepth--
		r := g.newReg()
		g.emit(pos, vm.MAPEND, r, slot, 0, 0)
		return r
	}
	failf("%s: cannot compile %T", pos, e)
	return 0
}

func (g *gen) pushBuilder() uint16 {
	g.builderDepth++
	g.maxBuilders = max(g.maxBuilders, g.builderDepth)
	return uint16(g.builderDepth - 1)
}

// toFloat returns x (the value of e) as a float: an int is converted.
func (g *gen) toFloat(e policy.Expr, x reg) reg {
	if types.NonOptional(g.typeOf(e)).Kind != types.Int {
		return x
	}
	if c, ok := g.constValue(x); ok && c.K == record.Int {
		return g.constFloat(float64(int64(c.N)))
	}
	r := g.newReg()
	g.emit(e.Pos(), vm.I2F, r, x, 0, 0)
	return r
}

var arithOps = map[policy.Token][2]vm.Op{
	policy.ADD: {vm.ADD_INT, vm.ADD_FLT},
	policy.SUB: {vm.SUB_INT, vm.SUB_FLT},
	policy.MUL: {vm.MUL_INT, vm.MUL_FLT},
	policy.QUO: {vm.DIV_INT, vm.DIV_FLT},
	policy.REM: {vm.MOD_INT, vm.MOD_FLT},
}

func (g *gen) binary(e *policy.BinaryExpr) reg {
	pos := e.OpPos
	switch e.Op {
	case policy.LAND, policy.LOR:
		r := g.newReg()
		g.emit(pos, vm.MOVE, r, g.expr(e.X), 0, 0)
		jop := vm.JF
		if e.Op == policy.LOR {
			jop = vm.JT
		}
		j := g.emit(pos, jop, 0, r, 0, 0)
		saved, mark := g.saveCache(), len(g.writeLog)
		g.emit(pos, vm.MOVE, r, g.expr(e.Y), 0, 0)
		g.restoreCache(saved, mark)
		g.patch(j)
		return r
	case policy.COALESCE:
		return g.coalesce(e, []policy.Expr{e.X, e.Y})
	case policy.IN:
		x := g.expr(e.X)
		set := g.info.InSets[e]
		var vals []vm.Reg
		if set != nil {
			for _, v := range set.Values {
				vals = append(vals, constReg(v))
			}
		}
		g.sets = append(g.sets, vm.NewSet(vals))
		r := g.newReg()
		g.emit(pos, vm.IN, r, x, uint16(len(g.sets)-1), 0)
		return r
	}
	if e.Op == policy.EQL || e.Op == policy.NEQ {
		// x == null and x != null test absence or null: no comparison.
		for _, side := range [2][2]policy.Expr{{e.X, e.Y}, {e.Y, e.X}} {
			if c, ok := g.fold(side[1]); ok && c.K == record.Null {
				r := g.newReg()
				g.emit(pos, vm.ISNULL, r, g.expr(side[0]), 0, 0)
				if e.Op == policy.NEQ {
					g.emit(pos, vm.NOT, r, r, 0, 0)
				}
				return r
			}
		}
	}
	x, y := g.expr(e.X), g.expr(e.Y)
	xt, yt := g.plainKind(e.X), g.plainKind(e.Y)
	r := g.newReg()
	switch e.Op {
	case policy.ADD, policy.SUB, policy.MUL, policy.QUO, policy.REM:
		switch {
		case xt == types.String:
			g.emit(pos, vm.CONCAT, r, x, y, 0)
		case g.typeOf(e).Kind == types.Array:
			g.emit(pos, vm.ACAT, r, x, y, 0)
		case g.typeOf(e).Kind == types.Float:
			g.emit(pos, arithOps[e.Op][1], r, g.toFloat(e.X, x), g.toFloat(e.Y, y), 0)
		default:
			g.emit(pos, arithOps[e.Op][0], r, x, y, 0)
		}
		return r
	case policy.EQL, policy.NEQ:
		op := vm.EQ
		switch {
		case xt == types.Int && yt == types.Int, xt == types.Timestamp && yt == types.Timestamp:
			op = vm.EQ_INT
		case isNum(xt) && isNum(yt):
			op = vm.EQ_FLT
			x, y = g.toFloat(e.X, x), g.toFloat(e.Y, y)
		case xt == types.String && yt == types.String:
			op = vm.EQ_STR
		case xt == types.Bool && yt == types.Bool:
			op = vm.EQ_BOOL
		}
		g.emit(pos, op, r, x, y, 0)
		if e.Op == policy.NEQ {
			g.emit(pos, vm.NOT, r, r, 0, 0)
		}
		return r
	case policy.LSS, policy.LEQ, policy.GTR, policy.GEQ:
		if e.Op == policy.GTR || e.Op == policy.GEQ {
			x, y = y, x
		}
		strict := e.Op == policy.LSS || e.Op == policy.GTR
		var op vm.Op
		switch {
		case xt == types.Int && yt == types.Int, xt == types.Timestamp:
			op = pick(strict, vm.LT_INT, vm.LE_INT)
		case xt == types.String:
			op = pick(strict, vm.LT_STR, vm.LE_STR)
		default:
			op = pick(strict, vm.LT_FLT, vm.LE_FLT)
			if e.Op == policy.GTR || e.Op == policy.GEQ {
				x, y = g.toFloat(e.Y, x), g.toFloat(e.X, y)
			} else {
				x, y = g.toFloat(e.X, x), g.toFloat(e.Y, y)
			}
		}
		g.emit(pos, op, r, x, y, 0)
		return r
	}
	failf("%s: cannot compile operator %s", pos, e.Op)
	return 0
}

func pick(strict bool, lt, le vm.Op) vm.Op {
	if strict {
		return lt
	}
	return le
}

func isNum(k types.Kind) bool { return k == types.Int || k == types.Float }

// constReg converts an InSet value (nil, bool, int64, float64, string).
func constReg(v any) vm.Reg {
	switch v := v.(type) {
	case bool:
		return vm.Bool(v)
	case int64:
		return vm.Int(v)
	case float64:
		return vm.Float(v)
	case string:
		return vm.String(v)
	}
	return vm.Null()
}

// coalesce compiles a ?? b ?? ... and coalesce(a, b, ...): the first
// operand that is neither absent nor null, else the last.
func (g *gen) coalesce(e policy.Expr, operands []policy.Expr) reg {
	r := g.newReg()
	var jumps []int
	saved, mark := g.saveCache(), len(g.writeLog)
	wantFloat := types.NonOptional(g.typeOf(e)).Kind == types.Float
	for i, x := range operands {
		v := g.expr(x)
		if wantFloat {
			v = g.toFloat(x, v)
		}
		g.emit(x.Pos(), vm.MOVE, r, v, 0, 0)
		if i < len(operands)-1 {
			jumps = append(jumps, g.emit(x.Pos(), vm.JNN, 0, r, 0, 0))
		}
		if i == 0 {
			// Reads of the first operand always happen; later ones may not.
			saved, mark = g.saveCache(), len(g.writeLog)
		}
	}
	g.restoreCache(saved, mark)
	for _, j := range jumps {
		g.patch(j)
	}
	return r
}

func (g *gen) call(e *policy.CallExpr) reg {
	if fn := g.info.Funcs[e]; fn != nil {
		return g.inline(e, fn)
	}
	f := g.info.Calls[e]
	if f == nil {
		failf("%s: unresolved call of %s", e.Pos(), e.Fun.Name)
	}
	pos := e.Pos()
	switch f.ID {
	case builtin.Exists:
		x := g.read(e.Args[0], true)
		r := g.newReg()
		g.emit(pos, vm.EXISTS, r, x, 0, 0)
		return r
	case builtin.Coalesce:
		return g.coalesce(e, e.Args)
	}
	var re uint16
	var args []reg
	all := g.info.Args(e)
	for i, a := range all {
		if i == f.RegexArg {
			rx := g.patternOf(a)
			if rx == nil {
				failf("%s: regex of %s not compiled", a.Pos(), f.Name)
			}
			re = g.regex(rx)
			continue
		}
		args = append(args, g.expr(a))
	}
	if f.Variadic() {
		re = uint16(len(args))
	} else if len(args) != f.ValueArgs() {
		failf("%s: %s takes %d arguments", pos, f.Name, f.ValueArgs())
	}
	// Arguments go in consecutive registers.
	first := g.newRegs(max(len(args), 1))
	for i, a := range args {
		g.emit(pos, vm.MOVE, first+uint16(i), a, 0, 0)
	}
	r := g.newReg()
	g.emit(pos, vm.CALL, r, first, re, uint8(f.ID))
	return r
}
