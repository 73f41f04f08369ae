package check

import (
	"maps"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
)

// state is what the checker knows at one point of the policy: the record's
// type as the schema and the writes so far have made it, and the facts that
// narrowing tests proved. Writes change root (flow typing); a fact narrows
// one path (exists(P), P != null, is_string(P)) until something writes it.
type state struct {
	root *types.Type
	// facts maps a path key (see path.key) to what narrowing proved there.
	facts map[string]fact
	// dead is set after an unconditional drop or stop: nothing below runs.
	dead    bool
	deadWhy string // "drop at line 4", for the unreachable-code label
}

// fact is a narrowed type proved for one path: the path (its base and its
// constant steps) and the type.
type fact struct {
	local *Local // nil: the record
	segs  []seg
	t     *types.Type
}

func (s *state) clone() *state {
	return &state{root: s.root, facts: maps.Clone(s.facts), dead: s.dead, deadWhy: s.deadWhy}
}

func (s *state) fact(key string) *types.Type {
	if key == "" {
		return nil
	}
	if f, ok := s.facts[key]; ok {
		return f.t
	}
	return nil
}

// setFact records that the first n steps of p have type t.
func (s *state) setFact(p path, n int, t *types.Type) {
	key := p.key(n)
	if key == "" {
		return
	}
	if s.facts == nil {
		s.facts = map[string]fact{}
	}
	s.facts[key] = fact{local: p.local, segs: append([]seg(nil), p.segs[:n]...), t: t}
}

// effective returns the type of the path of f in s: its fact, or the type
// the record (or local) has there.
func (s *state) effective(f fact) *types.Type {
	p := path{root: f.local == nil, local: f.local, segs: f.segs}
	if t := s.fact(p.key(len(p.segs))); t != nil {
		return t
	}
	var t *types.Type
	if f.local != nil {
		t = f.local.Type
	} else {
		t = s.root
	}
	return s.follow(t, p, quietMember)
}

// follow walks p from t, the type of its base: each step takes member's
// type of the step, or the fact proved for the path so far.
func (s *state) follow(t *types.Type, p path, member func(*types.Type, seg) *types.Type) *types.Type {
	if ft := s.fact(p.key(0)); ft != nil {
		t = ft
	}
	for i, sg := range p.segs {
		t = member(t, sg)
		if ft := s.fact(p.key(i + 1)); ft != nil {
			t = ft
		}
	}
	return t
}

// merge joins the states at the end of two branches. A dead branch adds
// nothing; a fact survives only where both branches proved it.
func merge(a, b *state) *state {
	switch {
	case a.dead && b.dead:
		return &state{root: a.root, facts: a.facts, dead: true, deadWhy: "every branch above ends with drop or stop"}
	case a.dead:
		return b.clone()
	case b.dead:
		return a.clone()
	}
	// A path narrowed in one branch only keeps what both branches give it:
	// after `if !exists(.x) { set .x = "d" }`, .x is a string in both.
	out := &state{root: types.Merge(a.root, b.root)}
	for _, fs := range []map[string]fact{a.facts, b.facts} {
		for k, f := range fs {
			if _, done := out.facts[k]; done {
				continue
			}
			t := types.Merge(a.effective(f), b.effective(f))
			if out.facts == nil {
				out.facts = map[string]fact{}
			}
			out.facts[k] = fact{local: f.local, segs: f.segs, t: t}
		}
	}
	return out
}

func sameState(a, b *state) bool {
	if a.dead != b.dead || !types.Identical(a.root, b.root) || len(a.facts) != len(b.facts) {
		return false
	}
	for k, fa := range a.facts {
		if fb, ok := b.facts[k]; !ok || !types.Identical(fa.t, fb.t) {
			return false
		}
	}
	return true
}

// A seg is one step of a path.
type seg struct {
	kind segKind
	name string // segField
	idx  int64  // segInt
}

type segKind int

const (
	segField segKind = iota // .name or ["name"]
	segInt                  // [3]
	segDyn                  // [expr], a key or index known only at run time
)

