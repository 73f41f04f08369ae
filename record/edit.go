package record

import "unsafe"

// Edits. The first edit below a container copies it (and every container
// from the root down to it) into new arena nodes with spare room and marks
// the copy writable; later edits change the copy in place. Nodes made by
// decoding are never changed, which is what lets Discard restore them.
//
// Key order: a new key is appended at the end of its map; overwriting a key
// keeps its position; remove closes the gap; rename within the same map
// keeps the position when the new name is not taken, and otherwise behaves
// as remove then set; lift removes the lifted map, then upserts its keys
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

func (r *Record) put(s slot, v Value) {
	if s == rootSlot {
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
	w, n := width(v.kind), int(v.n())
	c := n + n/8 + 4
	first := a.alloc(w * c)
	copy(a.nodes[first:], a.nodes[int(v.off()):int(v.off())+w*n])
	v = Value{kind: v.kind, flags: flagWritable, ref: uint32(c), u: uint64(first)<<32 | uint64(n)}
	r.put(s, v)
	return v
}

func (a *Arena) newWritableMap() Value {
	const c = 4
	first := a.alloc(2 * c)
	return Value{kind: Map, flags: flagWritable, ref: c, u: uint64(first) << 32}
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
	r.put(s, Value{kind: Map, flags: flagWritable, ref: uint32(c), u: uint64(first)<<32 | uint64(n+1)})
	return first + 2*n + 1
}

// newKey copies the key of step s into the slab, as a map key.
func (a *Arena) newKey(s *Step) Value {
	k := a.NewStringFrom(s.key)
	k.sig = s.sig
	return k
}

// str views the bytes of a string value as a string.
func (a *Arena) str(v Value) string {
	off, n := int(v.off()), int(v.n())
	if n == 0 {
		return ""
	}
	buf := a.slab
	if v.ref != 0 {
		buf = a.bufs[v.ref-1]
	}
	return unsafe.String(&buf[off : off+n][0], n)
}

func normIndex(i, n int) (int, bool) {
	if i < 0 {
		i += n
	}
	return i, uint(i) < uint(n)
}

// checkSet reports whether set(p, ...) would succeed, without changing
// anything, so that a failing edit leaves the record untouched.
func (r *Record) checkSet(p Path) error {
	v := r.root
	for i := range p {
		s := &p[i]
		last := i == len(p)-1
		if s.isIndex {
			if v.kind != Array {
				return ErrNotContainer
			}
			j, ok := normIndex(s.index, int(v.n()))
			if !ok {
				return ErrIndexRange
			}
			if last {
				return nil
			}
			v = r.a.nodes[int(v.off())+j]
			continue
		}
		if v.kind == Absent || v.kind == Null {
			// Missing maps are created: the rest must be keys.
			for _, t := range p[i:] {
				if t.isIndex {
					return ErrIndexRange
				}
			}
			return nil
		}
		if v.kind != Map {
			return ErrNotContainer
		}
		if last {
			return nil
		}
		v, _ = r.a.lookup(v, s.key, s.sig)
	}
	return nil
}

// walk makes the containers along p writable, creating missing (or null)
// maps when create is set, and returns the slot of the container that the
// last step indexes. The caller has checked p with checkSet or Get.
func (r *Record) walk(p Path, create bool) slot {
	a := r.a
	r.deep = true
	s := rootSlot
	r.writableAt(s)
	for i := range p {
		st := &p[i]
		cur := r.at(s)
		var child slot
		if st.isIndex {
			j, _ := normIndex(st.index, int(cur.n()))
			child = int(cur.off()) + j
		} else {
			j := a.find(cur, st.key, st.sig)
			if j < 0 {
				if !create {
					return s
				}
				child = r.appendEntry(s, a.newKey(st), a.newWritableMap())
			} else {
				child = j + 1
			}
		}
		switch cv := a.nodes[child]; cv.kind {
		case Map, Array:
			r.writableAt(child)
		case Null, Absent:
			if create {
				a.nodes[child] = a.newWritableMap()
			}
		}
		s = child
	}
	return s
}

// Set sets the value at p (upsert), creating missing or null parent maps.
// The record stores a copy: later edits of v's source do not change it.
// Setting the root needs a map. Setting an Absent value removes p.
// On error the record is unchanged.
func (r *Record) Set(p Path, v Value) error {
	if v.kind == Absent {
		r.Remove(p)
		return nil
	}
	if v.IsContainer() && v.writable() {
		v = r.a.share(v)
	}
	return r.set(p, v)
}

func (r *Record) set(p Path, v Value) error {
	if v.IsContainer() && v.writable() {
		r.deep = true // a detached value (Rename) may keep its mark
	}
	if len(p) == 0 {
		if v.kind != Map {
			return ErrRootType
		}
		r.root = v
		return nil
	}
	if topKey(r, p) {
		r.setTop(&p[0], v)
		return nil
	}
	if err := r.checkSet(p); err != nil {
		return err
	}
	s := r.walk(p[:len(p)-1], true)
	last := &p[len(p)-1]
	parent := r.at(s)
	if last.isIndex {
		j, _ := normIndex(last.index, int(parent.n()))
		r.a.nodes[int(parent.off())+j] = v
		return nil
	}
	if j := r.a.find(parent, last.key, last.sig); j >= 0 {
		r.a.nodes[j+1] = v
		return nil
	}
	r.appendEntry(s, r.a.newKey(last), v)
	return nil
}

// topKey reports whether p is one key of the root map: the common edit,
// which needs neither checkSet nor walk.
func topKey(r *Record, p Path) bool {
	return len(p) == 1 && !p[0].isIndex && r.root.kind == Map
}

// setTop sets key st of the root map to v (already shared) in one scan.
func (r *Record) setTop(st *Step, v Value) {
	a := r.a
	root := r.writableAt(rootSlot)
	if j := a.find(root, st.key, st.sig); j >= 0 {
		a.nodes[j+1] = v
		return
	}
	r.appendEntry(rootSlot, a.newKey(st), v)
}

// SetIfAbsent sets p to v when p is absent or null and reports whether it did.
func (r *Record) SetIfAbsent(p Path, v Value) (bool, error) {
	if v.kind != Absent && topKey(r, p) {
		// One scan: look the key up, then change the copied root at the
		// same position (writableAt keeps the order of entries).
		a, st := r.a, &p[0]
		j := a.find(r.root, st.key, st.sig)
		if j >= 0 && a.nodes[j+1].kind != Null {
			return false, nil
		}
		if v.IsContainer() && v.writable() {
			v = a.share(v)
		}
		rel := j - int(r.root.off())
		root := r.writableAt(rootSlot)
		if j >= 0 {
			a.nodes[int(root.off())+rel+1] = v
		} else {
			r.appendEntry(rootSlot, a.newKey(st), v)
		}
		return true, nil
	}
	if cur, ok := r.Get(p); ok && cur.kind != Null {
		return false, nil
	}
	if err := r.Set(p, v); err != nil {
		return false, err
	}
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
		return v, true
	}
	if topKey(r, p) {
		a, st := r.a, &p[0]
		j := a.find(r.root, st.key, st.sig)
		if j < 0 {
			return Value{}, false
		}
		v := a.nodes[j+1]
		rel := j - int(r.root.off())
		root := r.writableAt(rootSlot)
		first, n := int(root.off()), int(root.n())
		copy(a.nodes[first+rel:], a.nodes[first+rel+2:first+2*n])
		root.u--
		r.root = root
		return v, true
	}
	v, ok := r.Get(p)
	if ok {
		r.remove(p)
	}
	return v, ok
}

