package policyrunprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// edits is a block of unconditional writes of constants — `set K = lit`
// and `remove K`, K an attribute or a body-map key, each key written once
// — run without the statement walk and the action list: B7's edit and
// add_attribute, and the body of a gated if (read5_edit). It looks at
// every key first and gives up, having written nothing, where deciding
// would (a body that is neither a map nor absent under a set, a map, an
// array or bytes at a key written); then writes as apply does: values
// found in place, the removals, the new keys with the map grown once.
type edits struct {
	ops []editOp
	// setsBody: some op sets a body key (a body that is not a map then
	// gives up, or is made one); onBody: some op is on the body at all.
	setsBody, onBody bool
	// newAttrs, newBody are the keys the sets may add to each map.
	newAttrs, newBody int
}

type editOp struct {
	loc    ploc
	remove bool
	v      pval // a set's value; never absent (an absent literal removes)
}

// maxEdits bounds an edits block, so that what it finds is held on the
// stack: a longer block is decided as any other.
const maxEdits = 8

// compileEdits returns stmts as an edits block, nil when they are not one.
func compileEdits(stmts []pstmt) *edits {
	e := &edits{}
	seen := map[ploc]bool{}
	add := func(l ploc, remove bool, v pval) bool {
		if seen[l] || len(e.ops) == maxEdits {
			return false
		}
		seen[l] = true
		e.ops = append(e.ops, editOp{loc: l, remove: remove, v: v})
		if l.w == wBody {
			e.onBody = true
			e.setsBody = e.setsBody || !remove
		}
		if !remove {
			if l.w == wBody {
				e.newBody++
			} else {
				e.newAttrs++
			}
		}
		return true
	}
	for i := range stmts {
		st := &stmts[i]
		switch st.kind {
		case sSet:
			if st.value.op != eLit || !add(st.targets[0], st.value.lit.k == vAbsent, st.value.lit) {
				return nil
			}
		case sRemove:
			for _, t := range st.targets {
				if !add(t, true, pval{}) {
					return nil
				}
			}
		default:
			return nil
		}
	}
	if len(e.ops) == 0 {
		return nil
	}
	return e
}

// A key's state while edits run.
const (
	keyAbsent uint8 = iota
	keyPresent
	keyDone // set in place
)

// run makes e's edits on the record of s, or gives up (false) having
// written nothing.
func (e *edits) run(s *src) bool {
	var held [maxEdits]pcommon.Value
	var state [maxEdits]uint8
	attrs := s.lr.Attributes()
	var body pcommon.Map
	bodyMap := false
	if e.onBody {
		switch b := s.lr.Body(); b.Type() {
		case pcommon.ValueTypeMap:
			body, bodyMap = b.Map(), true
		case pcommon.ValueTypeEmpty:
		default:
			if e.setsBody {
				return false // path_conflict: the general path faults
			}
		}
	}
	for i := range e.ops {
		op := &e.ops[i]
		m := attrs
		if op.loc.w == wBody {
			if !bodyMap {
				continue // absent: a removal has nothing to do, a set adds
			}
			m = body
		}
		v, ok := m.Get(op.loc.key)
		if !ok {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeMap, pcommon.ValueTypeSlice, pcommon.ValueTypeBytes:
			return false // the general path may refuse to read it
		}
		held[i], state[i] = v, keyPresent
	}
	// Values in place first, while no removal has moved a map's entries.
	newAttrs, newBody := 0, 0
	for i := range e.ops {
		switch op := &e.ops[i]; {
		case op.remove:
		case state[i] == keyPresent && op.v.k != vNull:
			setValue(held[i], op.v)
			state[i] = keyDone
		case op.loc.w == wBody:
			newBody++
		default:
			newAttrs++
		}
	}
	for i := range e.ops {
		if op := &e.ops[i]; op.remove && state[i] == keyPresent {
			e.mapOf(op, attrs, body).Remove(op.loc.key)
		}
	}
	if newAttrs > 0 {
		attrs.EnsureCapacity(attrs.Len() + newAttrs)
	}
	if newBody > 0 {
		if !bodyMap {
			body = s.lr.Body().SetEmptyMap()
		}
		body.EnsureCapacity(body.Len() + newBody)
	}
	for i := range e.ops {
		if op := &e.ops[i]; !op.remove && state[i] != keyDone {
			putValue(e.mapOf(op, attrs, body), op.loc.key, op.v)
		}
	}
	return true
}

func (e *edits) mapOf(op *editOp, attrs, body pcommon.Map) pcommon.Map {
	if op.loc.w == wBody {
		return body
	}
	return attrs
}
