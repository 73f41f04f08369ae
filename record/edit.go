package record

import "unsafe"

// Edits. The first edit below a container copies it (and every container
// from the root down to it) into new arena nodes with spare room and marks
// the copy writable; later edits change the copy in place. Nodes made by
// decoding are never changed, which is what lets Discard restore them.
//
// Key order: a new key is appended at the end of its map; overwriting a key
// keeps its position; remove closes the gap; a rename is a take then a set
// (MoveTop does both in one step), so the key goes to the end; lift removes the lifted map, then upserts its keys
// into the parent in their order (new ones at the end).

// slot names a place holding a value: a node index, or -1 for the root.
type slot = int

const rootSlot slot = -1

func (r *Record) at(s slot) Value {
	if s == rootSlot {
		return r.root
	}
	return r.a.nodes[s]
}

// put stores v in s. A new root here is the old one copied, grown or
// shortened, so the root's key filter carries over.
func (r *Record) put(s slot, v Value) {
	if s == rootSlot {
		if r.ext != 0 {
			if t := r.ts(); t.keysAt == r.root.off()+1 {
				t.keysAt = v.off() + 1
			}
		}
		r.root = v
	} else {
		r.a.nodes[s] = v
	}
}

// writableAt makes the container in s writable, copying it with spare room.
func (r *Record) writableAt(s slot) Value {
	v := r.at(s)
	if v.writable() {
		return v
	}
	a := r.a
	w, n := width(v.kind()), int(v.n())
	c := n + n/8 + 4
	first := a.alloc(w * c)
	copy(a.nodes[first:], a.nodes[int(v.off()):int(v.off())+w*n])
	v = Value{h: uint32(v.kind()) | flagWritable, ref: uint32(c), u: uint64(first)<<32 | uint64(n)}
	r.put(s, v)
	return v
}

// writableRootWithout makes the root map writable, as writableAt does,
// leaving out the entry at node rel (relative to the map's first node).
func (r *Record) writableRootWithout(rel int) {
	a := r.a
	v := r.root
	n := int(v.n())
	c := n + n/8 + 4
	first := a.alloc(2 * c) // may move a.nodes: slice it after
	src := a.nodes[int(v.off()) : int(v.off())+2*n]
	copy(a.nodes[first:], src[:rel])
	copy(a.nodes[first+rel:], src[rel+2:])
	r.noteRemoved(rel / 2)
	r.put(rootSlot, Value{h: uint32(Map) | flagWritable, ref: uint32(c), u: uint64(first)<<32 | uint64(n-1)})
}

func (a *Arena) newWritableMap() Value {
	const c = 4
	first := a.alloc(2 * c)
	return Value{h: uint32(Map) | flagWritable, ref: c, u: uint64(first) << 32}
}

// appendEntry appends an entry to the writable map in s, growing it when it
// is full, and returns the node index of the new value.
func (r *Record) appendEntry(s slot, key, val Value) int {
	a := r.a
	m := r.at(s)
	first, n, c := int(m.off()), int(m.n()), int(m.ref)
	if n == c {
		nc := 2*c + 4
		if first+2*c == len(a.nodes) {
			a.alloc(2 * (nc - c))
		} else {
			nf := a.alloc(2 * nc)
			copy(a.nodes[nf:], a.nodes[first:first+2*n])
			first = nf
		}
		c = nc
	}
	a.nodes[first+2*n] = key
	a.nodes[first+2*n+1] = val
	r.put(s, Value{h: uint32(Map) | flagWritable, ref: uint32(c), u: uint64(first)<<32 | uint64(n+1)})
	if s == rootSlot {
		r.addRootKey(key)
	}
	return first + 2*n + 1
}

// newKey copies the key of step s into the slab, as a map key, or returns
// the copy its memo holds of this arena's generation.
func (a *Arena) newKey(s *Step) Value {
	mo := s.memo
	if k, ok := mo.keyIn(a); ok {
		return k
	}
	var k Value
	if s.plain {
		k = a.newFramed(`,"`, s.key, `":`, flagPlain|flagQuoted|flagFramed)
	} else {
		k = a.newStr(s.key, false)
	}
	k.setSig(s.sig)
	if mo != nil {
		mo.key, mo.a, mo.gen = k, a, a.gen
	}
	return k
}

// str views the bytes of a string value as a string.
func (a *Arena) str(v Value) string {
	off, n := int(v.off()), int(v.n())
	buf := a.slab
	if v.ref != 0 {
		buf = a.bufs[v.ref-1]
	}
	return unsafe.String(unsafe.SliceData(buf[off:off+n]), n)
}

