package state

import (
	"slices"
	"sync"
)

// Store is the state of one policy stage: the tables of its policy's
// stateful statements, by Spec.ID. A reload binds the new program's
// statements to it, so that a statement whose ID did not change keeps its
// keys. It is safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	tables map[uint64]*Table
	bound  bool // a program is bound: Restore fills its tables only
}

// NewStore returns an empty Store.
func NewStore() *Store { return &Store{tables: map[uint64]*Table{}} }

// Bind returns the tables of specs, in order: the Store's own where it
// has one of the same ID and Spec, new and empty ones otherwise. The
// Store keeps those tables only, forgetting statements no longer run.
func (s *Store) Bind(specs []Spec) []*Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Table, len(specs))
	kept := make(map[uint64]*Table, len(specs))
	for i, sp := range specs {
		t := s.tables[sp.ID]
		if t == nil || t.spec != sp {
			t = newTable(sp)
		}
		out[i], kept[sp.ID] = t, t
	}
	s.tables, s.bound = kept, true
	return out
}

// Stats are the figures of a Store: keys held and evictions since start.
type Stats struct {
	Keys      int
	Evictions uint64
}

// Stats adds up the Store's tables.
func (s *Store) Stats() Stats {
	var st Stats
	for _, t := range s.sorted() {
		st.Keys += t.Len()
		st.Evictions += t.Evictions()
	}
	return st
}

// sorted is the Store's tables by ID, the order a snapshot keeps.
func (s *Store) sorted() []*Table {
	s.mu.Lock()
	ts := make([]*Table, 0, len(s.tables))
	for _, t := range s.tables {
		ts = append(ts, t)
	}
	s.mu.Unlock()
	slices.SortFunc(ts, func(a, b *Table) int {
		switch {
		case a.spec.ID < b.spec.ID:
			return -1
		case a.spec.ID > b.spec.ID:
			return 1
		}
		return 0
	})
	return ts
}