// path is a path expression taken apart: its base (the record, a local or
// metadata) and its steps.
type path struct {
	root  bool          // based on the record
	local *Local        // based on a local
	meta  string        // %tag or %time (no steps)
	segs  []seg         // steps, outermost last
	nodes []policy.Expr // nodes[i] is the expression up to and including segs[i]
	base  policy.Expr
}

// splitPath takes e apart when it is a path; ok is false otherwise.
func (c *checker) splitPath(e policy.Expr) (p path, ok bool) {
	var walk func(e policy.Expr) bool
	walk = func(e policy.Expr) bool {
		switch e := e.(type) {
		case *policy.RootExpr:
			p.root, p.base = true, e
			return true
		case *policy.MetaExpr:
			p.meta, p.base = e.Name, e
			return true
		case *policy.Ident:
			p.local, p.base = c.lookup(e.Name), e
			return p.local != nil
		case *policy.FieldExpr:
			if !walk(e.X) || p.meta != "" {
				return false
			}
			p.segs = append(p.segs, seg{kind: segField, name: e.Name})
			p.nodes = append(p.nodes, e)
			return true
		case *policy.IndexExpr:
			if !walk(e.X) || p.meta != "" {
				return false
			}
			s := seg{kind: segDyn}
			if v, ok := constIndex(e.Index); ok {
				s = v
			}
			p.segs = append(p.segs, s)
			p.nodes = append(p.nodes, e)
			return true
		}
		return false
	}
	ok = walk(e)
	return p, ok
}

// constIndex returns the step a constant index stands for: ["k"] is the
// field k, [2] and [-1] are array indexes.
func constIndex(e policy.Expr) (seg, bool) {
	for {
		pe, ok := e.(*policy.ParenExpr)
		if !ok {
			break
		}
		e = pe.X
	}
	switch e := e.(type) {
	case *policy.BasicLit:
		switch e.Kind {
		case policy.LitString:
			return seg{kind: segField, name: e.Str}, true
		case policy.LitInt:
			return seg{kind: segInt, idx: e.Int}, true
		}
	case *policy.UnaryExpr:
		if lit, ok := e.X.(*policy.BasicLit); ok && e.Op == policy.SUB && lit.Kind == policy.LitInt {
			return seg{kind: segInt, idx: -lit.Int}, true
		}
	}
	return seg{}, false
}

// key returns the fact key of the first n steps of p, or "" when a dynamic
// step comes first (such paths cannot be narrowed) or p is metadata.
func (p path) key(n int) string {
	var b strings.Builder
	switch {
	case p.root:
		b.WriteByte('.')
	case p.local != nil:
		b.WriteString("$" + strconv.Itoa(p.local.ID))
	default:
		return ""
	}
	for _, s := range p.segs[:n] {
		switch s.kind {
		case segField:
			b.WriteString("/" + strconv.Quote(s.name))
		case segInt:
			b.WriteString("[" + strconv.FormatInt(s.idx, 10) + "]")
		default:
			return ""
		}
	}
	return b.String()
}

// constLen is the number of leading steps of p that are constant.
func (p path) constLen() int {
	for i, s := range p.segs {
		if s.kind == segDyn {
			return i
		}
	}
	return len(p.segs)
}

// isPrefixKey reports whether the path keyed k is a or lies under a.
func isPrefixKey(a, k string) bool {
	if !strings.HasPrefix(k, a) {
		return false
	}
	return len(k) == len(a) || k[len(a)] == '/' || k[len(a)] == '[' || a == "."
}

// write records that the record path p now holds a value of type v (for set
// and the target of rename), or — with remove set — that it was removed.
func (c *checker) write(st *state, p path, v *types.Type, decl policy.Pos, remove bool) {
	edit := func(t *types.Type, segs []seg) *types.Type {
		if remove {
			return removePath(t, segs)
		}
		return setPath(t, segs, v, decl)
	}
	st.root = edit(st.root, p.segs)
	n := p.constLen()
	k := p.key(n)
	for fk, ft := range st.facts {
		switch {
		case isPrefixKey(fk, k) && (fk != k || n < len(p.segs)):
			// An ancestor of the written path: apply the same edit to its
			// narrowed type.
			ft.t = edit(ft.t, p.segs[len(ft.segs):])
			st.facts[fk] = ft
		case isPrefixKey(k, fk):
			// The path itself, or something under it, was replaced.
			delete(st.facts, fk)
		}
	}
}