// remove deletes p, which exists.
func (r *Record) remove(p Path) {
	a := r.a
	s := r.walk(p[:len(p)-1], false)
	parent := r.at(s)
	first, n := int(parent.off()), int(parent.n())
	last := &p[len(p)-1]
	if last.isIndex {
		j, _ := normIndex(last.index, n)
		copy(a.nodes[first+j:], a.nodes[first+j+1:first+n])
	} else {
		j := a.find(parent, last.key, last.sig)
		copy(a.nodes[j:], a.nodes[j+2:first+2*n])
	}
	parent.u--
	r.put(s, parent)
}

func samePath(p, q Path) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Rename moves the value at from to to, overwriting to; it is a no-op when
// from is absent. Both paths must end in a map key. On error the record is
// unchanged.
func (r *Record) Rename(from, to Path) error {
	if len(from) == 0 || len(to) == 0 || from[len(from)-1].isIndex || to[len(to)-1].isIndex {
		return ErrNotContainer
	}
	v, ok := r.Get(from)
	if !ok || samePath(from, to) {
		return nil
	}
	if err := r.checkSet(to); err != nil {
		return err
	}
	if samePath(from[:len(from)-1], to[:len(to)-1]) && !r.Exists(to) {
		// Same map, new name free: rename the key where it stands.
		s := r.walk(from[:len(from)-1], false)
		f := &from[len(from)-1]
		j := r.a.find(r.at(s), f.key, f.sig)
		r.a.nodes[j] = r.a.newKey(&to[len(to)-1])
		return nil
	}
	// v is detached by the remove, so it needs no copy.
	r.remove(from)
	return r.set(to, v)
}

// Lift moves each key k of the map at p to p's parent as prefix+k (keys
// already in the parent are overwritten where they stand, new ones are
// appended in the lifted map's order), and removes p. It is a no-op when p
// is absent or null; p must be a map inside a map. On error the record is
// unchanged.
func (r *Record) Lift(p Path, prefix []byte) error {
	v, ok := r.Get(p)
	if !ok || v.kind == Null {
		return nil
	}
	if len(p) == 0 || v.kind != Map || p[len(p)-1].isIndex {
		return ErrNotLiftable
	}
	a := r.a
	r.deep = true
	r.remove(p)
	s := r.walk(p[:len(p)-1], false)
	first, n := int(v.off()), int(v.n())
	for i := 0; i < n; i++ {
		k, val := a.nodes[first+2*i], a.nodes[first+2*i+1]
		if len(prefix) > 0 {
			off := len(a.slab)
			a.slab = append(a.slab, prefix...)
			a.slab = append(a.slab, a.raw(k)...)
			k = strValue(String, 0, uint32(off), uint32(len(a.slab)-off))
		}
		k.sig = keySig(a.raw(k))
		if j := a.find(r.at(s), a.str(k), k.sig); j >= 0 {
			a.nodes[j+1] = val
		} else {
			r.appendEntry(s, k, val)
		}
	}
	return nil
}
