package record

// SplitOutcome is what Split made of a record: the one decision of split
// P (docs/language.md, "split") that both backends read, each mapping it
// to its result and fault.
type SplitOutcome uint8

const (
	// SplitMade: one record per element of P's array, r first.
	SplitMade SplitOutcome = iota
	// SplitNone: P absent or null, or under an absent or null
	// container: r goes on whole with P removed, the rest not run.
	SplitNone
	// SplitEmpty: P an empty array: r is dropped (split_empty).
	SplitEmpty
	// SplitNotArray: P, or a container on its way, of another type
	// than the step needs, as the guarded read of P faults on
	// (type_mismatch).
	SplitNotArray
	// SplitTooMany: more elements than the limit on records, or the
	// records would hold more bytes than the limit on bytes
	// (split_limit).
	SplitTooMany
	// SplitConflict: an element could not be set at P (path_conflict).
	SplitConflict
)

// Split makes r into one record per element of the array at p, appending
// them to dst in order: r itself first, then new records of r's arena
// with r's tag, time, metadata and layout, each with its element at p
// and the rest of the root shared with r's. The records are committed
// together once all are made, so that a later Discard returns each to
// the state right after the split. On any outcome but SplitMade and
// SplitNone r is left unchanged, as the run found it (its edits
// discarded): a fault leaves the record unchanged.
//
// maxN bounds the records made; maxBytes the bytes they hold together,
// estimated as n times the record's JSON size without the array: a
// large record with a long array would otherwise multiply into memory.
func (r *Record) Split(p Path, maxN, maxBytes int, dst []*Record) ([]*Record, SplitOutcome) {
	arr, o := r.splitValue(p)
	a := r.a
	switch o {
	case SplitNone:
		r.Remove(p)
		r.Commit()
		return dst, o
	case SplitMade:
	default:
		r.Discard()
		return dst, o
	}
	n := a.Len(arr)
	switch {
	case n == 0:
		r.Discard()
		return dst, SplitEmpty
	case n > maxN:
		r.Discard()
		return dst, SplitTooMany
	}
	// The records share the edits before the split, which Commit
	// freezes (a Set would otherwise write into the one root they
	// share); the base from before the run is kept until every record
	// is made, for a failure to go back to.
	base, baseTag, baseTime := r.base, r.baseTag, r.baseTime
	ext := r.ext != 0
	var baseJr = func() (jr rootJournal) {
		if ext {
			jr = r.ts().baseJr
		}
		return
	}()
	r.Commit()
	undo := func(o SplitOutcome) SplitOutcome {
		r.base, r.baseTag, r.baseTime = base, baseTag, baseTime
		if ext {
			r.ts().baseJr = baseJr
		}
		r.Discard()
		return o
	}
	// A projection stands for the whole LogRecord only with its bytes,
	// which the new records do not have: they get the whole root.
	root := r.wholeRoot()
	per := maxBytes / n
	arrSize := a.JSONSize(arr, maxBytes)
	if a.JSONSize(root, per+arrSize)-arrSize > per {
		return dst, undo(SplitTooMany)
	}
	start := len(dst)
	for i := range n {
		el, _ := a.Index(arr, i)
		c := r
		if i > 0 {
			c = a.NewRecordLike(r)
			c.root, c.base = root, root
		}
		if err := c.Set(p, el); err != nil {
			clear(dst[start:])
			return dst[:start], undo(SplitConflict)
		}
		c.Commit()
		dst = append(dst, c)
	}
	return dst, SplitMade
}

// splitValue reads p as the guarded read of P does: a container on the
// way that is absent or null makes P absent, one of a kind the next
// step cannot go into is a type mismatch, and so is a P that is neither
// an array nor absent or null.
func (r *Record) splitValue(p Path) (Value, SplitOutcome) {
	for i := range p {
		v, _ := r.Get(p[:i+1])
		k := v.Kind()
		switch {
		case k == Absent || k == Null:
			return v, SplitNone
		case i == len(p)-1:
			if k != Array {
				return v, SplitNotArray
			}
			return v, SplitMade
		case p[i+1].isIndex && k != Array, !p[i+1].isIndex && k != Map:
			return v, SplitNotArray
		}
	}
	return Value{}, SplitNotArray // P the root: the checker refuses it
}

// JSONSize estimates the JSON size of v in bytes, stopping early past
// limit: what the limits on a record's size measure.
func (a *Arena) JSONSize(v Value, limit int) int {
	switch v.Kind() {
	case String, Bytes:
		return a.Len(v) + 2
	case Map, Array:
		n := 2
		for it := a.Iter(v); it.Next(); {
			if v.Kind() == Map {
				n += a.Len(it.Key()) + 4
			} else {
				n++
			}
			n += a.JSONSize(it.Value(), limit-n)
			if n > limit {
				return n
			}
		}
		return n
	}
	return 8
}
