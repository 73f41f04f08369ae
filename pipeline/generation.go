package pipeline

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/record"
)

// A generation is what a reload replaces between two batches: the config
// that runs, its filters, and where the outputs' match sends records.
// Each batch (a tail batch, all its chunks; one OTLP request) acquires the
// generation at its start and runs on it to its end, so that it is wholly
// processed by the old policies or wholly by the new ones. The outputs
// themselves are the pipeline's, the same in every generation.
type generation struct {
	cfg     *config.Config
	stages  []*stage
	outputs []*outSlot // the pipeline's outputs, in cfg's order, with cfg's match
	anyAll  bool       // some output matches "*": every record is routed
	// keep is what an otlp input decodes of a request for these stages
	// and outputs (otlpFields).
	keep record.OTLPProjection

	// refs counts the batches running on the generation; once a reload
	// has retired it, the last of them closes its stages.
	refs    atomic.Int64
	retired atomic.Bool
	closed  sync.Once
}

type stage struct {
	cfg   config.Filter
	proc  Processor
	all   bool        // match "*": no tag to read
	stats *stageStats // the filter's, by alias, kept across reloads
}

type outSlot struct {
	cfg config.Output
	out output.Output
	all bool // match "*"
}

// newGeneration makes the generation of cfg with its built stages: the
// filters' counters carry on from the filters of the same alias before,
// and the outputs are the running ones, matched by alias (a reload that
// would add, remove or change one other than its match is refused before
// this).
func (p *Pipeline) newGeneration(cfg *config.Config, stages []*stage) *generation {
	g := &generation{cfg: cfg, stages: stages}
	p.mu.Lock()
	if p.filterStats == nil {
		p.filterStats = map[string]*stageStats{}
	}
	for _, s := range stages {
		if p.filterStats[s.cfg.Alias] == nil {
			p.filterStats[s.cfg.Alias] = &stageStats{}
		}
		s.stats = p.filterStats[s.cfg.Alias]
	}
	p.mu.Unlock()
	byAlias := map[string]*outSlot{}
	for _, o := range p.outputs {
		byAlias[o.cfg.Alias] = o
	}
	for _, oc := range cfg.Outputs {
		if o := byAlias[oc.Alias]; o != nil {
			g.outputs = append(g.outputs, &outSlot{cfg: oc, out: o.out, all: oc.Match == "*"})
			g.anyAll = g.anyAll || oc.Match == "*"
		}
	}
	g.keep = g.otlpFields()
	return g
}

// acquire returns the current generation, held until release. A reload
// may swap the generation between the load and the count: then the count
// is given back and the new one taken, so that a retired generation that
// no batch holds is never taken up again.
func (p *Pipeline) acquire() *generation {
	for {
		g := p.gen.Load()
		g.refs.Add(1)
		if p.gen.Load() == g {
			return g
		}
		g.release()
	}
}

// release ends a batch's hold on g; the last one of a retired generation
// closes its stages.
func (g *generation) release() {
	if g.refs.Add(-1) == 0 && g.retired.Load() {
		g.closeStages()
	}
}

// retire marks g replaced (p.gen no longer points to it): its stages are
// closed now if no batch holds it, else by the last batch that does.
func (g *generation) retire() {
	g.retired.Store(true)
	if g.refs.Load() == 0 {
		g.closeStages()
	}
}

// closeStages closes the stages, once (nil when they were closed
// before).
func (g *generation) closeStages() error {
	var errs []error
	g.closed.Do(func() {
		for _, s := range g.stages {
			errs = append(errs, s.proc.Close())
		}
	})
	return errors.Join(errs...)
}

// bind ties the stages that can be to ctx, the run's context.
func (g *generation) bind(ctx context.Context) {
	for _, s := range g.stages {
		if b, ok := s.proc.(contextBinder); ok {
			b.BindContext(ctx)
		}
	}
}
