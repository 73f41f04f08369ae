package policyrunprocessor

import (
	"cmp"
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/policyrun/policyrun/compiler/types"
	policysrc "github.com/policyrun/policyrun/policy"
)

// A condition compiled to a closure: the plan's statements test their
// conditions through these. The common shapes — a read compared with a
// constant (`.severity_number < 9`, `.attributes.k == "GET"`, `(.x ?? 0) >=
// 500`), and &&, || and ! of them — read pdata and compare without
// building a pval; the rest go through eval. ok false gives up, as eval's.
type cond func(r *runner, s *src) (b, ok bool)

func compileCond(e *pexpr) cond {
	switch e.op {
	case eAnd:
		// A chain a && b && c is one loop, not closures nested as deep
		// as the chain is long.
		var cs []cond
		for _, x := range conjuncts(e, nil) {
			cs = append(cs, compileCond(x))
		}
		if len(cs) == 2 {
			x, y := cs[0], cs[1]
			return func(r *runner, s *src) (bool, bool) {
				if b, ok := x(r, s); !ok || !b {
					return false, ok
				}
				return y(r, s)
			}
		}
		return func(r *runner, s *src) (bool, bool) {
			for _, c := range cs {
				if b, ok := c(r, s); !ok || !b {
					return false, ok
				}
			}
			return true, true
		}
	case eOr:
		x, y := compileCond(e.x), compileCond(e.y)
		return func(r *runner, s *src) (bool, bool) {
			if b, ok := x(r, s); !ok || b {
				return b, ok
			}
			return y(r, s)
		}
	case eNot:
		x := compileCond(e.x)
		return func(r *runner, s *src) (bool, bool) {
			b, ok := x(r, s)
			return !b, ok
		}
	case eCmp:
		if c := readVsConst(e); c != nil {
			return c
		}
	}
	return func(r *runner, s *src) (bool, bool) {
		v, ok := r.eval(e, s)
		return v.b, ok && v.k == vBool
	}
}

// conjuncts appends the operands of a chain of && to dst, in order.
func conjuncts(e *pexpr, dst []*pexpr) []*pexpr {
	if e.op != eAnd {
		return append(dst, e)
	}
	return conjuncts(e.y, conjuncts(e.x, dst))
}

// readVsConst compiles `R op K` and `K op R`, R a read of a number,
// string or bool (or `R ?? K2`), K a literal of the same kind: nil for
// anything else.
func readVsConst(e *pexpr) cond {
	rd, k, op := e.x, e.y, e.cmp
	if rd.op == eLit {
		rd, k, op = k, rd, swap(op)
	}
	if k.op != eLit || k.lit.nullish() {
		return nil
	}
	var dflt *pval
	if rd.op == eCoalesce && rd.y.op == eLit && !rd.y.lit.nullish() {
		dflt, rd = &rd.y.lit, rd.x
	}
	if rd.op != eRead || rd.present != nil {
		return nil
	}
	c := k.lit
	if rd.loc.w == wSeverityNumber && c.k == vInt {
		// Always there, always an int32: the filter processor's most
		// common condition, compiled per operator.
		return severityCmp(op, c.i)
	}
	if rd.loc.w == wSeverityNumber && c.k == vFloat {
		cf := c.f
		return func(r *runner, s *src) (bool, bool) {
			return cmpResult(op, cmp.Compare(float64(s.lr.SeverityNumber()), cf)), !math.IsNaN(cf)
		}
	}
	get := reader(rd)
	if get == nil {
		return nil
	}
	switch {
	case c.k == vStr && rd.want == types.String && (op == policysrc.EQL || op == policysrc.NEQ):
		eq := op == policysrc.EQL
		return func(r *runner, s *src) (bool, bool) {
			x, st := get(s)
			switch st {
			case pcommon.ValueTypeStr:
				return (x.Str() == c.s) == eq, true
			case 0: // absent
				if dflt == nil {
					return nullCmp(op, rd.optional)
				}
				return (dflt.s == c.s) == eq, dflt.k == vStr
			}
			return false, false
		}
	case c.k == vStr && rd.want == types.String:
		return func(r *runner, s *src) (bool, bool) {
			x, st := get(s)
			switch st {
			case pcommon.ValueTypeStr:
				return cmpResult(op, strings.Compare(x.Str(), c.s)), true
			case 0: // absent
				if dflt == nil {
					return nullCmp(op, rd.optional)
				}
				return cmpResult(op, strings.Compare(dflt.s, c.s)), dflt.k == vStr
			}
			return false, false
		}
	case c.k == vBool && rd.want == types.Bool:
		return func(r *runner, s *src) (bool, bool) {
			x, st := get(s)
			switch st {
			case pcommon.ValueTypeBool:
				return boolCmp(op, x.Bool(), c.b)
			case 0:
				if dflt == nil {
					return nullCmp(op, rd.optional)
				}
				return boolCmp(op, dflt.b, c.b)
			}
			return false, false
		}
	case (c.k == vInt || c.k == vFloat) && (rd.want == types.Int || rd.want == types.Float):
		cf := asFloat(c)
		return func(r *runner, s *src) (bool, bool) {
			x, st := get(s)
			var v pval
			switch st {
			case pcommon.ValueTypeInt:
				v = pval{k: vInt, i: x.Int()}
			case pcommon.ValueTypeDouble:
				if rd.want != types.Float {
					return false, false
				}
				v = pval{k: vFloat, f: x.Double()}
			case 0:
				if dflt == nil {
					return nullCmp(op, rd.optional)
				}
				v = *dflt
			default:
				return false, false
			}
			if v.k == vInt && c.k == vInt {
				return cmpResult(op, cmp.Compare(v.i, c.i)), true
			}
			f := asFloat(v)
			if math.IsNaN(f) || math.IsNaN(cf) {
				return false, false
			}
			return cmpResult(op, cmp.Compare(f, cf)), true
		}
	}
	return nil
}

