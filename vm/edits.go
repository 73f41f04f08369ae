package vm

import (
	"github.com/policyrun/policyrun/record"
)

// Edit is how runs changed a record at one path of a write set.
type Edit struct {
	Path record.Path
	// Value is the value at Path after the runs: Absent when they removed
	// it (or a map on the way to it).
	Value record.Value
	// Write is the index of Path in the write set, for embedders that
	// prepared something per path.
	Write int
	// Added says that the path held nothing before the runs.
	Added bool
}

// A Differ tells what runs changed in a record, for embedders that keep
// records in another form and copy back only what changed (docs/vm.md,
// "Edits"): build the record (the projection on Access.Paths), Mark it,
// run the programs, then ask Changed and, when it is true, Edits and
// TimeChanged. A Differ is reused record after record; it is not safe for
// concurrent use.
//
// It costs nothing for a record the runs left alone: an edit gives the
// record a new root (the arena's copy-on-write), so Changed compares three
// words. Edits compares only the values under the write set, and those
// that are still the very Values they were (parts of the record an edit
// did not copy) without reading them.
type Differ struct {
	writes []record.Path
	root   record.Value
	tag    record.Value
	time   int64
	edits  []Edit
	pos    []int32 // the edits' positions in the record, posAt apart
	posAt  []int32 // where each edit's positions begin in pos
}

// NewDiffer returns a Differ for the write set writes, usually the Writes
// of the programs' Access (Union of several). It keeps its own copies of
// the paths, with hints (record.Path.WithHints): the records an embedder
// builds mostly share their shape, and each path is looked up twice a
// changed record.
func NewDiffer(writes []record.Path) *Differ {
	d := &Differ{writes: make([]record.Path, len(writes))}
	for i, w := range writes {
		d.writes[i] = w.WithHints()
	}
	return d
}

// Mark notes rec as it is now, before the runs. It commits rec first (a
// record being built has maps that later edits would change in place,
// and the note must not change).
func (d *Differ) Mark(rec *record.Record) {
	rec.Commit()
	d.root, d.tag, d.time = rec.Root(), rec.TagValue(), rec.Time()
}

// Changed reports whether rec is not as Mark noted it: its root, tag or
// time. A true result may still have no Edits (a run that set a value to
// what it was).
func (d *Differ) Changed(rec *record.Record) bool {
	return rec.Root() != d.root || rec.TagValue() != d.tag || rec.Time() != d.time
}

// TimeChanged reports whether the runs set rec's time to another.
func (d *Differ) TimeChanged(rec *record.Record) bool { return rec.Time() != d.time }

// TagChanged reports whether the runs set rec's tag to another.
func (d *Differ) TagChanged(rec *record.Record) bool {
	a := rec.Arena()
	return string(a.Bytes(rec.TagValue())) != string(a.Bytes(d.tag))
}

// Edits returns the paths of the write set at which rec differs from what
// Mark noted (record.ValueEqual: maps in any key order), with their
// values now: removals first, then the others in the write set's order;
// but when the runs added two paths or more (Added), in the order of rec,
// an edit before another when its path leads to an earlier entry of a map
// they share (removals, which have no place, still first). Applied in the
// order given, with new keys put at the end of their map, they leave keys
// in the order of rec. The slice is reused by the next call.
func (d *Differ) Edits(rec *record.Record) []Edit {
	d.edits, d.pos, d.posAt = d.edits[:0], d.pos[:0], d.posAt[:0]
	if rec.Root() == d.root {
		return d.edits
	}
	a := rec.Arena()
	root := rec.Root()
	added := 0
	for i, w := range d.writes {
		old, _ := a.Get(d.root, w)
		now, _ := a.Get(root, w)
		if now == old || record.ValueEqual(a, now, a, old) {
			continue
		}
		e := Edit{Path: w, Value: now, Write: i, Added: old.Kind() == record.Absent}
		if e.Added {
			added++
		}
		d.edits = append(d.edits, e)
	}
	if added <= 1 {
		// Removals first (they make room in pdata's slices for what is
		// added after them), the others in the write set's order.
		k := 0
		for i := range d.edits {
			if d.edits[i].Value.Kind() == record.Absent {
				e := d.edits[i]
				copy(d.edits[k+1:i+1], d.edits[k:i])
				d.edits[k] = e
				k++
			}
		}
	}
	if added > 1 {
		// Their order: the positions of their entries along the path
		// (none for a removal).
		for i := range d.edits {
			d.posAt = append(d.posAt, int32(len(d.pos)))
			if e := &d.edits[i]; e.Value.Kind() != record.Absent {
				d.pos = positions(a, root, e.Path, d.pos)
			}
		}
		d.posAt = append(d.posAt, int32(len(d.pos)))
		d.sort()
	}
	return d.edits
}

// positions appends the position of each step of p's entry in its map,
// from v on, where p is.
func positions(a *record.Arena, v record.Value, p record.Path, pos []int32) []int32 {
	for _, s := range p {
		for it := a.Iter(v); it.Next(); {
			if a.Str(it.Key()) == s.Key() {
				v = it.Value()
				pos = append(pos, int32(it.Index()))
				break
			}
		}
	}
	return pos
}

// sort orders the edits by their positions (an insertion sort: a run
// makes a few edits, and the write set's order is mostly theirs).
func (d *Differ) sort() {
	e, at := d.edits, d.posAt
	posOf := func(i int) []int32 { return d.pos[at[i]:at[i+1]] }
	// posAt has one more entry than edits (the end); move them together.
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && comparePos(posOf(j), posOf(j-1)) < 0; j-- {
			e[j], e[j-1] = e[j-1], e[j]
			// Swap the two position ranges by rotating them in pos.
			lo, mid, hi := at[j-1], at[j], at[j+1]
			rotate(d.pos[lo:hi], int(mid-lo))
			at[j] = lo + (hi - mid)
		}
	}
}

// rotate turns s left by k: s[k:] then s[:k].
func rotate(s []int32, k int) {
	reverse(s[:k])
	reverse(s[k:])
	reverse(s)
}

func reverse(s []int32) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// comparePos orders position lists: step by step, a shorter list (a
// removal has none) before the longer lists it begins.
func comparePos(p, q []int32) int {
	for i := 0; i < len(p) && i < len(q); i++ {
		if p[i] != q[i] {
			return int(p[i] - q[i])
		}
	}
	return len(p) - len(q)
}

// Union returns the access of running the programs of as one after
// another: every path any of them reads or writes, minimal, and every
// flag any sets.
func Union(as ...Access) Access {
	var u Access
	for _, a := range as {
		u.Reads = append(u.Reads, a.Reads...)
		u.Writes = append(u.Writes, a.Writes...)
		u.ReadsTime = u.ReadsTime || a.ReadsTime
		u.ReadsTag = u.ReadsTag || a.ReadsTag
		u.SetsTime = u.SetsTime || a.SetsTime
		u.SetsTag = u.SetsTag || a.SetsTag
	}
	return u.normalized()
}

// Paths returns the paths to build a projection of a record on (docs/vm.md,
// "Access sets"): those of Reads and of Writes together, minimal.
func (a Access) Paths() []record.Path {
	return minimalPaths(append(append([]record.Path(nil), a.Reads...), a.Writes...))
}
