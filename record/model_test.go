package record

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// The property test runs random edit sequences on a record and on a
// map[string]any model of it, and compares them after every step.

type model struct{ m map[string]any }

// deepCopy copies the maps and arrays of x, so that the model's edits
// leave the original alone.
func deepCopy(x any) any { return mapGo(x, func(v any) any { return v }) }

func (m *model) get(p []string) (any, bool) {
	var cur any = m.m
	for _, k := range p {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// parentForSet returns the map that p's last key goes into, creating
// missing or null maps, or false when a non-map is in the way. With dry it
// changes nothing.
func (m *model) parentForSet(p []string, dry bool) (map[string]any, bool) {
	cur := m.m
	for _, k := range p[:len(p)-1] {
		next, ok := cur[k]
		if !ok || next == nil {
			if dry {
				return nil, true
			}
			nm := map[string]any{}
			cur[k] = nm
			cur = nm
			continue
		}
		nm, ok := next.(map[string]any)
		if !ok {
			return nil, false
		}
		cur = nm
	}
	return cur, true
}

func (m *model) set(p []string, v any) bool {
	if _, ok := m.parentForSet(p, true); !ok {
		return false
	}
	v = deepCopy(v) // the value is taken before parents are created
	parent, _ := m.parentForSet(p, false)
	parent[p[len(p)-1]] = v
	return true
}

func (m *model) remove(p []string) {
	if len(p) == 0 {
		return
	}
	parent, ok := m.get(p[:len(p)-1])
	if mm, isMap := parent.(map[string]any); ok && isMap {
		delete(mm, p[len(p)-1])
	}
}

func pathOf(p []string) Path { return NewPath(p...) }

func TestEditsModel(t *testing.T) {
	input := `{"a":{"b":1,"c":{"a":"x"}},"b":[1,2],"c":"s","d":null,"e":{"a":{"b":{"c":2.5}}}}`
	// f, gg and hhh start missing: sets and renames add them to the root,
	// which keeps a filter of its keys (Record.keys).
	keys := []string{"a", "b", "c", "d", "e", "f", "gg", "hhh"}
	rng := rand.New(rand.NewPCG(1, 2))
	randPath := func(min int) []string {
		n := min + rng.IntN(3)
		p := make([]string, n)
		for i := range p {
			p[i] = keys[rng.IntN(len(keys))]
		}
		return p
	}
	var orig map[string]any
	mustUnmarshal(t, []byte(input), &orig)
	normalize := func(x any) any { // JSON numbers as the record holds them
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		var y any
		mustUnmarshal(t, b, &y)
		return y
	}
	a := NewArena()
	for round := 0; round < 1000; round++ {
		a.Reset()
		r := mustDecode(t, a, input, Referenced)
		m := &model{deepCopy(orig).(map[string]any)}
		committed := orig
		for step := 0; step < 20; step++ {
			var desc string
			var wantErr, gotErr bool
			switch op := rng.IntN(7); op {
			case 0, 1: // set a scalar, a map, or a copy of another path
				p := randPath(1)
				var v Value
				var mv any
				switch rng.IntN(3) {
				case 0:
					v, mv = IntValue(int64(step)), float64(step)
				case 1:
					v = mustValue(t, a, `{"a":{"b":"m"},"c":3}`)
					mustUnmarshal(t, []byte(`{"a":{"b":"m"},"c":3}`), &mv)
				case 2:
					src := randPath(1)
					var ok bool
					v, ok = r.Get(pathOf(src))
					mv, _ = m.get(src)
					if !ok {
						v, mv = NullValue(), nil
					}
				}
				desc = "set " + pathOf(p).String()
				wantErr = !m.set(p, mv)
				gotErr = r.Set(pathOf(p), v) != nil
			case 2:
				p := randPath(1)
				desc = "set ?= " + pathOf(p).String()
				if cur, ok := m.get(p); !ok || cur == nil {
					wantErr = !m.set(p, "ia")
				}
				_, err := r.SetIfAbsent(pathOf(p), a.NewStringFrom("ia"))
				gotErr = err != nil
			case 3:
				p := randPath(1)
				desc = "remove " + pathOf(p).String()
				m.remove(p)
				r.Remove(pathOf(p))
			case 4:
				from, to := randPath(1), randPath(1)
				desc = "rename " + pathOf(from).String() + " " + pathOf(to).String()
				if v, ok := m.get(from); ok && !reflect.DeepEqual(from, to) {
					m.remove(from)
					wantErr = !m.set(to, v)
				}
				gotErr = r.rename(pathOf(from), pathOf(to)) != nil
			case 5:
				p := randPath(1)
				desc = "lift " + pathOf(p).String()
				if v, ok := m.get(p); ok && v != nil {
					if mv, isMap := v.(map[string]any); isMap {
						m.remove(p)
						parent, _ := m.get(p[:len(p)-1])
						for k, x := range mv {
							parent.(map[string]any)["p_"+k] = x
						}
					} else {
						wantErr = true
					}
				}
				gotErr = r.Lift(pathOf(p), []byte("p_")) != nil
			case 6:
				switch rng.IntN(4) {
				case 0:
					desc = "discard"
					r.Discard()
					m.m = deepCopy(committed).(map[string]any)
				case 1:
					desc = "commit"
					r.Commit()
					committed = deepCopy(m.m).(map[string]any)
				}
			}
			if wantErr != gotErr {
				t.Fatalf("round %d step %d %s: error %v, model error %v", round, step, desc, gotErr, wantErr)
			}
			if got, want := normalize(r.ToGo()), normalize(m.m); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d step %d %s:\n got %v\nwant %v", round, step, desc, got, want)
			}
			// A key set twice would collapse in ToGo's map: count them.
			if n := r.a.Len(r.Root()); n != len(m.m) {
				t.Fatalf("round %d step %d %s: the root has %d keys, the model %d", round, step, desc, n, len(m.m))
			}
		}
	}
}
