package policyrunprocessor

import (
	"cmp"
	"math"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/policyrun/policyrun/compiler/types"
	policysrc "github.com/policyrun/policyrun/policy"
)

// Running a plan over one log record: decide, then apply (plan.go).

type valKind uint8

const (
	vAbsent valKind = iota
	vNull
	vBool
	vInt
	vFloat
	vStr
	vOther // a map, an array, bytes: the plan gives up on them
)

// pval is a scalar read from pdata or a literal. Strings read from pdata
// are pdata's own, which are immutable: written elsewhere they are shared.
type pval struct {
	k valKind
	b bool
	i int64
	f float64
	s string
}

func (v pval) nullish() bool { return v.k == vAbsent || v.k == vNull }

// outcome of deciding a record.
type decision uint8

const (
	dKeep decision = iota // apply the actions and go on
	dDrop
	dBail // give up: the general path runs the record
)

// action is a write deciding collected.
type action struct {
	loc    ploc
	remove bool
	v      pval
	// held is what deciding found at loc: unknown (a lift's keys),
	// absent, or present in at, so that applying need not look again.
	held heldState
	at   pcommon.Value
}

type heldState uint8

const (
	heldUnknown heldState = iota
	heldAbsent
	heldPresent
	heldGone // applied, or not the last action on its key
)

// runner decides and applies plans; one per batch.
type runner struct {
	acts []action
	// distinct: no two actions of the decision are on one key
	// (plan.distinct), so each is the last on its key.
	distinct bool
	keys     map[[2]string]string // prefixed's
	recent   []prefixedKey        // prefixed's first keys, looked along
	// newKeys counts, per map, the keys the actions may add, so that the
	// map grows once by that (not by append's doubling).
	newAttrs, newBody int
}

// decide walks p's statements over s, collecting r.acts.
func (r *runner) decide(p *plan, s *src) decision {
	r.acts, r.distinct = r.acts[:0], p.distinct || p.liftDistinct
	d, _ := r.block(p.stmts, s)
	return d
}

// block runs stmts; stopped reports a stop.
func (r *runner) block(stmts []pstmt, s *src) (d decision, stopped bool) {
	for i := range stmts {
		st := &stmts[i]
		switch st.kind {
		case sSet, sSetIfNull:
			v, ok := r.eval(st.value, s)
			if !ok {
				return dBail, false
			}
			if st.kind == sSetIfNull {
				cur, ok := r.read(&pexpr{loc: st.targets[0], want: types.Any, optional: true, bodyOptional: true}, s)
				if !ok {
					return dBail, false
				}
				if !cur.nullish() {
					continue
				}
			}
			if !r.writable(st.targets[0], s) {
				return dBail, false
			}
			a := r.act(st.targets[0])
			a.remove, a.v = v.k == vAbsent, v
			if !r.scalarAt(a, s) {
				return dBail, false
			}
		case sRemove:
			for _, t := range st.targets {
				a := r.act(t)
				a.remove = true
				if !r.scalarAt(a, s) {
					return dBail, false
				}
			}
		case sLift:
			if !r.lift(st, s) {
				return dBail, false
			}
		case sDrop, sStop:
			if st.test != nil {
				b, ok := st.test(r, s)
				if !ok {
					return dBail, false
				}
				if !b {
					continue
				}
			}
			if st.kind == sDrop {
				return dDrop, false
			}
			return dKeep, true
		case sIf:
			b, ok := st.test(r, s)
			if !ok {
				return dBail, false
			}
			body := st.els
			if b {
				body = st.then
			}
			if len(body) == 0 {
				continue
			}
			if d, stopped := r.block(body, s); d != dKeep || stopped {
				return d, stopped
			}
		case sGeneral:
			return dBail, false
		}
	}
	return dKeep, false
}

