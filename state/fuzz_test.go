package state

import (
	"bytes"
	"testing"
)

// FuzzRestore feeds Restore any bytes: it must fail cleanly or give a
// Store whose snapshot restores to itself. Its corpus
// (testdata/fuzz/FuzzRestore) runs with the ordinary tests.
func FuzzRestore(f *testing.F) {
	s := NewStore()
	ts := s.Bind([]Spec{{ID: 1, Kind: Dedupe, MaxKeys: 3, Window: 1e9}, {ID: 2, Kind: SampleEvery, MaxKeys: 1, N: 5}})
	for i := range 5 {
		ts[0].Dedupe(uint64(i), int64(i))
	}
	ts[1].Every()
	f.Add(s.Snapshot())
	f.Add(NewStore().Snapshot())
	f.Add([]byte{version})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewStore()
		if err := s.Restore(data); err != nil {
			return
		}
		snap := s.Snapshot()
		r := NewStore()
		if err := r.Restore(snap); err != nil {
			t.Fatalf("a snapshot of a restored store does not restore: %v", err)
		}
		if !bytes.Equal(r.Snapshot(), snap) {
			t.Fatal("snapshots differ")
		}
	})
}
