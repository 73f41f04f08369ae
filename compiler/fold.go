package compiler

import (
	"math"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// fold evaluates e at compile time when it is made of literals only:
// arithmetic, concatenation, comparisons and logic. Operations that would
// fault (division by zero, non-finite results, long strings) are left to
// run time, where the fault belongs.
func (g *gen) fold(e policy.Expr) (vm.Reg, bool) {
	switch e := e.(type) {
	case *policy.ParenExpr:
		return g.fold(e.X)
	case *policy.BasicLit:
		switch e.Kind {
		case policy.LitNull:
			return vm.Null(), true
		case policy.LitBool:
			return vm.Bool(e.Bool), true
		case policy.LitInt:
			if g.typeOf(e).Kind == types.Float {
				return vm.Float(float64(e.Int)), true
			}
			return vm.Int(e.Int), true
		case policy.LitFloat:
			return vm.Float(e.Float), true
		case policy.LitString:
			return vm.String(e.Str), true
		}
	case *policy.UnaryExpr:
		x, ok := g.fold(e.X)
		if !ok {
			return x, false
		}
		switch {
		case e.Op == policy.NOT && x.K == record.Bool:
			return vm.Bool(x.N == 0), true
		case e.Op == policy.SUB && x.K == record.Int:
			if g.typeOf(e).Kind == types.Float {
				return vm.Float(-float64(int64(x.N))), true
			}
			return vm.Int(-int64(x.N)), true
		case e.Op == policy.SUB && x.K == record.Float:
			return vm.Float(-math.Float64frombits(x.N)), true
		}
	case *policy.BinaryExpr:
		return g.foldBinary(e)
	case *policy.FieldExpr:
		if k := g.info.Consts[e]; k != nil {
			return g.fold(k.Value) // a module's constant, net.marker
		}
	case *policy.Ident:
		// A constant, or a parameter or local bound to a constant (an
		// argument of an inlined call): locals are immutable.
		if k := g.info.Consts[e]; k != nil {
			return g.fold(k.Value)
		}
		if r, ok := g.locals[g.info.Uses[e]]; ok {
			return g.constValue(r)
		}
	}
	return vm.Reg{}, false
}

func (g *gen) foldBinary(e *policy.BinaryExpr) (vm.Reg, bool) {
	x, ok := g.fold(e.X)
	if !ok {
		return x, false
	}
	switch e.Op {
	case policy.LAND:
		if x.K == record.Bool && x.N == 0 {
			return x, true
		}
	case policy.LOR:
		if x.K == record.Bool && x.N != 0 {
			return x, true
		}
	case policy.COALESCE:
		if x.K > record.Null {
			return x, true
		}
	}
	y, ok := g.fold(e.Y)
	if !ok {
		return y, false
	}
	if e.Op == policy.COALESCE {
		return y, true
	}
	fx, fy := math.Float64frombits(x.N), math.Float64frombits(y.N)
	ints := x.K == record.Int && y.K == record.Int
	nums := (x.K == record.Int || x.K == record.Float) && (y.K == record.Int || y.K == record.Float)
	if nums && !ints {
		if x.K == record.Int {
			fx = float64(int64(x.N))
		}
		if y.K == record.Int {
			fy = float64(int64(y.N))
		}
	}
	ix, iy := int64(x.N), int64(y.N)
	switch e.Op {
	case policy.LAND, policy.LOR:
		if y.K == record.Bool {
			return y, true
		}
	case policy.ADD, policy.SUB, policy.MUL, policy.QUO, policy.REM:
		switch {
		case x.K == record.String && y.K == record.String && e.Op == policy.ADD:
			if len(x.S)+len(y.S) <= g.opts.Limits.MaxString {
				return vm.String(x.S + y.S), true
			}
		case ints && g.typeOf(e).Kind == types.Int:
			switch e.Op {
			case policy.ADD:
				return vm.Int(ix + iy), true
			case policy.SUB:
				return vm.Int(ix - iy), true
			case policy.MUL:
				return vm.Int(ix * iy), true
			case policy.QUO:
				if iy != 0 {
					return vm.Int(ix / iy), true
				}
			case policy.REM:
				if iy != 0 {
					return vm.Int(ix % iy), true
				}
			}
		case nums:
			if ints {
				fx, fy = float64(ix), float64(iy)
			}
			var r float64
			switch e.Op {
			case policy.ADD:
				r = fx + fy
			case policy.SUB:
				r = fx - fy
			case policy.MUL:
				r = fx * fy
			case policy.QUO:
				if fy == 0 {
					return vm.Reg{}, false
				}
				r = fx / fy
			case policy.REM:
				if fy == 0 {
					return vm.Reg{}, false
				}
				r = math.Mod(fx, fy)
			}
			if math.IsNaN(r) || math.IsInf(r, 0) {
				return vm.Reg{}, false
			}
			return vm.Float(r), true
		}
	case policy.EQL, policy.NEQ:
		var eq bool
		switch {
		case x.K <= record.Null || y.K <= record.Null:
			eq = x.K <= record.Null && y.K <= record.Null
		case ints:
			eq = ix == iy
		case nums:
			eq = fx == fy
		case x.K != y.K:
			eq = false
		case x.K == record.String:
			eq = x.S == y.S
		case x.K == record.Bool:
			eq = x.N == y.N
		default:
			return vm.Reg{}, false
		}
		return vm.Bool(eq == (e.Op == policy.EQL)), true
	case policy.LSS, policy.LEQ, policy.GTR, policy.GEQ:
		var c int
		switch {
		case ints:
			c = cmp3(ix < iy, ix > iy)
		case nums:
			c = cmp3(fx < fy, fx > fy)
		case x.K == record.String && y.K == record.String:
			c = cmp3(x.S < y.S, x.S > y.S)
		default:
			return vm.Reg{}, false
		}
		switch e.Op {
		case policy.LSS:
			return vm.Bool(c < 0), true
		case policy.LEQ:
			return vm.Bool(c <= 0), true
		case policy.GTR:
			return vm.Bool(c > 0), true
		default:
			return vm.Bool(c >= 0), true
		}
	}
	return vm.Reg{}, false
}

func cmp3(lt, gt bool) int {
	switch {
	case lt:
		return -1
	case gt:
		return 1
	}
	return 0
}
