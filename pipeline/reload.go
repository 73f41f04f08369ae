package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/pipeline/config"
)

// Reload reads the config again from its file (config.Config.File), with
// the policies and scripts it names, and checks all of it as run --check
// does. When anything is wrong, or the new config changes what cannot
// change while the pipeline runs (reloadable), nothing changes: every
// error is logged and returned, and the running config goes on. Else the
// new filters replace the old between two batches (a batch runs wholly
// on the old ones or wholly on the new), the outputs' new match takes
// effect with them, and the inputs whose config changed are restarted:
// stopped as a stop does (the batch in hand delivered, the checkpoint
// saved) and started anew from their checkpoint; inputs added start,
// inputs removed stop. The other inputs, the outputs and their buffers
// run on untouched.
//
// SIGHUP (policyrun run) and service.watch call it; reloads take turns.
func (p *Pipeline) Reload() error {
	p.reloading.Lock()
	defer p.reloading.Unlock()
	return p.reloadLocked()
}

// reloadLocked is Reload, with p.reloading held.
func (p *Pipeline) reloadLocked() error {
	file := p.gen.Load().cfg.File
	pre := p.watchFrom()
	did, cfg, modules, err := p.reload()
	p.reloadWatched(cfg, modules, pre)
	if err != nil {
		p.stats.FailedReloads.Add(1)
		n := 0
		for _, e := range flatten(err) {
			for _, line := range strings.Split(strings.TrimRight(e.Error(), "\n"), "\n") {
				p.log.Error("reload: "+line, "config", file)
			}
			n++
		}
		p.log.Error("reload failed; the running config goes on", "config", file, "errors", n)
	} else {
		p.stats.Reloads.Add(1)
		p.stats.LastReload.Store(time.Now().UnixNano())
		p.log.Info("reloaded", append([]any{"config", file}, did...)...)
	}
	if p.opts.OnReload != nil {
		p.opts.OnReload(err)
	}
	return err
}

// flatten returns the errors err joins (errors.Join, config.ErrorList),
// one by one.
func flatten(err error) []error {
	var list config.ErrorList
	if errors.As(err, &list) {
		out := make([]error, len(list))
		for i, e := range list {
			out[i] = e
		}
		return out
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// reload does the work of Reload; did describes what changed, as
// key-value pairs for the log, cfg is the config it read (nil when it
// could not read one) and modules the module files its policies import
// (those that failed too, for the watch to see them mended).
func (p *Pipeline) reload() (did []any, cfg *config.Config, modules []string, err error) {
	cur := p.gen.Load()
	if cur.cfg.File == "" {
		return nil, nil, nil, errors.New("the config was not read from a file (config.Load): there is nothing to read again")
	}
	if p.ended.Load() != 0 {
		return nil, nil, nil, errors.New("the run has ended")
	}
	cfg, err = config.Load(cur.cfg.File)
	if err != nil {
		return nil, nil, nil, err
	}
	// Every check of run --check, policies compiled, whether or not the
	// config can be reloaded, so that every error shows at once. The
	// check builds the stages for real: they are the ones that will run.
	changes, rerr := reloadable(cur.cfg, cfg)
	loader := compiler.NewLoader(p.opts.readModule)
	check, cerr := New(cfg, Options{Check: true, Logger: p.log, NewProcessor: p.opts.NewProcessor, Stdout: p.opts.Stdout,
		loader: loader})
	modules = loader.Files()
	if err := errors.Join(rerr, cerr); err != nil {
		if check != nil {
			check.Close()
		}
		return nil, cfg, modules, err
	}
	stages := check.gen.Load().stages
	check.gen.Store(&generation{})
	check.Close()
	for _, w := range check.Warnings() {
		p.log.Warn("reload: the policy has warnings (policyrun check prints them)", "file", w.File, "warnings", w.N)
	}
	var inputs []inputChange
	running := map[string]*inputRef{}
	p.mu.Lock()
	for _, in := range p.order {
		running[in.config().Alias] = in
	}
	p.mu.Unlock()
	for _, c := range changes {
		c.old = running[c.alias]
		inputs = append(inputs, c)
	}
	p.carryState(stages)
	if err := p.replaceInputs(cfg, p.newGeneration(cfg, stages), inputs); err != nil {
		return nil, cfg, modules, err
	}
	did = []any{"filters", len(stages)}
	for _, c := range inputs {
		did = append(did, "input "+c.alias, c.why)
	}
	return did, cfg, modules, nil
}

// reloadable compares the running config with a new one and returns the
// inputs to start, stop and restart, or why the new config cannot be
// reloaded: it changes an output (other than its match), adds or removes
// one, or changes a service key other than those below. Each refusal
// names the key.
//
// In place: filters, whatever changes in them; outputs' match;
// service.watch and service.watch_interval. Restarted: an input whose keys
// changed, every tail input when service.batch_size changed, the tail
// inputs with multiline when service.multiline_parsers changed.
func reloadable(old, cfg *config.Config) ([]inputChange, error) {
	d := config.Diff(old, cfg)
	var errs []error
	var batchSize, multiline bool // restart the tail inputs, those with multiline
	for _, k := range d.Service {
		switch k {
		case "watch", "watch_interval":
		case "batch_size":
			batchSize = true
		case "multiline_parsers":
			multiline = true
		default:
			errs = append(errs, fmt.Errorf("service.%s changed: a reload cannot change it (restart policyrun)", k))
		}
	}
	for _, c := range d.Outputs {
		switch {
		case c.Added:
			errs = append(errs, fmt.Errorf("output %s added: a reload cannot add an output (restart policyrun)", c.Alias))
		case c.Removed:
			errs = append(errs, fmt.Errorf("output %s removed: a reload cannot remove an output (restart policyrun)", c.Alias))
		default:
			if keys := slices.DeleteFunc(c.Keys, func(k string) bool { return k == "match" }); len(keys) > 0 {
				errs = append(errs, fmt.Errorf("output %s: %s changed: a reload changes only an output's match (restart policyrun)", c.Alias, strings.Join(keys, ", ")))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	byAlias := map[string]*config.Input{}
	for i := range cfg.Inputs {
		byAlias[cfg.Inputs[i].Alias] = &cfg.Inputs[i]
	}
	var out []inputChange
	changed := map[string]bool{}
	for _, c := range d.Inputs {
		ic := inputChange{alias: c.Alias, new: byAlias[c.Alias]}
		switch {
		case c.Added:
			ic.why = "added"
		case c.Removed:
			ic.why = "removed"
		default:
			ic.why = strings.Join(c.Keys, ", ") + " changed"
		}
		changed[c.Alias] = true
		out = append(out, ic)
	}
	for i := range cfg.Inputs {
		ic := &cfg.Inputs[i]
		if changed[ic.Alias] || ic.Name != "tail" {
			continue
		}
		switch {
		case batchSize:
			out = append(out, inputChange{alias: ic.Alias, new: ic, why: "service.batch_size changed"})
		case multiline && ic.Multiline != nil:
			out = append(out, inputChange{alias: ic.Alias, new: ic, why: "service.multiline_parsers changed"})
		}
	}
	return out, nil
}
