package lua

import (
	"fmt"
	"math"
	"strings"

	"github.com/policyrun/policyrun/internal/luasandbox"
	glua "github.com/policyrun/policyrun/internal/third_party/gopher-lua"

	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
	kstate "github.com/policyrun/policyrun/state"
)

// The stateful statements (dedupe, rate_limit, sample) keep their memory
// in Go, in the tables of package state, as the VM does: the transpiled
// code calls ST(i, key values…), which hashes the key as the VM hashes it
// and runs statement i's table. ST returns nil to drop the record and
// otherwise the count of dedupe … count P (0 for the others); the code
// then returns dropCode + the spec.DropReason, which Runner.Run reads back.

// dropCode is what the policy function returns, plus the spec.DropReason,
// when a stateful statement drops the record: past 0 (keep), 1 (drop) and
// 2 (split).
const dropCode = 10

// stateStmt transpiles a dedupe, rate_limit or sample statement.
func (g *gen) stateStmt(s *policy.StateStmt) {
	si := g.info.States[s]
	idx := -1
	for i, o := range g.info.StateOrder {
		if o == s {
			idx = i
		}
	}
	if si == nil || idx < 0 {
		g.fail("%s: %s not checked", s.Pos(), s.Kind)
	}
	g.usesState = true
	g.block(func() {
		args := []string{fmt.Sprint(idx)}
		for _, k := range s.Keys {
			args = append(args, g.expr(k))
		}
		c := g.tmp("ST(" + strings.Join(args, ", ") + ")")
		by := map[policy.Token]spec.DropReason{policy.DEDUPE: spec.ByDedupe, policy.RATELIMIT: spec.ByRateLimit, policy.SAMPLE: spec.BySample}[s.Kind]
		g.line("if %s == nil then return %d end", c, dropCode+int(by))
		if si.Count != nil {
			if k, ok := rootKey(si.Count.Target); ok {
				g.line("mset(rec, %s, %s)", k, c)
			} else {
				g.line("setp(rec, %s, %s)", g.editPath(si.Count.Target), c)
			}
		}
	})
}

// stateFunc is ST for a runner of p: statement i's table, the key hashed
// from the values after i, the time of the run's batch.
func (r *Runner) stateFunc(L *glua.LState) int {
	p, s := r.p, r.s
	i := L.CheckInt(1)
	sp := p.states[i]
	var key uint64
	for j := 2; j <= L.GetTop(); j++ {
		h := kstate.NewHasher()
		switch v := L.Get(j).(type) {
		case *glua.LNilType:
			h.Null()
		case glua.LBool:
			h.Bool(bool(v))
		case glua.LNumber:
			h.Int(luasandbox.Int(float64(v)))
		case glua.LString:
			h.String(string(v))
		case *glua.LTable:
			switch {
			case v == s.null:
				h.Null()
			case v.Metatable == s.flt:
				h.Float(float64(v.RawGetInt(1).(glua.LNumber)))
			case v.Metatable == s.ts:
				h.Time(tsNanos(v))
			default:
				s.fault(spec.TypeMismatch) // a map or an array
			}
		default:
			s.fault(spec.TypeMismatch)
		}
		if j == 2 {
			key = h.Sum()
		} else {
			key = kstate.Combine(key, h.Sum())
		}
	}
	now := r.nowNanos()
	t := p.tables[i]
	var drop bool
	var count int64
	switch sp.Kind {
	case kstate.Dedupe:
		drop, count = t.Dedupe(key, now)
	case kstate.RateLimit:
		drop = t.Rate(key, now)
	case kstate.Sample:
		drop = !kstate.Sampled(key, sp.N)
	case kstate.SampleEvery:
		drop = t.Every()
	}
	if drop {
		L.Push(glua.LNil)
	} else {
		L.Push(glua.LNumber(count))
	}
	return 1
}

// dropResult is the Result of a run whose function returned code, when
// a stateful statement dropped the record (dropCode + its reason).
func dropResult(code glua.LValue) (spec.Result, bool) {
	n, ok := code.(glua.LNumber)
	if !ok || n < dropCode || n >= dropCode+glua.LNumber(spec.NumDropReasons) || n != glua.LNumber(math.Trunc(float64(n))) {
		return spec.Result{}, false
	}
	return spec.Result{Action: spec.Drop, Why: spec.DropReason(n - dropCode)}, true
}
