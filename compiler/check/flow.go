package check

import (
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/internal/pmap"
	"github.com/policyrun/policyrun/policy"
)

// state is what the checker knows at one point of the policy: the record's
// type as the schema and the writes so far have made it, and the facts that
// narrowing tests proved. Writes change root (flow typing); a fact narrows
// one path (P != null, is_string(P), and the paths above P for exists(P))
// until something writes it. Types and facts are persistent, so a state is
// copied in O(1) and two states are merged in what their branches changed.
type state struct {
	root *types.Type
	// facts maps a path (see pathNode) to what narrowing proved there.
	facts pmap.Map[*pathNode, *types.Type]
	// present holds the optional paths that exists(P) proved present: P
	// may still hold null, so its type stays optional, and a use of it as
	// a plain value gets the hint to test P != null instead.
	present pmap.Map[*pathNode, bool]
	// dead is set after an unconditional drop or stop: nothing below runs.
	dead    bool
	deadWhy string // "drop at line 4", for the unreachable-code label
}

func (s *state) clone() *state {
	c := *s
	return &c
}

// fact returns the type proved for the path n, or nil.
func (s *state) fact(n *pathNode) *types.Type {
	if n == nil {
		return nil
	}
	t, _ := s.facts.Get(n)
	return t
}

// setFact records that the path n has type t (nothing when n is nil: a
// path through a dynamic step cannot be narrowed).
func (s *state) setFact(n *pathNode, t *types.Type) {
	if n == nil {
		return
	}
	s.facts = s.facts.Set(n, t)
	n.markFactBelow()
}

// isPresent reports whether exists() proved the path n present.
func (s *state) isPresent(n *pathNode) bool {
	if n == nil {
		return false
	}
	_, ok := s.present.Get(n)
	return ok
}

// setPresent records that exists() proved the path n present.
func (s *state) setPresent(n *pathNode) {
	if n == nil {
		return
	}
	s.present = s.present.Set(n, true)
	n.markFactBelow()
}

func (n *pathNode) markFactBelow() {
	for a := n.parent; a != nil && !a.factBelow; a = a.parent {
		a.factBelow = true
	}
}

// effective computes the types paths have in one state: their fact, or the
// type the record (or local) has there, remembered along the way so that
// many paths of one long path cost its length once.
type effective struct {
	s    *state
	memo map[*pathNode]*types.Type
}

func (e *effective) of(n *pathNode) *types.Type {
	var down []*pathNode
	var t *types.Type
	for m := n; ; m = m.parent {
		if mt, ok := e.memo[m]; ok {
			t = mt
			break
		}
		if ft := e.s.fact(m); ft != nil {
			t = ft
			break
		}
		if m.parent == nil {
			t = e.s.root
			if m.local != nil {
				t = m.local.Type
			}
			break
		}
		down = append(down, m)
	}
	for i := len(down) - 1; i >= 0; i-- {
		t = quietMember(t, down[i].seg)
		e.memo[down[i]] = t
	}
	return t
}