// lift collects a lift's actions: the key removed, then each key of its
// map written to the map that holds it with the prefix, in order. It gives
// up where the engine could fault or the general path refuse to read: a
// value that is not a map (or absent or null, which lift leaves alone), a
// map holding maps, arrays or bytes.
func (r *runner) lift(st *pstmt, s *src) bool {
	l := st.targets[0]
	var parent pcommon.Map
	switch l.w {
	case wAttributes:
		parent = s.lr.Attributes()
	default:
		b := s.lr.Body()
		switch b.Type() {
		case pcommon.ValueTypeEmpty:
			return true // absent: nothing
		case pcommon.ValueTypeMap:
			parent = b.Map()
		default:
			return false
		}
	}
	v, ok := parent.Get(l.key)
	if !ok || v.Type() == pcommon.ValueTypeEmpty {
		return true // absent or null: nothing
	}
	if v.Type() != pcommon.ValueTypeMap {
		return false
	}
	start := len(r.acts)
	r.acts = append(r.acts, action{loc: l, remove: true})
	flat := true
	v.Map().Range(func(k string, x pcommon.Value) bool {
		pv := scalarValue(x)
		if pv.k == vOther {
			flat = false
			return false
		}
		r.acts = append(r.acts, action{loc: ploc{w: l.w, key: r.prefixed(st.prefix, k)}, v: pv})
		return true
	})
	if !flat {
		r.acts = r.acts[:start]
		return false
	}
	return true
}

// prefixed is prefix+key, kept: a policy lifts the same keys record after
// record, and pdata keys are immutable strings records may share.
func (r *runner) prefixed(prefix, key string) string {
	if prefix == "" {
		return key
	}
	// The few keys a policy lifts record after record are found by a
	// look along a short list, cheaper than hashing the pair.
	for i := range r.recent {
		if e := &r.recent[i]; e.key == key && e.prefix == prefix {
			return e.full
		}
	}
	k := [2]string{prefix, key}
	if s, ok := r.keys[k]; ok {
		return s
	}
	if r.keys == nil || len(r.keys) >= maxInterned {
		r.keys = make(map[[2]string]string, 64)
	}
	s := prefix + key
	r.keys[k] = s
	if len(r.recent) < maxRecent {
		r.recent = append(r.recent, prefixedKey{prefix, key, s})
	}
	return s
}

// maxRecent bounds runner.recent: past it, the map alone.
const maxRecent = 16

type prefixedKey struct{ prefix, key, full string }

// writable reports whether a set of l can be made as the engine makes it:
// the body must be a map, or absent or null (made a map); a scalar body is
// a path_conflict fault.
func (r *runner) writable(l ploc, s *src) bool {
	if l.w != wBody {
		return true
	}
	switch s.lr.Body().Type() {
	case pcommon.ValueTypeMap, pcommon.ValueTypeEmpty:
		return true
	}
	return false
}

// act adds an action on l, made in place (an action is a hundred bytes).
func (r *runner) act(l ploc) *action {
	r.acts = append(r.acts, action{})
	a := &r.acts[len(r.acts)-1]
	a.loc = l
	return a
}

// scalarAt reports whether what a's location holds now is absent or a
// scalar, noting which in a: a map or an array there (which the general
// path may refuse to read, too deep) leaves the write to it.
func (r *runner) scalarAt(a *action, s *src) bool {
	var m pcommon.Map
	switch a.loc.w {
	case wAttributes:
		m = s.lr.Attributes()
	case wBody:
		b := s.lr.Body()
		if b.Type() != pcommon.ValueTypeMap {
			a.held = heldAbsent
			return true
		}
		m = b.Map()
	default:
		return true
	}
	v, ok := m.Get(a.loc.key)
	if !ok {
		a.held = heldAbsent
		return true
	}
	switch v.Type() {
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice, pcommon.ValueTypeBytes:
		return false
	}
	a.held, a.at = heldPresent, v
	return true
}

// eval evaluates e over s; false means give up.
func (r *runner) eval(e *pexpr, s *src) (pval, bool) {
	switch e.op {
	case eLit:
		return e.lit, true
	case eRead:
		return r.read(e, s)
	case eCoalesce:
		x, ok := r.eval(e.x, s)
		if !ok {
			return x, false
		}
		if !x.nullish() {
			return x, true
		}
		return r.eval(e.y, s)
	case eAnd, eOr:
		x, ok := r.eval(e.x, s)
		if !ok || x.k != vBool {
			return x, false
		}
		if x.b == (e.op == eOr) {
			return x, true
		}
		y, ok := r.eval(e.y, s)
		return y, ok && y.k == vBool
	case eNot:
		x, ok := r.eval(e.x, s)
		if !ok || x.k != vBool {
			return x, false
		}
		return pval{k: vBool, b: !x.b}, true
	case eCmp:
		x, ok := r.eval(e.x, s)
		if !ok {
			return x, false
		}
		y, ok := r.eval(e.y, s)
		if !ok {
			return y, false
		}
		return compare(e.cmp, x, y)
	}
	return pval{}, false
}

