package lua

import (
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// split P is transpiled to a policy function that ends at the split,
// returning 2 with M.split set to the rest of the policy: a closure over
// the run's locals, which RunPieces calls once per record the split
// makes, each a table of its own (docs/language.md, "split").

// actSplit is the action of a run that reached the split: what run says
// to Run and RunPieces, never a result a caller sees.
const actSplit spec.Action = 255

// Splits reports whether the policy has a split: its runs may make
// several records of one, or none (RunPieces).
func (p *Program) Splits() bool { return p.split != nil }

// RunPieces runs the policy over rec with a pooled runner and appends
// the records the run made to recs, each with its result to results:
// rec alone for a policy without split, or a run that ended (or faulted)
// before it; else one per element of the array at the split's path, rec
// first, as the VM's RunPieces.
func (p *Program) RunPieces(rec *record.Record, recs []*record.Record, results []spec.Result) ([]*record.Record, []spec.Result, error) {
	return p.RunPiecesIn(nil, rec, recs, results)
}

// RunPiecesIn is RunPieces as a run of batch b (spec.Batch; nil: a batch
// of its own).
func (p *Program) RunPiecesIn(b *spec.Batch, rec *record.Record, recs []*record.Record, results []spec.Result) ([]*record.Record, []spec.Result, error) {
	r, err := p.runners.Get(p.NewRunner)
	if err != nil {
		return recs, results, err
	}
	r.batch = b
	recs, results, err = r.RunPieces(rec, recs, results)
	r.batch = nil
	p.runners.Put(r)
	return recs, results, err
}

// RunPieces is Program.RunPieces on this runner.
func (r *Runner) RunPieces(rec *record.Record, recs []*record.Record, results []spec.Result) ([]*record.Record, []spec.Result, error) {
	res, err := r.run(rec, r.fn, true)
	if err != nil {
		res = spec.Result{Fault: spec.LuaError}
	}
	if err != nil || res.Action != actSplit {
		return append(recs, rec), append(results, res), err
	}
	return r.pieces(rec, recs, results, r.p.opts.Limits.MaxSplit)
}

// pieces finishes the split the run over rec reached, making at most max
// records, and runs the rest of the policy over each. On a runner error
// partway, the records not yet run on are appended too, as the split
// made them, each kept with the fault lua_error (docs/embedding.md).
func (r *Runner) pieces(rec *record.Record, recs []*record.Record, results []spec.Result, max int) ([]*record.Record, []spec.Result, error) {
	rest := r.rest
	r.rest = nil
	made, o := rec.Split(r.p.split, max, spec.MaxBuilt(r.p.opts.Limits), r.recs[:0])
	r.recs = made[:0]
	var res spec.Result
	switch o {
	case record.SplitMade:
	case record.SplitNone:
		// The rest of the policy, which reads P as an element, does
		// not run.
	case record.SplitEmpty:
		res = spec.Result{Action: spec.Drop, Why: spec.SplitEmpty}
	case record.SplitTooMany:
		res = r.fault(spec.SplitLimit)
	case record.SplitConflict:
		res = r.fault(spec.PathConflict)
	default:
		res = r.fault(spec.TypeMismatch)
	}
	if o != record.SplitMade {
		return append(recs, rec), append(results, res), nil
	}
	defer clear(made)
	for i, x := range made {
		res, err := r.run(x, rest, false)
		if err != nil {
			for _, y := range made[i:] {
				recs, results = append(recs, y), append(results, spec.Result{Fault: spec.LuaError})
			}
			return recs, results, err
		}
		recs, results = append(recs, x), append(results, res)
	}
	return recs, results, nil
}

// splitStmt writes split P and the statements after it, rest: the
// policy function stores the rest as a closure in M.split and returns 2.
// The checker holds P to constant steps (E0650), so the runner reads and
// writes it as a record.Path.
func (g *gen) splitStmt(s *policy.SplitStmt, rest []policy.Stmt) {
	p, ok := check.SplitPath(s.Target)
	if !ok {
		panic(genError{"split of a path with a computed step"})
	}
	g.split = p
	g.line("M.split = function(rec)")
	g.depth++
	live := g.live
	g.live = 0 // a function of its own: its locals are counted apart
	g.line("iters = 0")
	g.splits = true
	g.stmts(rest)
	g.line("return 0")
	g.live = live
	g.depth--
	g.line("end")
	g.line("do return 2 end")
}
