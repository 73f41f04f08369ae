package pmap

import (
	"math/rand/v2"
	"testing"
)

// key hashes to few values, so that collisions and deep tries are tested.
type key struct {
	n    int
	bits uint
}

func (k key) Hash() uint64 { return uint64(k.n) * 0x9e3779b97f4a7c15 >> k.bits }

func check(t *testing.T, m Map[key, int], want map[key]int) {
	t.Helper()
	if m.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", m.Len(), len(want))
	}
	for k, v := range want {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get(%v) = %d, %v; want %d", k, got, ok, v)
		}
	}
	n := 0
	m.All(func(k key, v int) bool {
		n++
		if want[k] != v {
			t.Fatalf("All gives %v=%d, want %d", k, v, want[k])
		}
		return true
	})
	if n != len(want) {
		t.Fatalf("All gives %d keys, want %d", n, len(want))
	}
}

// TestAgainstMap applies random sets and deletes to a Map and a Go map,
// keeping every version: old versions must not change.
func TestAgainstMap(t *testing.T) {
	for _, shift := range []uint{0, 40, 60, 63} { // 63: hashes 0 and 1 only
		r := rand.New(rand.NewPCG(1, uint64(shift)))
		var m Map[key, int]
		want := map[key]int{}
		type version struct {
			m    Map[key, int]
			want map[key]int
		}
		var versions []version
		for i := range 3000 {
			k := key{r.IntN(300), shift}
			if r.IntN(3) == 0 {
				m = m.Delete(k)
				delete(want, k)
			} else {
				m = m.Set(k, i)
				want[k] = i
			}
			if i%100 == 0 {
				w := map[key]int{}
				for k, v := range want {
					w[k] = v
				}
				versions = append(versions, version{m, w})
			}
		}
		check(t, m, want)
		for _, v := range versions {
			check(t, v.m, v.want)
		}
		// Diff of every pair of versions reports every difference.
		for i := 0; i+1 < len(versions); i += 3 {
			a, b := versions[i], versions[i+1]
			got := map[key]bool{}
			Diff(a.m, b.m, func(k key, av int, aok bool, bv int, bok bool) {
				got[k] = true
				wa, waok := a.want[k]
				wb, wbok := b.want[k]
				if aok != waok || bok != wbok || aok && av != wa || bok && bv != wb {
					t.Fatalf("Diff(%v) = %d %v, %d %v", k, av, aok, bv, bok)
				}
			})
			for k, v := range a.want {
				if w, ok := b.want[k]; (!ok || w != v) && !got[k] {
					t.Fatalf("Diff misses %v", k)
				}
			}
			for k := range b.want {
				if _, ok := a.want[k]; !ok && !got[k] {
					t.Fatalf("Diff misses %v", k)
				}
			}
		}
	}
}

// TestDiffShares: two versions that differ in one key differ in one call.
func TestDiffShares(t *testing.T) {
	var m Map[key, int]
	for i := range 10000 {
		m = m.Set(key{i, 0}, i)
	}
	m2 := m.Set(key{5, 0}, -1).Delete(key{7, 0}).Set(key{20000, 0}, 1)
	calls := 0
	Diff(m, m2, func(key, int, bool, int, bool) { calls++ })
	if calls > 3*maxLevel {
		t.Errorf("Diff made %d calls for 3 changes", calls)
	}
	Diff(m, m, func(key, int, bool, int, bool) { t.Fatal("Diff of a map with itself") })
}
