package compiler

import (
	"slices"

	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
)

// Drops first. A policy that edits and then drops (a content-modifier
// chain before the policy, B1 policy 8; any "normalise, then filter")
// spends the edits on every record it drops. When the statements before
// the first `drop when` are edits that cannot fault — a constant set to,
// or the removal or renaming of, keys of the root map, which is always a
// map — and its condition reads none of the keys they write, the drop is
// tested first, and no result changes:
//
//   - a record the condition drops is dropped either way (no edit made
//     before it could fault and keep it instead);
//   - one it keeps gets the same edits, only later, and nothing between
//     reads what they change;
//   - a fault in the condition leaves the record as it came either way
//     (the run's edits are undone);
//   - the edits store at most maxGrowth bytes, so that the end of a run
//     that dropped after them never measured the record
//     (vm.SizeCheckAt: record_too_large).

// dropFirst returns list with its first `drop when` moved ahead of the
// edits before it, when that changes no result, or list as it is.
func dropFirst(list []policy.Stmt, maxGrowth int) []policy.Stmt {
	var written []string
	growth := 0
	for i, s := range list {
		switch s := s.(type) {
		case *policy.DropStmt:
			if i == 0 || s.Cond == nil || readsKeys(s.Cond, written) {
				return list
			}
			out := make([]policy.Stmt, 0, len(list))
			out = append(append(out, s), list[:i]...)
			return append(out, list[i+1:]...)
		case *policy.SetStmt:
			k, ok := rootKey(s.Target)
			c := constOf(s.Value)
			if !ok || c.K != record.String && c.K != record.Int || s.Op != policy.ASSIGN && s.Op != policy.QASSIGN {
				return list
			}
			growth += len(c.S)
			written = append(written, k)
		case *policy.RemoveStmt:
			for _, t := range s.Targets {
				k, ok := rootKey(t)
				if !ok {
					return list
				}
				written = append(written, k)
			}
		case *policy.RenameStmt:
			from, ok1 := rootKey(s.From)
			to, ok2 := rootKey(s.To)
			if !ok1 || !ok2 {
				return list
			}
			written = append(written, from, to)
		default:
			return list
		}
		if growth > maxGrowth {
			return list
		}
	}
	return list
}

// rootKey returns the key of a path expression that is one constant key
// of the root map (`.env`, `."a b"`, `.["k"]`).
func rootKey(e policy.Expr) (string, bool) {
	base, steps := flatten(e)
	if _, ok := base.(*policy.RootExpr); !ok || len(steps) != 1 || steps[0].dyn != nil || steps[0].st.IsIndex() {
		return "", false
	}
	return steps[0].st.Key(), true
}

// readsKeys reports whether e may read one of the root's keys or the
// root whole (a computed first key, `.` itself).
func readsKeys(e policy.Expr, keys []string) bool {
	found := false
	policy.Inspect(e, func(n policy.Node) bool {
		if found {
			return false
		}
		switch n.(type) {
		case *policy.RootExpr:
			found = true // the root whole, or a path from it not seen below
			return false
		case *policy.FieldExpr, *policy.IndexExpr:
		default:
			return true
		}
		base, steps := flatten(n.(policy.Expr))
		if _, ok := base.(*policy.RootExpr); !ok {
			return true // a step of a local's or a call's value: look inside
		}
		if p := accessPath(steps); len(p) == 0 || slices.Contains(keys, p[0].Key()) {
			found = true
			return false
		}
		for _, s := range steps {
			if s.dyn != nil && readsKeys(s.dyn, keys) {
				found = true
			}
		}
		return false
	})
	return found
}
