package vm

import (
	"github.com/policyrun/policyrun/record"
)

// smallSet is the size up to which an in-set is scanned rather than hashed.
const smallSet = 8

// Set is the constant list of an `x in [...]` test, built at compile time:
// a scan for short lists, a hash lookup for long ones. Ints and floats
// match by value, as == does.
type Set struct {
	strs    []string
	strMap  map[string]struct{}
	nums    []float64
	ints    map[int64]struct{}
	bools   [2]bool
	hasNull bool
	all     []Reg // the values, for Disasm
}

// NewSet returns the set of the given constant values (null, bool, int,
// float and string registers).
func NewSet(values []Reg) *Set {
	s := &Set{all: values}
	for _, v := range values {
		switch v.K {
		case record.String:
			s.strs = append(s.strs, v.S)
		case record.Int:
			s.nums = append(s.nums, float64(v.int()))
			if s.ints == nil {
				s.ints = map[int64]struct{}{}
			}
			s.ints[v.int()] = struct{}{}
		case record.Float:
			s.nums = append(s.nums, v.float())
		case record.Bool:
			s.bools[v.N&1] = true
		case record.Null, record.Absent:
			s.hasNull = true
		}
	}
	if len(s.strs) > smallSet {
		s.strMap = make(map[string]struct{}, len(s.strs))
		for _, x := range s.strs {
			s.strMap[x] = struct{}{}
		}
	}
	return s
}

// Has reports whether r is in the set.
func (s *Set) Has(r *Reg) bool {
	switch r.K {
	case record.String:
		if s.strMap != nil {
			_, ok := s.strMap[r.S]
			return ok
		}
		for _, x := range s.strs {
			if x == r.S {
				return true
			}
		}
	case record.Int:
		if s.ints != nil {
			if _, ok := s.ints[r.int()]; ok {
				return true
			}
		}
		f := float64(r.int())
		for _, x := range s.nums {
			if x == f && int64(x) == r.int() {
				return true
			}
		}
	case record.Float:
		f := r.float()
		for _, x := range s.nums {
			if x == f {
				return true
			}
		}
	case record.Bool:
		return s.bools[r.N&1]
	case record.Null, record.Absent:
		return s.hasNull
	}
	return false
}
