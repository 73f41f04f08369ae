package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/policyrun/policyrun/pipeline/checkpoint"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

// stateful is a processor whose policy may remember records (dedupe,
// rate_limit, sample: docs/language.md, "State"): its Store (nil when it
// has no such statement), and the most bytes its statements' keys can
// take.
type stateful interface {
	StateStore() *state.Store
	StateMemory() int64
}

// stateOf returns the processor's Store, or nil when it keeps none.
func stateOf(p Processor) *state.Store {
	if s, ok := p.(stateful); ok {
		return s.StateStore()
	}
	return nil
}

// statePath is where a filter keeps its state: data_dir/state/<alias>.
func statePath(dataDir, alias string) string {
	return filepath.Join(dataDir, "state", alias+".state")
}

// checkStateMemory refuses stages whose policies could together hold
// more keys than service.state_memory_limit allows, naming each policy
// and what it may hold.
func checkStateMemory(cfg *config.Config, stages []*stage) error {
	limit := cfg.Service.StateMemoryLimit
	if limit <= 0 {
		limit = spec.DefaultStateMemory
	}
	var total int64
	var each []string
	for _, s := range stages {
		st, ok := s.proc.(stateful)
		if !ok || st.StateMemory() == 0 {
			continue
		}
		total += st.StateMemory()
		each = append(each, fmt.Sprintf("%s (%s) %s", s.cfg.Alias, s.cfg.File, sizeText(st.StateMemory())))
	}
	if total <= limit {
		return nil
	}
	return fmt.Errorf("the policies' state may take %s, over service.state_memory_limit %s: %s; lower their max_keys, or raise the limit",
		sizeText(total), sizeText(limit), strings.Join(each, ", "))
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// loadStates reads each stateful stage's saved state from data_dir. One
// that cannot be read is logged and counted with the bad checkpoints, and
// its stage starts empty: forgetting keys lets repeats through, and loses
// no record.
func (p *Pipeline) loadStates(cfg *config.Config, stages []*stage) {
	if cfg.Service.DataDir == "" {
		return
	}
	dir := resolve(cfg.Dir, cfg.Service.DataDir)
	for _, s := range stages {
		store := stateOf(s.proc)
		if store == nil {
			continue
		}
		path := statePath(dir, s.cfg.Alias)
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = store.Restore(data)
		}
		if err != nil {
			p.stats.BadCheckpoints.Add(1)
			p.log.Warn("cannot load a filter's state; it starts empty", "filter", s.cfg.Alias, "file", path, "err", err)
		}
	}
}

// carryState gives the stages a reload built the state of the running
// stages of the same alias: a statement whose text did not change keeps
// its keys. (A batch still running on an old stage may add a key after
// the copy: at most that batch's keys are forgotten.)
func (p *Pipeline) carryState(stages []*stage) {
	old := map[string]*state.Store{}
	for _, s := range p.gen.Load().stages {
		if st := stateOf(s.proc); st != nil {
			old[s.cfg.Alias] = st
		}
	}
	for _, s := range stages {
		if st, prev := stateOf(s.proc), old[s.cfg.Alias]; st != nil && prev != nil {
			if err := st.Restore(prev.Snapshot()); err != nil {
				p.log.Warn("reload: cannot carry a filter's state over", "filter", s.cfg.Alias, "err", err)
			}
		}
	}
}

// saveStates writes each stateful stage's state to data_dir, atomically
// (write, fsync, rename, as checkpoints are), at the end of a run, when
// every record the state has seen is committed. Not with the checkpoint
// saves while records are in flight: a state saved then may hold the keys
// of records another input (or a request not yet answered) has not
// committed, and after a crash their re-read copies would be dropped as
// repeats of records that never left. A crash forgets the keys since the
// start instead, which lets repeats through and loses no record.
func (p *Pipeline) saveStates() error {
	g := p.gen.Load()
	if g == nil || g.cfg == nil || g.cfg.Service.DataDir == "" || p.check {
		return nil
	}
	p.stateMu.Lock()
	defer p.stateMu.Unlock()
	dir := resolve(g.cfg.Dir, g.cfg.Service.DataDir)
	var errs []error
	for _, s := range g.stages {
		store := stateOf(s.proc)
		if store == nil {
			continue
		}
		path := statePath(dir, s.cfg.Alias)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := (checkpoint.FileStorage{Path: path}).Store(store.Snapshot()); err != nil {
			errs = append(errs, fmt.Errorf("filter %s: cannot save its state: %w", s.cfg.Alias, err))
		}
	}
	return errors.Join(errs...)
}
