package vm

import (
	"regexp"

	"github.com/policyrun/policyrun/internal/builtin"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/record/coll"
	"github.com/policyrun/policyrun/spec"
)

// The array built-ins: append, includes, unique, slice (docs/semantics.md,
// Arrays); a + b on arrays is the ACAT instruction.

func init() {
	builtins[builtin.Append] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		a, x := m.a, args[0].V
		v := toValue(a, &args[1])
		if v.Kind() == record.Absent {
			v = record.NullValue() // as in a list literal
		}
		if a.Len(x)+1 > m.maxElems {
			return spec.RecordTooLarge
		}
		if m.overBudget(a.Len(x) + 1) {
			return spec.MemoryLimit
		}
		b := a.BeginArray(a.Len(x) + 1)
		for it := a.Iter(x); it.Next(); {
			b.Append(it.Value())
		}
		b.Append(v)
		*dst = Reg{K: record.Array, V: b.Finish()}
		return spec.NoFault
	}
	builtins[builtin.Includes] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Bool(coll.Includes(m.a, args[0].V, toValue(m.a, &args[1])))
		return spec.NoFault
	}
	builtins[builtin.Unique] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		*dst = Reg{K: record.Array, V: m.unique.Unique(m.a, args[0].V)}
		return spec.NoFault
	}
	builtins[builtin.Slice] = func(m *Machine, dst *Reg, args []Reg, _ *regexp.Regexp) spec.Reason {
		a, x := m.a, args[0].V
		n := a.Len(x)
		start, end := clamp(args[1].int(), n), clamp(args[2].int(), n)
		b := a.BeginArray(max(end-start, 0))
		for i := start; i < end; i++ {
			v, _ := a.Index(x, i)
			b.Append(v)
		}
		*dst = Reg{K: record.Array, V: b.Finish()}
		return spec.NoFault
	}
}
