package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// The map built-ins: merge, flatten, unflatten, keep_keys, drop_keys,
// values (docs/semantics.md, Maps). They build new maps in the arena and
// never change their arguments.

func init() {
	builtins[builtin.Merge] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		a, x, y := m.a, args[0].V, args[1].V
		// A key added twice keeps its first place and its last value:
		// b wins, in a's order, then b's new keys.
		b := a.BeginMap(a.Len(x) + a.Len(y))
		for _, v := range [2]record.Value{x, y} {
			for it := a.Iter(v); it.Next(); {
				b.Add(it.Key(), it.Value())
			}
		}
		*dst = Reg{K: record.Map, V: b.Finish()}
		return spec.NoFault
	}
	builtins[builtin.Flatten] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		a := m.a
		b := a.BeginMap(a.Len(args[0].V))
		m.buf = m.buf[:0]
		if !m.flatten(&b, args[0].V, args[1].S) {
			b.Finish()
			return spec.StringTooLong
		}
		*dst = Reg{K: record.Map, V: b.Finish()}
		return spec.NoFault
	}
	builtins[builtin.Unflatten] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Reg{K: record.Map, V: m.unflatten.Unflatten(m.a, args[0].V, args[1].S)}
		return spec.NoFault
	}
	builtins[builtin.KeepKeys] = func(m *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason {
		m.keepKeys(dst, args[0].V, re, true)
		return spec.NoFault
	}
	builtins[builtin.DropKeys] = func(m *Machine, dst *Reg, args []Reg, re *regexp.Regexp) spec.Reason {
		m.keepKeys(dst, args[0].V, re, false)
		return spec.NoFault
	}
	builtins[builtin.Values] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		a, x := m.a, args[0].V
		b := a.BeginArray(a.Len(x))
		if x.Kind() == record.Map {
			for it := a.Iter(x); it.Next(); {
				b.Append(it.Value())
			}
		}
		*dst = Reg{K: record.Array, V: b.Finish()}
		return spec.NoFault
	}
}

// flatten adds the leaves of map v to b, keyed by m.buf (the path so far)
// joined with sep; false when a key would be over the string limit.
func (m *Machine) flatten(b *record.Builder, v record.Value, sep string) bool {
	a := m.a
	prefix := len(m.buf)
	for it := a.Iter(v); it.Next(); {
		m.buf = m.buf[:prefix]
		if prefix > 0 {
			m.buf = append(m.buf, sep...)
		}
		m.buf = append(m.buf, a.Bytes(it.Key())...)
		if len(m.buf) > m.lim.MaxString {
			return false
		}
		if x := it.Value(); x.Kind() == record.Map && a.Len(x) > 0 {
			if !m.flatten(b, x, sep) {
				return false
			}
			continue
		}
		key := it.Key()
		if prefix > 0 {
			key = a.NewString(m.buf)
		}
		b.Add(key, it.Value())
	}
	m.buf = m.buf[:prefix]
	return true
}

// keepKeys is keep_keys (keep) and drop_keys: the entries of map v whose
// keys re matches, or those it does not.
func (m *Machine) keepKeys(dst *Reg, v record.Value, re *regexp.Regexp, keep bool) {
	a := m.a
	b := a.BeginMap(a.Len(v))
	for it := a.Iter(v); it.Next(); {
		if re.MatchString(a.Str(it.Key())) == keep {
			b.Add(it.Key(), it.Value())
		}
	}
	*dst = Reg{K: record.Map, V: b.Finish()}
}
