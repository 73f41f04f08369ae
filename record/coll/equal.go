package coll

import (
	"hash/maphash"
	"math"

	"github.com/policyrun/policyrun/internal/indextable"
	"github.com/policyrun/policyrun/record"
)

// Equal reports whether x and y, of arena a, are equal as the language's
// == says (docs/semantics.md, "Numbers" and "Built-in functions"): absent
// equals null, an int equals a float of the same value, strings and bytes
// compare by their bytes, arrays element by element and maps by their keys
// in any order, by these same rules all the way down (the Lua backend's
// == is the same). It is the one definition of ==: the VM's == and the
// built-ins that compare (includes, unique) call it. record.ValueEqual is
// stricter (kinds must match) and answers another question: whether a
// record holds the very same data.
func Equal(a *record.Arena, x, y record.Value) bool {
	xk, yk := x.Kind(), y.Kind()
	switch {
	case xk <= record.Null || yk <= record.Null:
		return xk <= record.Null && yk <= record.Null
	case xk == record.Int && yk == record.Float:
		return float64(x.Int()) == y.Float()
	case xk == record.Float && yk == record.Int:
		return x.Float() == float64(y.Int())
	case xk != yk:
		return false
	}
	switch xk {
	case record.Float:
		return x.Float() == y.Float() // NaN equals nothing, as in ==
	case record.Array:
		if a.Len(x) != a.Len(y) {
			return false
		}
		jt := a.Iter(y)
		for it := a.Iter(x); it.Next() && jt.Next(); {
			if !Equal(a, it.Value(), jt.Value()) {
				return false
			}
		}
		return true
	case record.Map:
		if a.Len(x) != a.Len(y) {
			return false
		}
		for it := a.Iter(x); it.Next(); {
			step := [1]record.Step{record.KeyStep(a.Str(it.Key()))}
			w, ok := a.Get(y, step[:])
			if !ok || !Equal(a, it.Value(), w) {
				return false
			}
		}
		return true
	}
	return record.ValueEqual(a, x, a, y)
}

// Includes reports whether an element of the array arr equals v.
func Includes(a *record.Arena, arr, v record.Value) bool {
	for it := a.Iter(arr); it.Next(); {
		if Equal(a, it.Value(), v) {
			return true
		}
	}
	return false
}

// Uniquer runs unique. It keeps its scratch space from call to call; it is
// not safe for concurrent use.
type Uniquer struct {
	table indextable.Table
	kept  []record.Value
}

// smallUnique is the length up to which unique compares every pair rather
// than hashing.
const smallUnique = 16

// Unique returns the array arr of arena a without the elements that equal
// (Equal) an element before them.
func (u *Uniquer) Unique(a *record.Arena, arr record.Value) record.Value {
	n := a.Len(arr)
	u.kept = u.kept[:0]
	if n <= smallUnique {
	next:
		for it := a.Iter(arr); it.Next(); {
			v := it.Value()
			for _, k := range u.kept {
				if Equal(a, k, v) {
					continue next
				}
			}
			u.kept = append(u.kept, v)
		}
		return u.build(a)
	}
	t := &u.table
	seed := t.Seed()
	t.Reset(n)
	for it := a.Iter(arr); it.Next(); {
		v := it.Value()
		for slot, j := t.Probe(hash(a, seed, v)); ; slot, j = t.Next(slot) {
			if j < 0 {
				t.Put(slot, len(u.kept))
				u.kept = append(u.kept, v)
				break
			}
			if Equal(a, u.kept[j], v) {
				break
			}
		}
	}
	return u.build(a)
}

func (u *Uniquer) build(a *record.Arena) record.Value {
	b := a.BeginArray(len(u.kept))
	for _, v := range u.kept {
		b.Append(v)
	}
	return b.Finish()
}

// hash hashes v consistently with Equal: values that are equal hash alike.
func hash(a *record.Arena, seed maphash.Seed, v record.Value) uint64 {
	const (
		m1 = 0x9E3779B97F4A7C15
		m2 = 0xBF58476D1CE4E5B9
	)
	mix := func(x uint64) uint64 {
		x ^= x >> 30
		x *= m2
		x ^= x >> 27
		return x
	}
	k := v.Kind()
	switch k {
	case record.Absent, record.Null:
		return mix(uint64(record.Null))
	case record.Int, record.Float:
		f := v.Float()
		if k == record.Int {
			f = float64(v.Int()) // an int and a float of one value are equal
		}
		switch {
		case f == 0:
			f = 0 // -0 equals 0
		case f != f:
			f = math.NaN() // one NaN (which equals nothing, but hashes alike)
		}
		return mix(math.Float64bits(f))
	case record.String, record.Bytes:
		return maphash.Bytes(seed, a.Bytes(v)) ^ uint64(k)*m1
	case record.Array:
		h := uint64(k) * m1
		for it := a.Iter(v); it.Next(); {
			h = mix(h*31 + hash(a, seed, it.Value()))
		}
		return h
	case record.Map:
		h := uint64(k) * m1
		for it := a.Iter(v); it.Next(); {
			// In any order: the sum commutes.
			h += mix(maphash.Bytes(seed, a.Bytes(it.Key()))*m1 ^ hash(a, seed, it.Value()))
		}
		return mix(h)
	}
	return mix(v.Bits() ^ uint64(k)*m1)
}