// compare is the engine's comparison of scalars: absent equals null, an
// int equals the float of its value; the ordered operators take numbers
// or strings, never absent or null (the checker makes sure; anything
// else gives up, as does NaN).
func compare(op policysrc.Token, x, y pval) (pval, bool) {
	if op == policysrc.EQL || op == policysrc.NEQ {
		eq, ok := equal(x, y)
		return pval{k: vBool, b: eq == (op == policysrc.EQL)}, ok
	}
	var c int
	switch {
	case x.k == vStr && y.k == vStr:
		c = strings.Compare(x.s, y.s)
	case x.k == vInt && y.k == vInt:
		c = cmp.Compare(x.i, y.i)
	case numeric(x) && numeric(y):
		a, b := asFloat(x), asFloat(y)
		if math.IsNaN(a) || math.IsNaN(b) {
			return pval{}, false
		}
		c = cmp.Compare(a, b)
	default:
		return pval{}, false
	}
	return pval{k: vBool, b: cmpResult(op, c)}, true
}

func equal(x, y pval) (bool, bool) {
	switch {
	case x.nullish() || y.nullish():
		return x.nullish() && y.nullish(), true
	case x.k == vOther || y.k == vOther:
		return false, false
	case numeric(x) && numeric(y):
		if x.k == vInt && y.k == vInt {
			return x.i == y.i, true
		}
		a, b := asFloat(x), asFloat(y)
		if math.IsNaN(a) || math.IsNaN(b) {
			return false, false
		}
		return a == b, true
	case x.k != y.k:
		return false, true
	case x.k == vStr:
		return x.s == y.s, true
	}
	return x.b == y.b, true
}

func numeric(v pval) bool { return v.k == vInt || v.k == vFloat }

func asFloat(v pval) float64 {
	if v.k == vInt {
		return float64(v.i)
	}
	return v.f
}

// read reads e's location in s and checks it against e's guard: a kind the
// schema does not declare, or absent or null where it is required, is a
// fault in the engine, and the plan gives up.
func (r *runner) read(e *pexpr, s *src) (pval, bool) {
	var v pval
	switch e.loc.w {
	case wSeverityNumber:
		v = pval{k: vInt, i: int64(s.lr.SeverityNumber())}
	case wSeverityText:
		v = pval{k: vStr, s: s.lr.SeverityText()}
	case wScopeName:
		v = pval{k: vStr, s: s.sl.Scope().Name()}
	case wScopeVersion:
		v = pval{k: vStr, s: s.sl.Scope().Version()}
	case wAttributes:
		v = mapValue(s.lr.Attributes(), e.loc.key)
	case wResAttributes:
		v = mapValue(s.rl.Resource().Attributes(), e.loc.key)
	case wScopeAttributes:
		v = mapValue(s.sl.Scope().Attributes(), e.loc.key)
	case wBody:
		switch b := s.lr.Body(); b.Type() {
		case pcommon.ValueTypeMap:
			v = mapValue(b.Map(), e.loc.key)
			if e.present != nil {
				return guard(e.present, v)
			}
		case pcommon.ValueTypeEmpty:
			if !e.bodyOptional {
				return v, false
			}
		default:
			return v, false // a fault, or a read through a scalar
		}
	}
	return guard(e, v)
}

// guard checks v against what e's read requires, converting an int read
// as a float.
func guard(e *pexpr, v pval) (pval, bool) {
	if v.nullish() {
		return v, e.optional || e.want == types.Any || e.want == types.Null
	}
	if v.k == vOther {
		return v, false
	}
	switch e.want {
	case types.Any:
		return v, true
	case types.Bool:
		return v, v.k == vBool
	case types.Int:
		return v, v.k == vInt
	case types.Float:
		if v.k == vInt {
			return pval{k: vFloat, f: float64(v.i)}, true
		}
		return v, v.k == vFloat
	case types.String:
		return v, v.k == vStr
	}
	return v, false
}

func mapValue(m pcommon.Map, key string) pval {
	x, ok := m.Get(key)
	if !ok {
		return pval{}
	}
	return scalarValue(x)
}