func normIndex(i, n int) (int, bool) {
	if i < 0 {
		i += n
	}
	return i, uint(i) < uint(n)
}

// Nested edits find their path once. locate and locateSet descend the
// record read-only and note, for each step, the position of its entry or
// element in the container it indexes (-1: missing, to be created); open
// then makes the containers along the path writable by those positions.
// A writable copy keeps the order of its entries, so no key is looked up
// twice, and a failing edit (found by locateSet) has changed nothing.

// locs returns the arena's scratch for the positions of n steps.
func (a *Arena) locs(n int) []int32 {
	if cap(a.locBuf) < n {
		a.locBuf = make([]int32, 2*n)
	}
	return a.locBuf[:n]
}

// step finds step i of a path, s, in the container v: the position of its
// map entry or array element and the value there; position -1 when a key
// is missing; an error when v cannot hold the step.
func (r *Record) step(i int, v Value, s *Step) (int, Value, error) {
	if s.isIndex {
		if v.kind() != Array {
			return -1, Value{}, ErrNotContainer
		}
		j, ok := normIndex(s.index, int(v.n()))
		if !ok {
			return -1, Value{}, ErrIndexRange
		}
		return j, r.a.nodes[int(v.off())+j], nil
	}
	if v.kind() != Map {
		return -1, Value{}, ErrNotContainer
	}
	j := r.findIn(i, v, s)
	if j < 0 {
		return -1, Value{}, nil
	}
	return (j - int(v.off())) / 2, r.a.nodes[j+1], nil
}

// locate finds p, noting positions in l, and returns the value at p and
// whether p exists.
func (r *Record) locate(p Path, l []int32) (Value, bool) {
	v := r.root
	for i := range p {
		j, child, err := r.step(i, v, &p[i])
		if err != nil || j < 0 {
			return Value{}, false
		}
		l[i], v = int32(j), child
	}
	return v, true
}

// locateSet finds p for a set, noting positions in l, and reports whether
// the set can succeed. It returns the value at p (Absent when missing).
func (r *Record) locateSet(p Path, l []int32) (Value, error) {
	v := r.root
	i := 0
	for ; i < len(p); i++ {
		if v.kind() == Absent || v.kind() == Null {
			break // created from here
		}
		j, child, err := r.step(i, v, &p[i])
		if err != nil {
			return Value{}, err
		}
		l[i], v = int32(j), child
		if j < 0 {
			i++
			break
		}
	}
	if i < len(p) {
		v = Value{}
	}
	// Missing maps are created: the rest must be keys.
	for ; i < len(p); i++ {
		if p[i].isIndex {
			return Value{}, ErrIndexRange
		}
		l[i] = -1
	}
	return v, nil
}

// open makes the containers along p[:n] writable, following the positions
// l of locate or locateSet and creating missing or null maps, and returns
// the slot of the container that step n indexes.
func (r *Record) open(p Path, l []int32, n int) slot {
	a := r.a
	if n > 0 {
		r.flags |= recDeep
	}
	s := rootSlot
	r.writableAt(s)
	for i := range n {
		if l[i] < 0 {
			s = r.appendEntry(s, a.newKey(&p[i]), a.newWritableMap())
			continue
		}
		cur := r.at(s)
		child := int(cur.off()) + int(l[i])
		if cur.kind() == Map {
			child += int(l[i]) + 1
		}
		if s == rootSlot {
			r.noteChanged(int(l[i]))
		}
		switch cv := a.nodes[child]; cv.kind() {
		case Map, Array:
			r.writableAt(child)
		case Null, Absent:
			a.nodes[child] = a.newWritableMap()
		}
		s = child
	}
	return s
}

// setAt stores v at p, located by locateSet into l.
func (r *Record) setAt(p Path, l []int32, v Value) {
	last := len(p) - 1
	s := r.open(p, l, last)
	parent := r.at(s)
	switch j := int(l[last]); {
	case j < 0:
		r.appendEntry(s, r.a.newKey(&p[last]), v)
	case parent.kind() == Array:
		r.a.nodes[int(parent.off())+j] = v
	default:
		r.a.nodes[int(parent.off())+2*j+1] = v
		if s == rootSlot {
			r.noteChanged(j)
		}
	}
}

