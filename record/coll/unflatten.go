// Package coll holds the algorithms over maps and arrays of built-ins that
// both backends run on arena values (unflatten, unique, includes): the VM on
// the record's arena, the Lua backend's Go helpers on a scratch arena.
package coll

import (
	"strings"

	"github.com/policyrun/policyrun/record"
)

// Unflattener runs unflatten. It keeps its scratch space from call to
// call, so that a reused one allocates nothing once it has grown; it is
// not safe for concurrent use.
type Unflattener struct {
	nodes []node
	index map[childKey]int32
	uids  int32
}

// node is a key of the map being built: a leaf holding a value, or a map
// whose keys are its children, in order.
type node struct {
	key               string
	keyV              record.Value // key as an arena string, when it is one already
	val               record.Value // a leaf's value
	isMap             bool
	uid               int32 // new when the node is replaced: its old children are gone
	first, last, next int32 // children and siblings, -1 for none
	n                 int
}

type childKey struct {
	uid int32
	key string
}

// Unflatten returns the map m of arena a with each key split on sep into a
// path of nested maps, in key order: a key whose path runs into a value
// that is not a map replaces that value with a map, a key that names a map
// already built replaces it with its value (later keys win, in the place
// of the first), and a path that runs into a map value of m goes on into
// its keys. An empty sep splits nothing.
func (u *Unflattener) Unflatten(a *record.Arena, m record.Value, sep string) record.Value {
	u.nodes = u.nodes[:0]
	if u.index == nil {
		u.index = map[childKey]int32{}
	}
	clear(u.index)
	root := u.add(-1, "", record.Value{})
	u.nodes[root].isMap = true
	for it := a.Iter(m); it.Next(); {
		k, kv := a.Str(it.Key()), it.Key()
		cur := root
		if sep != "" {
			for {
				i := strings.Index(k, sep)
				if i < 0 {
					break
				}
				cur = u.descend(a, cur, k[:i])
				k, kv = k[i+len(sep):], record.Value{}
			}
		}
		u.setLeaf(cur, k, kv, it.Value())
	}
	return u.build(a, root)
}

// add adds a leaf child key of parent (-1: none) and returns it.
func (u *Unflattener) add(parent int32, key string, keyV record.Value) int32 {
	u.uids++
	c := int32(len(u.nodes))
	u.nodes = append(u.nodes, node{key: key, keyV: keyV, uid: u.uids, first: -1, last: -1, next: -1})
	if parent >= 0 {
		p := &u.nodes[parent]
		if p.last >= 0 {
			u.nodes[p.last].next = c
		} else {
			p.first = c
		}
		p.last = c
		p.n++
		u.index[childKey{p.uid, key}] = c
	}
	return c
}

func (u *Unflattener) child(parent int32, key string) int32 {
	if c, ok := u.index[childKey{u.nodes[parent].uid, key}]; ok {
		return c
	}
	return -1
}

// reset empties node c: its children are forgotten.
func (u *Unflattener) reset(c int32) {
	u.uids++
	n := &u.nodes[c]
	n.uid, n.first, n.last, n.n, n.isMap, n.val = u.uids, -1, -1, 0, false, record.Value{}
}

// descend returns the map child key of parent, making it one.
func (u *Unflattener) descend(a *record.Arena, parent int32, key string) int32 {
	c := u.child(parent, key)
	if c < 0 {
		c = u.add(parent, key, record.Value{})
		u.nodes[c].isMap = true
		return c
	}
	if u.nodes[c].isMap {
		return c
	}
	v := u.nodes[c].val
	u.reset(c)
	u.nodes[c].isMap = true
	if v.Kind() == record.Map {
		for it := a.Iter(v); it.Next(); {
			u.setLeaf(c, a.Str(it.Key()), it.Key(), it.Value())
		}
	}
	return c
}

// setLeaf sets the child key of parent to the value v.
func (u *Unflattener) setLeaf(parent int32, key string, keyV, v record.Value) {
	c := u.child(parent, key)
	if c < 0 {
		c = u.add(parent, key, keyV)
	} else {
		u.reset(c)
	}
	u.nodes[c].val = v
}

func (u *Unflattener) build(a *record.Arena, c int32) record.Value {
	n := u.nodes[c]
	if !n.isMap {
		return n.val
	}
	b := a.BeginMap(n.n)
	for ch := n.first; ch >= 0; ch = u.nodes[ch].next {
		k := u.nodes[ch].keyV
		if k.Kind() != record.String {
			k = a.NewStringFrom(u.nodes[ch].key)
		}
		b.Add(k, u.build(a, ch))
	}
	return b.Finish()
}
