package check

import (
	"fmt"
	"strings"

	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/compiler/types"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
	kstate "github.com/policyrun/policyrun/state"
)

// StateInfo is what the checker resolved of a dedupe, rate_limit or
// sample statement, for the backends.
type StateInfo struct {
	// Spec is the statement as the state package runs it: its ID (of the
	// policy's name, the statement's canonical text, its place among
	// statements of that text and its values), kind and values. Its
	// values are zero while a parameter it reads is unbound.
	Spec kstate.Spec
	// Keys are the types of the by expressions.
	Keys []*types.Type
	// Count is count P as the set it is, of an int: nil without count.
	// Its Value is a literal 0 that stands for the count: backends write
	// the count where it writes the literal.
	Count *policy.SetStmt
}

// States are the stateful statements of a policy, in source order, with
// what the checker resolved of each.
func (info *Info) StateSpecs() []kstate.Spec {
	out := make([]kstate.Spec, len(info.StateOrder))
	for i, s := range info.StateOrder {
		out[i] = info.States[s].Spec
	}
	return out
}

// StateMemory is the most bytes the policy's stateful statements can
// hold: each one's max_keys at its bytes a key (kstate.Spec.Memory).
func (info *Info) StateMemory() int64 {
	var n int64
	for _, s := range info.StateSpecs() {
		n += s.Memory()
	}
	return n
}

var countHint = map[string]string{
	"to":        "rate_limit by K to N per D keeps at most N records of a key per D",
	"keep 1 in": "sample keeps one record in N: N = 1 keeps all",
	"max_keys":  fmt.Sprintf("max_keys bounds the keys a statement remembers: its memory is max_keys times about %d bytes", kstate.BytesPerKey(spec.DefaultMaxKeys)),
}

// maxStateN is the largest N of to N and keep 1 in N: a billion.
const maxStateN = 1_000_000_000

var stateKinds = map[policy.Token]kstate.Kind{policy.DEDUPE: kstate.Dedupe, policy.RATELIMIT: kstate.RateLimit, policy.SAMPLE: kstate.Sample}

// stateStmt checks a dedupe, rate_limit or sample statement.
func (c *checker) stateStmt(s *policy.StateStmt, st *state) {
	si := &StateInfo{Spec: kstate.Spec{Kind: stateKinds[s.Kind], MaxKeys: spec.DefaultMaxKeys}}
	if s.Kind == policy.SAMPLE && s.Keys == nil {
		si.Spec.Kind = kstate.SampleEvery
	}
	for _, k := range s.Keys {
		t := c.expr(k, st)
		si.Keys = append(si.Keys, t)
		if !t.IsInvalid() && !keyType(t) {
			c.report(diag.Errorf(k, CodeStateKey, "a key of %s cannot be %s", s.Kind, t).
				WithLabel("%s is %s", exprText(k), t).
				WithHint("key by scalars (string, int, float, bool, timestamp), or by the text of this one: to_string(%s)", exprText(k)))
		}
	}
	if s.Window != nil {
		c.expr(s.Window, st)
		if d, ok := c.stateDuration(s, s.Window); ok {
			si.Spec.Window = int64(d)
		}
	}
	if s.N != nil {
		c.expr(s.N, st)
		what := "to"
		if s.Kind == policy.SAMPLE {
			what = "keep 1 in"
		}
		if n, ok := c.stateInt(s.N, what, maxStateN); ok {
			si.Spec.N = n
		}
	}
	if s.MaxKeys != nil {
		c.expr(s.MaxKeys, st)
		if n, ok := c.stateInt(s.MaxKeys, "max_keys", kstate.MaxMaxKeys); ok {
			si.Spec.MaxKeys = int(n)
		}
	}
	if !si.Spec.Kind.Keyed() {
		si.Spec.MaxKeys = 1
	}
	if s.Count != nil {
		// count P writes an int at P: a set, with all of set's checks.
		si.Count = &policy.SetStmt{Set: s.Count.Pos(), Target: s.Count, OpPos: s.Count.Pos(), Op: policy.ASSIGN,
			Value: &policy.BasicLit{ValuePos: s.Count.Pos(), Kind: policy.LitInt, Raw: "0"}}
		c.set(si.Count, st)
	}
	text := stateText(s)
	nth := 0
	for _, o := range c.info.StateOrder {
		if stateText(o) == text {
			nth++
		}
	}
	si.Spec.ID = kstate.StatementID(c.file.Name, text, nth, si.Spec)
	c.info.States[s] = si
	c.info.StateOrder = append(c.info.StateOrder, s)
}

// keyType reports whether a key may have type t: a scalar, optional or
// not, or null, or any (whose value, a map or an array at run time, is
// the fault type_mismatch).
func keyType(t *types.Type) bool {
	switch types.NonOptional(t).Kind {
	case types.Bool, types.Int, types.Float, types.String, types.Timestamp, types.Null, types.Any:
		return true
	}
	return t.Kind == types.Null
}

// stateText is the statement's canonical text, whatever its layout: what
// its memory is known by across restarts and reloads.
func stateText(s *policy.StateStmt) string {
	var b strings.Builder
	b.WriteString(s.Kind.String())
	if s.Keys != nil {
		b.WriteString(" by ")
		for i, k := range s.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(exprText(k))
		}
	}
	for _, part := range []struct {
		word string
		x    policy.Expr
	}{{"to", s.N}, {"per", s.Window}, {"count", s.Count}, {"max_keys", s.MaxKeys}} {
		if part.x != nil {
			fmt.Fprintf(&b, " %s %s", part.word, exprText(part.x))
		}
	}
	return b.String()
}

// stateDuration reads the constant duration string of within or per.
func (c *checker) stateDuration(s *policy.StateStmt, e policy.Expr) (int64, bool) {
	what := "within"
	if s.Kind == policy.RATELIMIT {
		what = "per"
	}
	lit, ok := c.constLit(e)
	if !ok {
		if c.unboundConst(e) {
			return 0, false
		}
		c.report(diag.Errorf(e, CodeStateDuration, "%s takes a constant duration string, not %s", what, exprText(e)).
			WithHint(`write a duration as "500ms", "30s", "1m", "1h", or a const or param string holding one`))
		return 0, false
	}
	d, err := kstate.ParseDuration(lit.Str)
	if err != nil {
		c.report(diag.Errorf(e, CodeStateDuration, "%s takes a positive duration: %s", what, err).
			WithHint(`write a number and a unit (ns, us, ms, s, m, h): "500ms", "30s", "1m30s"`))
		return 0, false
	}
	return int64(d), true
}

// stateInt reads the constant int of to, keep 1 in or max_keys: from 1
// to max.
func (c *checker) stateInt(e policy.Expr, what string, max int64) (int64, bool) {
	for range maxConstChain {
		id, ok := policy.Unparen(e).(*policy.Ident)
		k := c.info.Consts[id]
		if !ok || k == nil || k.Value == nil {
			break
		}
		e = k.Value
	}
	lit, neg := policy.SignedLit(e)
	if lit == nil || lit.Kind != policy.LitInt {
		if c.unboundConst(e) {
			return 0, false
		}
		c.report(diag.Errorf(e, CodeStateCount, "%s takes a constant int, not %s", what, exprText(e)).
			WithHint("write a number such as 100, or a const or param int holding one"))
		return 0, false
	}
	n := lit.Int
	if neg {
		n = -n
	}
	if n < 1 || n > max {
		c.report(diag.Errorf(e, CodeStateCount, "%s must be from 1 to %d, not %d", what, max, n).
			WithHint("%s", countHint[what]))
		return 0, false
	}
	return n, true
}