// removeAt deletes p, located by locate into l (so it exists).
func (r *Record) removeAt(p Path, l []int32) {
	a := r.a
	last := len(p) - 1
	s := r.open(p, l, last)
	parent := r.at(s)
	first, n, j := int(parent.off()), int(parent.n()), int(l[last])
	if parent.kind() == Array {
		copy(a.nodes[first+j:], a.nodes[first+j+1:first+n])
	} else {
		copy(a.nodes[first+2*j:], a.nodes[first+2*j+2:first+2*n])
		if s == rootSlot {
			r.noteRemoved(j)
		}
	}
	parent.u--
	r.put(s, parent)
}

// Set sets the value at p (upsert), creating missing or null parent maps.
// The record stores a copy: later edits of v's source do not change it.
// Setting the root needs a map. Setting an Absent value removes p.
// On error the record is unchanged.
func (r *Record) Set(p Path, v Value) error {
	// The common edit, a scalar or string into one key of the root map
	// (always a map), first and small enough for callers to inline.
	if len(p) == 1 && !p[0].isIndex && v.h&0xff > uint32(Absent) && !v.writable() {
		r.setTop(&p[0], v)
		return nil
	}
	return r.setAny(p, v)
}

func (r *Record) setAny(p Path, v Value) error {
	if v.kind() == Absent {
		r.Remove(p)
		return nil
	}
	if v.isContainer() && v.writable() {
		v = r.a.share(v)
	}
	return r.set(p, v)
}

func (r *Record) set(p Path, v Value) error {
	if v.isContainer() && v.writable() {
		r.flags |= recDeep // a detached value (rename) may keep its mark
	}
	if len(p) == 0 {
		if v.kind() != Map {
			return ErrRootType
		}
		r.root = v
		r.forgetRoot()
		return nil
	}
	if topKey(r, p) {
		r.setTop(&p[0], v)
		return nil
	}
	l := r.a.locs(len(p))
	if _, err := r.locateSet(p, l); err != nil {
		return err
	}
	r.setAt(p, l, v)
	return nil
}

// topKey reports whether p is one key of the root map: the common edit,
// which needs neither checkSet nor walk.
func topKey(r *Record, p Path) bool {
	return len(p) == 1 && !p[0].isIndex && r.root.kind() == Map
}

// setTop sets key st of the root map to v (already shared) in one scan.
func (r *Record) setTop(st *Step, v Value) {
	a := r.a
	root := r.root
	if !root.writable() {
		root = r.writableAt(rootSlot)
	}
	if j := r.findRootStep(st); j >= 0 {
		a.nodes[j+1] = v
		r.noteChanged((j - int(root.off())) / 2)
		return
	}
	r.appendTop(root, st, v)
}

// appendTop appends key st, missing from the writable root, with v.
func (r *Record) appendTop(root Value, st *Step, v Value) {
	a := r.a
	first, n := int(root.off()), int(root.n())
	k, ok := st.memo.keyIn(a)
	if n == int(root.ref) || !ok {
		r.appendEntry(rootSlot, a.newKey(st), v)
		return
	}
	// appendEntry of the key newKey keeps, written out: the common edit
	// adds a key of the policy's to a root copied with room for it.
	a.nodes[first+2*n+1] = v
	a.nodes[first+2*n] = k
	r.root.u++
	if r.ext != 0 {
		if t := r.ts(); t.keysAt == uint32(first)+1 {
			t.keys.add(k.sig())
		}
	}
}