// severityCmp is `.severity_number op c`.
func severityCmp(op policysrc.Token, c int64) cond {
	switch op {
	case policysrc.LSS:
		return func(r *runner, s *src) (bool, bool) { return int64(s.lr.SeverityNumber()) < c, true }
	case policysrc.LEQ:
		return func(r *runner, s *src) (bool, bool) { return int64(s.lr.SeverityNumber()) <= c, true }
	case policysrc.GTR:
		return func(r *runner, s *src) (bool, bool) { return int64(s.lr.SeverityNumber()) > c, true }
	case policysrc.GEQ:
		return func(r *runner, s *src) (bool, bool) { return int64(s.lr.SeverityNumber()) >= c, true }
	case policysrc.EQL:
		return func(r *runner, s *src) (bool, bool) { return int64(s.lr.SeverityNumber()) == c, true }
	}
	return func(r *runner, s *src) (bool, bool) { return int64(s.lr.SeverityNumber()) != c, true }
}

// reader returns a function that reads rd's location: the pdata value and
// its type, 0 when absent (or Empty: null, which the callers take as
// absent only where that is the engine's answer; see nullCmp).
func reader(rd *pexpr) func(s *src) (pcommon.Value, pcommon.ValueType) {
	key := rd.loc.key
	switch rd.loc.w {
	case wAttributes:
		return func(s *src) (pcommon.Value, pcommon.ValueType) { return fromMap(s.lr.Attributes(), key) }
	case wResAttributes:
		return func(s *src) (pcommon.Value, pcommon.ValueType) { return fromMap(s.rl.Resource().Attributes(), key) }
	case wScopeAttributes:
		return func(s *src) (pcommon.Value, pcommon.ValueType) { return fromMap(s.sl.Scope().Attributes(), key) }
	case wBody:
		opt := rd.bodyOptional
		return func(s *src) (pcommon.Value, pcommon.ValueType) {
			b := s.lr.Body()
			switch b.Type() {
			case pcommon.ValueTypeMap:
				return fromMap(b.Map(), key)
			case pcommon.ValueTypeEmpty:
				if opt {
					return b, 0
				}
			}
			return b, pcommon.ValueTypeBytes // gives up: not a kind the callers take
		}
	}
	return nil
}

// fromMap reads m[key]: the value and its type, 0 when absent or Empty.
// A function of its own, small enough to inline into the readers.
func fromMap(m pcommon.Map, key string) (pcommon.Value, pcommon.ValueType) {
	v, ok := m.Get(key)
	if !ok {
		return v, 0
	}
	t := v.Type()
	if t == pcommon.ValueTypeEmpty {
		t = 0
	}
	return v, t
}

// nullCmp is a comparison of absent or null with a constant that is
// neither: == is false, != true; an ordered one gives up, as does a read
// that the schema requires.
func nullCmp(op policysrc.Token, optional bool) (bool, bool) {
	if !optional {
		return false, false
	}
	switch op {
	case policysrc.EQL:
		return false, true
	case policysrc.NEQ:
		return true, true
	}
	return false, false
}

func boolCmp(op policysrc.Token, x, y bool) (bool, bool) {
	switch op {
	case policysrc.EQL:
		return x == y, true
	case policysrc.NEQ:
		return x != y, true
	}
	return false, false
}

func cmpResult(op policysrc.Token, c int) bool {
	switch op {
	case policysrc.EQL:
		return c == 0
	case policysrc.NEQ:
		return c != 0
	case policysrc.LSS:
		return c < 0
	case policysrc.LEQ:
		return c <= 0
	case policysrc.GTR:
		return c > 0
	}
	return c >= 0
}

// swap is op with its operands swapped: K < R is R > K.
func swap(op policysrc.Token) policysrc.Token {
	switch op {
	case policysrc.LSS:
		return policysrc.GTR
	case policysrc.LEQ:
		return policysrc.GEQ
	case policysrc.GTR:
		return policysrc.LSS
	case policysrc.GEQ:
		return policysrc.LEQ
	}
	return op
}