// scalarValue is x as a pval: vOther for a map, an array or bytes.
func scalarValue(x pcommon.Value) pval {
	switch x.Type() {
	case pcommon.ValueTypeStr:
		return pval{k: vStr, s: x.Str()}
	case pcommon.ValueTypeInt:
		return pval{k: vInt, i: x.Int()}
	case pcommon.ValueTypeDouble:
		return pval{k: vFloat, f: x.Double()}
	case pcommon.ValueTypeBool:
		return pval{k: vBool, b: x.Bool()}
	case pcommon.ValueTypeEmpty:
		return pval{k: vNull}
	}
	return pval{k: vOther}
}

// apply makes the actions of the last decision and reports whether it
// wrote anything. Of the actions on one key the last counts. Values that
// deciding found are written in place first, while no removal or growth
// has moved a map's entries; then the removals (which make room); then
// the new keys, the map grown once by their number.
func (r *runner) apply(s *src) bool {
	if len(r.acts) == 0 {
		return false
	}
	r.newAttrs, r.newBody = 0, 0
	wrote := false
	for i := range r.acts {
		a := &r.acts[i]
		if !r.distinct && !r.last(i) {
			a.held = heldGone
			continue
		}
		switch {
		case a.remove:
		case a.held == heldPresent && a.v.k != vNull:
			setValue(a.at, a.v)
			wrote = true
			a.held = heldGone
		case a.loc.w == wAttributes:
			r.newAttrs++
		default:
			r.newBody++
		}
	}
	for i := range r.acts {
		if a := &r.acts[i]; a.remove && a.held != heldGone && a.held != heldAbsent {
			if m, ok := r.mapOf(a, s); ok {
				wrote = m.Remove(a.loc.key) || wrote
			}
		}
	}
	for i := range r.acts {
		if a := &r.acts[i]; !a.remove && a.held != heldGone {
			if m, ok := r.mapOf(a, s); ok {
				putValue(m, a.loc.key, a.v)
				wrote = true
			}
		}
	}
	return wrote
}

// last reports whether the i-th action is the last on its key.
func (r *runner) last(i int) bool {
	for _, b := range r.acts[i+1:] {
		if b.loc == r.acts[i].loc {
			return false
		}
	}
	return true
}

// mapOf returns the map an action writes, grown once by the keys the
// actions add: a body that is not a map becomes one for a write, and is
// left alone by a removal (through absent or a scalar: nothing to do).
func (r *runner) mapOf(a *action, s *src) (pcommon.Map, bool) {
	if a.loc.w == wAttributes {
		m := s.lr.Attributes()
		if r.newAttrs > 0 {
			ensureRoom(m, a, &r.newAttrs)
		}
		return m, true
	}
	b := s.lr.Body()
	if b.Type() != pcommon.ValueTypeMap {
		if a.remove {
			return pcommon.Map{}, false
		}
		b.SetEmptyMap()
	}
	m := b.Map()
	if r.newBody > 0 {
		ensureRoom(m, a, &r.newBody)
	}
	return m, true
}

// ensureRoom grows m once by the keys the actions may add, the first time
// one of them is new.
func ensureRoom(m pcommon.Map, a *action, n *int) {
	if a.remove {
		return
	}
	if a.held != heldAbsent {
		if _, ok := m.Get(a.loc.key); ok {
			return
		}
	}
	m.EnsureCapacity(m.Len() + *n)
	*n = 0
}

// setValue sets a value found in a map to v, not null (pcommon.Value has
// no setter for Empty: putValue writes it).
func setValue(x pcommon.Value, v pval) {
	switch v.k {
	case vStr:
		x.SetStr(v.s)
	case vInt:
		x.SetInt(v.i)
	case vFloat:
		x.SetDouble(v.f)
	case vBool:
		x.SetBool(v.b)
	}
}

// putValue sets m[key] to v: null is Empty.
func putValue(m pcommon.Map, key string, v pval) {
	switch v.k {
	case vStr:
		m.PutStr(key, v.s)
	case vInt:
		m.PutInt(key, v.i)
	case vFloat:
		m.PutDouble(key, v.f)
	case vBool:
		m.PutBool(key, v.b)
	default:
		m.PutEmpty(key)
	}
}