// SetIfAbsent sets p to v when p is absent or null and reports whether it did.
func (r *Record) SetIfAbsent(p Path, v Value) (bool, error) {
	if v.kind() != Absent && topKey(r, p) {
		// One scan: look the key up, then change the copied root at the
		// same position (writableAt keeps the order of entries).
		a, st := r.a, &p[0]
		j := r.findRootStep(st)
		if j >= 0 && a.nodes[j+1].kind() != Null {
			return false, nil
		}
		if v.isContainer() && v.writable() {
			v = a.share(v)
		}
		rel := j - int(r.root.off())
		root := r.root
		if !root.writable() {
			root = r.writableAt(rootSlot)
		}
		if j >= 0 {
			a.nodes[int(root.off())+rel+1] = v
			r.noteChanged(rel / 2)
		} else {
			r.appendTop(root, st, v)
		}
		return true, nil
	}
	if v.kind() == Absent || len(p) == 0 {
		if cur, ok := r.Get(p); ok && cur.kind() != Null {
			return false, nil
		}
		return true, r.Set(p, v)
	}
	l := r.a.locs(len(p))
	cur, err := r.locateSet(p, l)
	if cur.kind() != Absent && cur.kind() != Null {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if v.isContainer() && v.writable() {
		v = r.a.share(v)
	}
	r.setAt(p, l, v)
	return true, nil
}

// Remove deletes p; an absent p is not an error. Removing an array element
// shifts the rest down. Removing the root empties the record.
func (r *Record) Remove(p Path) { r.Take(p) }

// Take removes p, as Remove, and returns the value it held and whether p
// existed. The value is detached from the record.
func (r *Record) Take(p Path) (Value, bool) {
	if len(p) == 0 {
		v := r.root
		r.root = r.a.newWritableMap()
		r.forgetRoot()
		return v, true
	}
	if topKey(r, p) {
		a, st := r.a, &p[0]
		j := r.findRootStep(st)
		if j < 0 {
			return Value{}, false
		}
		v := a.nodes[j+1]
		rel := j - int(r.root.off())
		if !r.root.writable() {
			// The first edit: copy the root without the entry rather
			// than copy it whole and then close the gap.
			r.writableRootWithout(rel)
			return v, true
		}
		root := r.root
		first, n := int(root.off()), int(root.n())
		copy(a.nodes[first+rel:], a.nodes[first+rel+2:first+2*n])
		r.noteRemoved(rel / 2)
		root.u--
		r.root = root
		return v, true
	}
	l := r.a.locs(len(p))
	v, ok := r.locate(p, l)
	if ok {
		r.removeAt(p, l)
	}
	return v, ok
}

// MoveTop moves root key from, when it is there, to the end of the root
// under the name to: Take(from), then Set(to, v), in one step, when it
// can be one — the root is a writable copy already, to is known missing
// from it, and the copy of the key to that its memo keeps is at hand. It
// reports false when it did nothing; then the two edits do it.
func (r *Record) MoveTop(from, to *Step) bool {
	a, root := r.a, r.root
	key, ok := to.memo.keyIn(a)
	if !ok || !root.writable() || r.ext == 0 {
		return false
	}
	t := r.ts()
	if t.keysAt != root.off()+1 || t.keys.has(to.sig) {
		return false
	}
	j := r.findRootStep(from)
	if j < 0 {
		return true // nothing to move
	}
	first, n := int(root.off()), int(root.n())
	v := a.nodes[j+1]
	if v.isContainer() && v.writable() {
		r.flags |= recDeep
	}
	// The entries after from move up one; it goes last, renamed.
	tail := a.nodes[j : first+2*n]
	copy(tail, tail[2:])
	tail[len(tail)-2], tail[len(tail)-1] = key, v
	r.noteRemoved((j - first) / 2)
	t.keys.add(key.sig())
	return true
}

// Lift moves each key k of the map at p to p's parent as prefix+k (keys
// already in the parent are overwritten where they stand, new ones are
// appended in the lifted map's order), and removes p. It is a no-op when p
// is absent or null; p must be a map inside a map. On error the record is
// unchanged.
func (r *Record) Lift(p Path, prefix []byte) error {
	if len(p) == 0 {
		if r.root.kind() == Map {
			return ErrNotLiftable
		}
		return nil
	}
	a := r.a
	l := a.locs(len(p))
	v, ok := r.locate(p, l)
	if !ok || v.kind() == Null {
		return nil
	}
	if v.kind() != Map || p[len(p)-1].isIndex {
		return ErrNotLiftable
	}
	r.flags |= recDeep
	// Removing p changes only its parent, so the parent's slot from open
	// stays valid.
	r.removeAt(p, l)
	s := r.open(p, l, len(p)-1)
	first, n := int(v.off()), int(v.n())
	for i := 0; i < n; i++ {
		k, val := a.nodes[first+2*i], a.nodes[first+2*i+1]
		if len(prefix) > 0 {
			off := len(a.slab)
			a.slab = append(a.slab, prefix...)
			a.slab = append(a.slab, a.raw(k)...)
			k = strValue(String, 0, uint32(off), uint32(len(a.slab)-off))
		}
		k.setSig(keySig(a.raw(k)))
		var j int
		if s == rootSlot {
			j = r.findRoot(a.str(k), k.sig())
		} else {
			j = a.find(r.at(s), a.str(k), k.sig())
		}
		if j >= 0 {
			a.nodes[j+1] = val
			if s == rootSlot {
				r.noteChanged((j - int(r.root.off())) / 2)
			}
		} else {
			r.appendEntry(s, k, val)
		}
	}
	return nil
}
