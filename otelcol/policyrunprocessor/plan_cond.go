package policyrunprocessor

import (
	"cmp"
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

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
	g, ok := newGetter(rd)
	if !ok {
		return nil
	}
	switch {
	case c.k == vStr && rd.want == types.String && (op == policysrc.EQL || op == policysrc.NEQ) && g.w == wAttributes && dflt == nil:
		// The most common condition of all (`.attributes.k == "v"`), read
		// with no call between it and pdata.
		eq, key, optional := op == policysrc.EQL, g.key, rd.optional
		return func(r *runner, s *src) (bool, bool) {
			x, ok := s.lr.Attributes().Get(key)
			switch {
			case !ok:
				return nullCmp(op, optional)
			case x.Type() == pcommon.ValueTypeStr:
				return (x.Str() == c.s) == eq, true
			case x.Type() == pcommon.ValueTypeEmpty:
				return nullCmp(op, optional)
			}
			return false, false
		}
	case c.k == vStr && rd.want == types.String && (op == policysrc.EQL || op == policysrc.NEQ):
		eq := op == policysrc.EQL
		return func(r *runner, s *src) (bool, bool) {
			x, st := g.get(s)
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
			x, st := g.get(s)
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
			x, st := g.get(s)
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
	case c.k == vInt && rd.want == types.Int && g.w == wAttributes && (dflt == nil || dflt.k == vInt):
		// `(.attributes.k ?? 0) >= 500`, as the string case above.
		key, optional := g.key, rd.optional
		return func(r *runner, s *src) (bool, bool) {
			x, ok := s.lr.Attributes().Get(key)
			var v int64
			switch {
			case ok && x.Type() == pcommon.ValueTypeInt:
				v = x.Int()
			case !ok || x.Type() == pcommon.ValueTypeEmpty:
				if dflt == nil {
					return nullCmp(op, optional)
				}
				v = dflt.i
			default:
				return false, false
			}
			return cmpResult(op, cmp.Compare(v, c.i)), true
		}
	case (c.k == vInt || c.k == vFloat) && (rd.want == types.Int || rd.want == types.Float):
		cf, intConst := asFloat(c), c.k == vInt
		return func(r *runner, s *src) (bool, bool) {
			x, st := g.get(s)
			switch st {
			case pcommon.ValueTypeInt:
				if intConst {
					return cmpResult(op, cmp.Compare(x.Int(), c.i)), true
				}
				return floatCmp(op, float64(x.Int()), cf)
			case pcommon.ValueTypeDouble:
				if rd.want != types.Float {
					return false, false
				}
				return floatCmp(op, x.Double(), cf)
			case 0:
				if dflt == nil {
					return nullCmp(op, rd.optional)
				}
				if dflt.k == vInt && intConst {
					return cmpResult(op, cmp.Compare(dflt.i, c.i)), true
				}
				return floatCmp(op, asFloat(*dflt), cf)
			}
			return false, false
		}
	}
	return nil
}

// recordPred compiles a condition that cannot give up, over the fields
// every log record has (`.severity_number < 9`, and &&, || and ! of such),
// to a predicate of the record alone: a drop of it is one RemoveIf with
// it, as the filter processor and the hand-written floor run. nil for
// anything else.
func recordPred(e *pexpr) func(plog.LogRecord) bool {
	switch e.op {
	case eAnd, eOr:
		x, y := recordPred(e.x), recordPred(e.y)
		if x == nil || y == nil {
			return nil
		}
		if e.op == eAnd {
			return func(lr plog.LogRecord) bool { return x(lr) && y(lr) }
		}
		return func(lr plog.LogRecord) bool { return x(lr) || y(lr) }
	case eNot:
		if x := recordPred(e.x); x != nil {
			return func(lr plog.LogRecord) bool { return !x(lr) }
		}
	case eCmp:
		rd, k, op := e.x, e.y, e.cmp
		if rd.op == eLit {
			rd, k, op = k, rd, swap(op)
		}
		if rd.op != eRead || rd.present != nil || rd.loc.w != wSeverityNumber || k.op != eLit || k.lit.k != vInt {
			return nil
		}
		return sevPred(op, k.lit.i)
	}
	return nil
}

// severityCmp is `.severity_number op c`.
func severityCmp(op policysrc.Token, c int64) cond {
	p := sevPred(op, c)
	return func(r *runner, s *src) (bool, bool) { return p(s.lr), true }
}

// sevPred is `.severity_number op c` as a predicate of the record, one
// closure per operator.
func sevPred(op policysrc.Token, c int64) func(plog.LogRecord) bool {
	switch op {
	case policysrc.LSS:
		return func(lr plog.LogRecord) bool { return int64(lr.SeverityNumber()) < c }
	case policysrc.LEQ:
		return func(lr plog.LogRecord) bool { return int64(lr.SeverityNumber()) <= c }
	case policysrc.GTR:
		return func(lr plog.LogRecord) bool { return int64(lr.SeverityNumber()) > c }
	case policysrc.GEQ:
		return func(lr plog.LogRecord) bool { return int64(lr.SeverityNumber()) >= c }
	case policysrc.EQL:
		return func(lr plog.LogRecord) bool { return int64(lr.SeverityNumber()) == c }
	}
	return func(lr plog.LogRecord) bool { return int64(lr.SeverityNumber()) != c }
}

// getter reads one location of a record: the pdata value and its type, 0
// when absent (or Empty: null, which the callers take as absent only where
// that is the engine's answer; see nullCmp). A value, not a closure, so
// that a condition reads pdata in one call.
type getter struct {
	w       where
	key     string
	bodyOpt bool // an Empty body reads as absent
}

// newGetter returns rd's getter, ok false for a location it cannot read.
func newGetter(rd *pexpr) (getter, bool) {
	switch rd.loc.w {
	case wAttributes, wResAttributes, wScopeAttributes, wBody:
		return getter{w: rd.loc.w, key: rd.loc.key, bodyOpt: rd.bodyOptional}, true
	}
	return getter{}, false
}

func (g *getter) get(s *src) (pcommon.Value, pcommon.ValueType) {
	var m pcommon.Map
	switch g.w {
	case wAttributes:
		m = s.lr.Attributes()
	case wResAttributes:
		m = s.rl.Resource().Attributes()
	case wScopeAttributes:
		m = s.sl.Scope().Attributes()
	default:
		b := s.lr.Body()
		switch b.Type() {
		case pcommon.ValueTypeMap:
			m = b.Map()
		case pcommon.ValueTypeEmpty:
			if g.bodyOpt {
				return b, 0
			}
			return b, pcommon.ValueTypeBytes // gives up: not a kind the callers take
		default:
			return b, pcommon.ValueTypeBytes
		}
	}
	v, ok := m.Get(g.key)
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

// floatCmp compares as the engine does: NaN on either side gives up.
func floatCmp(op policysrc.Token, x, y float64) (bool, bool) {
	if math.IsNaN(x) || math.IsNaN(y) {
		return false, false
	}
	return cmpResult(op, cmp.Compare(x, y)), true
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