// follow walks p from t, the type of its base: each step takes member's
// type of the step, or the fact proved for the path so far.
func (s *state) follow(t *types.Type, p path, member func(*types.Type, seg) *types.Type) *types.Type {
	if ft := s.fact(p.node(0)); ft != nil {
		t = ft
	}
	for i, sg := range p.segs {
		t = member(t, sg)
		if ft := s.fact(p.node(i + 1)); ft != nil {
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
		return &state{root: a.root, facts: a.facts, present: a.present, dead: true, deadWhy: "every branch above ends with drop or stop"}
	case a.dead:
		return b.clone()
	case b.dead:
		return a.clone()
	}
	// A path narrowed in one branch only keeps what both branches give it:
	// after `if !exists(.x) { set .x = "d" }`, .x is a string in both.
	// Facts the branches share as they are stay as they are.
	out := &state{root: types.Merge(a.root, b.root), facts: a.facts}
	ea := effective{s: a, memo: map[*pathNode]*types.Type{}}
	eb := effective{s: b, memo: map[*pathNode]*types.Type{}}
	pmap.Diff(a.facts, b.facts, func(n *pathNode, at *types.Type, aok bool, bt *types.Type, bok bool) {
		if !aok {
			at = ea.of(n)
		}
		if !bok {
			bt = eb.of(n)
		}
		out.facts = out.facts.Set(n, types.Merge(at, bt))
	})
	// A path is present where both branches proved it.
	out.present = a.present
	pmap.Diff(a.present, b.present, func(n *pathNode, _ bool, aok bool, _ bool, bok bool) {
		if !aok || !bok {
			out.present = out.present.Delete(n)
		}
	})
	return out
}

func sameState(a, b *state) bool {
	if a.dead != b.dead || !types.Identical(a.root, b.root) || a.facts.Len() != b.facts.Len() || a.present.Len() != b.present.Len() {
		return false
	}
	same := true
	pmap.Diff(a.facts, b.facts, func(_ *pathNode, at *types.Type, aok bool, bt *types.Type, bok bool) {
		same = same && aok && bok && types.Identical(at, bt)
	})
	pmap.Diff(a.present, b.present, func(_ *pathNode, _ bool, aok bool, _ bool, bok bool) {
		same = same && aok && bok
	})
	return same
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
	// pn[i] is the path of the first i steps, nil from the first dynamic
	// step on (see withNodes).
	pn []*pathNode
}

// A pathNode is a path of constant steps from the record or a local,
// interned by the checker: one node per path, whose parent is the path one
// step shorter. Facts are keyed by node, a step costs O(1), and the paths a
// path lies under are its node's ancestors.
type pathNode struct {
	parent *pathNode
	seg    seg    // the last step (none for a base)
	local  *Local // the base: nil for the record
	depth  int    // the number of steps
	id     uint64
	// factBelow is set once a fact was recorded (in any state) for a path
	// under this one; read once the policy read this path or one under it.
	factBelow, read bool
}

// Hash mixes the id.
func (n *pathNode) Hash() uint64 { return pmap.MixID(n.id) }

// under reports whether n is a or lies under a.
func (n *pathNode) under(a *pathNode) bool {
	for n != nil && n.depth > a.depth {
		n = n.parent
	}
	return n == a
}

// markRead records that the policy reads the path n.
func (n *pathNode) markRead() {
	for a := n; a != nil && !a.read; a = a.parent {
		a.read = true
	}
}

type childKey struct {
	parent *pathNode
	seg    seg
}

func (c *checker) newPathNode(parent *pathNode, s seg, l *Local) *pathNode {
	c.pathIDs++
	n := &pathNode{parent: parent, seg: s, local: l, id: c.pathIDs}
	if parent != nil {
		n.depth = parent.depth + 1
	}
	return n
}

// child returns the path n followed by the step s, or nil for a dynamic
// step (or a nil n).
func (c *checker) child(n *pathNode, s seg) *pathNode {
	if n == nil || s.kind == segDyn {
		return nil
	}
	k := childKey{n, s}
	if m := c.paths[k]; m != nil {
		return m
	}
	m := c.newPathNode(n, s, n.local)
	c.paths[k] = m
	return m
}

// withNodes returns p with its pathNodes.
func (c *checker) withNodes(p path) path {
	if len(p.pn) == len(p.segs)+1 {
		return p
	}
	p.pn = make([]*pathNode, len(p.segs)+1)
	switch {
	case p.root:
		p.pn[0] = c.record
	case p.local != nil:
		p.pn[0] = p.local.path
	}
	for i, s := range p.segs {
		p.pn[i+1] = c.child(p.pn[i], s)
	}
	return p
}

// node is the path of the first n steps of p, or nil when a dynamic step
// comes first or p is metadata.
func (p path) node(n int) *pathNode {
	if len(p.pn) != len(p.segs)+1 {
		panic("check: path without its nodes")
	}
	return p.pn[n]
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
	if ok {
		p = c.withNodes(p)
	}
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

// constLen is the number of leading steps of p that are constant.
func (p path) constLen() int {
	for i, s := range p.segs {
		if s.kind == segDyn {
			return i
		}
	}
	return len(p.segs)
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
	for _, s := range p.segs {
		if s.kind == segField {
			c.typos.add(s.name)
		}
	}
	n := p.constLen()
	k := p.node(n)
	// The paths above the written one (k too, when dynamic steps follow
	// it): apply the same edit to their narrowed types.
	above := k.parent
	if n < len(p.segs) {
		above = k
	}
	for a := above; a != nil; a = a.parent {
		if ft := st.fact(a); ft != nil {
			st.facts = st.facts.Set(a, edit(ft, p.segs[a.depth:]))
		}
	}
	// The path itself and everything under it were replaced. (The paths
	// above stay present: a set creates its parents, a remove keeps them.)
	if n == len(p.segs) {
		st.facts = st.facts.Delete(k)
		st.present = st.present.Delete(k)
	}
	if k.factBelow {
		var under, gone []*pathNode
		st.facts.All(func(f *pathNode, _ *types.Type) bool {
			if f != k && f.under(k) {
				under = append(under, f)
			}
			return true
		})
		st.present.All(func(f *pathNode, _ bool) bool {
			if f != k && f.under(k) {
				gone = append(gone, f)
			}
			return true
		})
		for _, f := range under {
			st.facts = st.facts.Delete(f)
		}
		for _, f := range gone {
			st.present = st.present.Delete(f)
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
			if f, found := t.Field(s.name); found {
				f.Type = setPath(f.Type, rest, v, decl)
				if len(rest) == 0 {
					f.Decl = decl
				}
				return t.WithField(f)
			}
			child := types.NullType
			if t.Open {
				child = types.OptionalOf(types.AnyType)
			}
			return t.WithField(types.Field{Name: s.name, Type: setPath(child, rest, v, decl), Decl: decl})
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
			nv := setPath(types.OptionalOf(types.AnyType), rest, v, decl)
			out := t.WithFieldTypes(func(f types.Field) *types.Type { return types.Merge(f.Type, nv) })
			out.Open = true
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
			if f, found := t.Field(s.name); found {
				f.Type = removePath(f.Type, rest)
				return t.WithField(f)
			}
			return t
		}
		if s.kind == segDyn {
			return t.WithFieldTypes(func(f types.Field) *types.Type { return types.OptionalOf(f.Type) })
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