// setPath returns t with the value at segs replaced by v. Missing parents
// are created (as set does at run time); through a map or an array, the
// element type widens to take v.
func setPath(t *types.Type, segs []seg, v *types.Type, decl policy.Pos) *types.Type {
	if len(segs) == 0 {
		return v
	}
	s, rest := segs[0], segs[1:]
	if t.IsInvalid() {
		return t
	}
	switch t.Kind {
	case types.Optional:
		return setPath(t.Elem, segs, v, decl)
	case types.Null, types.Never:
		return setPath(types.ObjectOf(false), segs, v, decl)
	case types.Any:
		if s.kind == segInt {
			return types.AnyType
		}
		return setPath(types.ObjectOf(true), segs, v, decl)
	}
	switch s.kind {
	case segField:
		switch t.Kind {
		case types.Object:
			out := *t
			out.Fields = append([]types.Field(nil), t.Fields...)
			if f, i := t.Field(s.name); i >= 0 {
				out.Fields[i].Type = setPath(f.Type, rest, v, decl)
				if len(rest) == 0 {
					out.Fields[i].Decl = decl
				}
				return &out
			}
			child := types.NullType
			if t.Open {
				child = types.OptionalOf(types.AnyType)
			}
			out.Fields = append(out.Fields, types.Field{Name: s.name, Type: setPath(child, rest, v, decl), Decl: decl})
			return &out
		case types.Map:
			return types.MapOf(types.Merge(t.Elem, setPath(types.OptionalOf(t.Elem), rest, v, decl)))
		}
	case segInt:
		if t.Kind == types.Array {
			return types.ArrayOf(types.Merge(t.Elem, setPath(t.Elem, rest, v, decl)))
		}
	case segDyn:
		switch t.Kind {
		case types.Map:
			return types.MapOf(types.Merge(t.Elem, setPath(types.OptionalOf(t.Elem), rest, v, decl)))
		case types.Array:
			return types.ArrayOf(types.Merge(t.Elem, setPath(t.Elem, rest, v, decl)))
		case types.Object:
			// Any key may be the one written: every field may now hold the
			// new value, and a new key may appear.
			out := &types.Type{Kind: types.Object, Open: true}
			nv := setPath(types.OptionalOf(types.AnyType), rest, v, decl)
			for _, f := range t.Fields {
				out.Fields = append(out.Fields, types.Field{Name: f.Name, Type: types.Merge(f.Type, nv), Decl: f.Decl})
			}
			return out
		}
	}
	// A write through a scalar; the checker reported it before calling.
	return t
}

// removePath returns t with the value at segs made absent: its type is kept
// (as optional) so that later reads still type and hints still name it.
func removePath(t *types.Type, segs []seg) *types.Type {
	if len(segs) == 0 {
		return types.OptionalOf(t)
	}
	if t.IsInvalid() {
		return t
	}
	s, rest := segs[0], segs[1:]
	switch t.Kind {
	case types.Optional:
		return types.OptionalOf(removePath(t.Elem, segs))
	case types.Object:
		if s.kind == segField {
			if f, i := t.Field(s.name); i >= 0 {
				out := *t
				out.Fields = append([]types.Field(nil), t.Fields...)
				out.Fields[i].Type = removePath(f.Type, rest)
				return &out
			}
			return t
		}
		if s.kind == segDyn {
			out := *t
			out.Fields = nil
			for _, f := range t.Fields {
				f.Type = types.OptionalOf(f.Type)
				out.Fields = append(out.Fields, f)
			}
			return &out
		}
	case types.Map:
		if len(rest) > 0 {
			return types.MapOf(removePath(t.Elem, rest))
		}
	case types.Array:
		if len(rest) > 0 {
			return types.ArrayOf(removePath(t.Elem, rest))
		}
	}
	return t
}
