// Package pipeline runs log pipelines: tail inputs → parsers → policy stages
// → outputs, in batches, checkpointing only what the outputs accepted.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/pipeline/checkpoint"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
	"github.com/policyrun/policyrun/pipeline/tail"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// Processor is one policy stage: it runs over a batch in place and returns
// the records it kept (in order) and what it did. It must not keep the
// records, or values of their arena, once Process returns: the pipeline
// reuses the arena for the records that follow. Implementations for the
// VM, the transpiled Lua policy and Fluent Bit-style Lua scripts are in
// stage.go.
type Processor interface {
	Process(recs []*record.Record) ([]*record.Record, StageCounts)
	Close() error
}

// StageCounts is what a stage did to one batch.
type StageCounts struct {
	Dropped int64
	Faulted int64
	// Faults counts faults by reason (nil when there were none).
	Faults map[string]int64
	// Messages describe some of the batch's faults, at most
	// MaxFaultMessages, for the stages that can say what went wrong (a
	// Lua error's message); faults without one are only counted. The
	// pipeline logs the first MaxFaultMessages of each filter and counts
	// the rest.
	Messages []FaultMessage
	// Added counts the records the stage added by splitting records into
	// several (a policy's split, a Lua script returning an array of
	// records): a record split into n adds n-1. Each follows the record
	// it came from in the kept slice. A split of an empty array adds
	// none; it drops the record (Drops[spec.SplitEmpty]).
	Added int64
	// Drops counts the dropped records by spec.DropReason, those the
	// policy's drop or on_fault drop dropped left out (Drops[ByPolicy]
	// stays 0). An array, not a map: a batch of a dedupe drops most of
	// its records, and counting them must not allocate.
	Drops [spec.NumDropReasons]int64
	// Made, when a stage sets it (a policy with split), is how many
	// records of kept each record it ran over became, in order: a split
	// may drop the first of them and keep the others, which then cannot
	// be told from the next record's.
	Made []int32
}

// FaultMessage is what a stage says of one fault.
type FaultMessage struct {
	Reason string // as in StageCounts.Faults: "lua_error"
	Msg    string // "f.lua:4: attempt to index a nil value"
}

// MaxFaultMessages is how many fault messages a stage need give per batch,
// and how many the pipeline logs of each filter in a run: a broken filter,
// faulting on every record, must not flood the log. Further faults are
// counted in the summary and the metrics.
const MaxFaultMessages = 5

// Options are the parts of a run that do not come from the config.
type Options struct {
	Stdout io.Writer    // the stdout output's destination; os.Stdout when nil
	Logger *slog.Logger // problems worth a line: unreadable files, bad checkpoints
	// NewProcessor builds a policy stage from its config; tests replace it.
	// Nil means NewStage, the stages of one load of the config sharing one
	// compiler.Loader: a module that several policies import is read,
	// parsed and checked once. A reload calls it for every filter of the
	// new config, and closes the processors it replaces once no batch runs
	// on them.
	NewProcessor func(f config.Filter, dir string) (Processor, error)
	// Check builds the pipeline only to find its problems (run --check):
	// file outputs are checked but neither created nor opened, so the
	// pipeline must not Run.
	Check bool
	// OnReload, when set, is called after each reload (Reload, SIGHUP,
	// service.watch) with its error: nil when the new config runs. The
	// errors are logged before it is called.
	OnReload func(error)

	// readModule reads the modules that policies import (nil:
	// policy.ReadFile); tests count its reads.
	readModule compiler.ReadFunc
	// loader, when set, loads the modules of this load of the config (a
	// reload's, which watches the files it read); nil: one of New's own.
	loader *compiler.Loader
}

// Warnings are the checker's warnings of one policy file.
type Warnings struct {
	File string // the policy file, as the config resolves it
	N    int    // how many warnings
	Text []byte // the warnings as policyrun check prints them
}

// warner is a Processor whose policy may have warnings.
type warner interface{ warnings() Warnings }

// Warnings returns the warnings of the pipeline's policies: one entry per
// policy file that has any (once for a file that several filters run), in
// the order of the filters.
func (p *Pipeline) Warnings() []Warnings {
	return p.gen.Load().warnings()
}

func (g *generation) warnings() []Warnings {
	var out []Warnings
	seen := map[string]bool{}
	for _, s := range g.stages {
		w, ok := s.proc.(warner)
		if !ok {
			continue
		}
		if ws := w.warnings(); ws.N > 0 && !seen[ws.File] {
			seen[ws.File] = true
			out = append(out, ws)
		}
	}
	return out
}

// Pipeline is a configured pipeline, ready to Run.
type Pipeline struct {
	// cfg is the config New was given: the service keys that a reload
	// may not change are read from it. The config that runs is the
	// generation's.
	cfg   *config.Config
	log   *slog.Logger
	opts  Options // for what a reload builds
	check bool    // Options.Check

	// gen is the running generation: the filters and the routes to the
	// outputs, replaced by a reload between two batches (generation.go).
	gen atomic.Pointer[generation]
	// outputs are every output, in cfg's order; a reload keeps them.
	outputs []*outSlot

	// mu guards the inputs and how they run (inputs.go), and the
	// counters of filters and inputs, kept by alias across reloads.
	mu          sync.Mutex
	order       []*inputRef // every input, in the running config's order
	runs        runState
	filterStats map[string]*stageStats
	// stateMu serializes saves of the filters' state.
	stateMu     sync.Mutex
	inputStats  map[string]*inputStats
	retiredTail tail.Stats // what inputs a reload stopped had counted
	// reloading serializes reloads (SIGHUP, service.watch, Reload) and
	// guards watched: what the watch knows of the config's files.
	reloading sync.Mutex
	watched   map[string]fileState

	stats Stats
	// started and ended are UnixNano times of Run, read by the metrics
	// server while it runs.
	started, ended atomic.Int64
	// stopping is set when the run's context ends (readiness).
	stopping atomic.Bool

	// writeCtx is the context of output Writes: it ends service.grace
	// after the run is stopped, so that a Write waiting on an output that
	// cannot deliver lets the stop finish (its batch is not checkpointed).
	writeCtx     context.Context
	cancelWrites context.CancelFunc
	shutdown     sync.Once
}

// New builds a pipeline from cfg: it opens outputs, compiles policies and
// loads checkpoints, so that every problem shows before anything runs.
func New(cfg *config.Config, opts Options) (*Pipeline, error) {
	p := &Pipeline{cfg: cfg, log: opts.Logger, check: opts.Check}
	p.writeCtx, p.cancelWrites = context.WithCancel(context.Background())
	p.runs.idle.L = &p.mu
	if p.log == nil {
		p.log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if opts.Stdout == nil {
		opts.Stdout = os.Stdout
	}
	opts.Logger = p.log
	p.opts = opts
	// One Loader for this load of the config: the modules are read once
	// for all its policies, and again at the next reload, which sees what
	// changed in them.
	loader := opts.loader
	if loader == nil {
		loader = compiler.NewLoader(opts.readModule)
	}
	stages, errs := p.newStages(cfg, loader)
	if err := checkStateMemory(cfg, stages); err != nil {
		errs = append(errs, err)
	}
	if !opts.Check {
		p.loadStates(cfg, stages)
	}
	for _, o := range cfg.Outputs {
		f, _ := output.Lookup(o.Name) // config knows only registered names
		out, err := f.New(o.Settings, output.Env{
			Alias:   o.Alias,
			Dir:     cfg.Dir,
			DataDir: resolve(cfg.Dir, cfg.Service.DataDir),
			Stdout:  opts.Stdout,
			Logger:  p.log.With("output", o.Alias),
			Check:   opts.Check,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("output at line %d: %w", o.Line, err))
			continue
		}
		p.outputs = append(p.outputs, &outSlot{cfg: o, out: out, all: o.Match == "*"})
	}
	p.gen.Store(p.newGeneration(cfg, stages))
	for _, ic := range cfg.Inputs {
		ref, err := p.newInputRef(cfg, ic, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("input at line %d: %w", ic.Line, err))
			continue
		}
		p.order = append(p.order, ref)
	}
	if err := errors.Join(errs...); err != nil {
		p.Close()
		return nil, err
	}
	if cfg.File != "" && !opts.Check {
		p.watched = snapshot(watchedFiles(cfg, loader.Files()), nil)
	}
	return p, nil
}

// newStages builds the stages of cfg's filters (their counters are the
// generation's to give), with every filter's errors; the policies'
// modules come from loader.
func (p *Pipeline) newStages(cfg *config.Config, loader *compiler.Loader) ([]*stage, []error) {
	var stages []*stage
	var errs []error
	for _, f := range cfg.Filters {
		if f.Backend == config.ScriptBackend && f.Name == "lua" && !f.ProtectedMode {
			p.log.Warn("protected_mode: false is ignored: a Lua filter always runs protected, its errors faulting one record",
				"filter_line", f.Line)
		}
		var proc Processor
		var err error
		if p.opts.NewProcessor != nil {
			proc, err = p.opts.NewProcessor(f, cfg.Dir)
		} else {
			proc, err = newStage(f, cfg.Dir, loader)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("filter at line %d: %w", f.Line, err))
			continue
		}
		stages = append(stages, &stage{cfg: f, proc: proc, all: f.Match == "*"})
	}
	return stages, errs
}

func resolve(dir, path string) string { return output.Resolve(dir, path) }

// Run reads until ctx is cancelled or, with exit_on_eof, until every input
// has read everything. Either way it finishes the batch in hand, delivers it,
// saves the checkpoints, lets the outputs deliver what they hold for
// service.grace and returns; Close releases the rest.
//
// A stop waits for the outputs for service.grace in all: a Write still
// waiting then (a memory buffer whose receiver is down) gives up, and its
// batch is not checkpointed.
//
// An input that fails (an output that cannot be written) stops the whole
// run: the other inputs deliver the batch in hand and stop too, rather than
// reading on while part of the pipeline is dead.
func (p *Pipeline) Run(ctx context.Context) error {
	p.started.Store(time.Now().UnixNano())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, o := range p.outputs {
		if err := o.out.Start(ctx); err != nil {
			return fmt.Errorf("output %s: %w", o.cfg.Alias, err)
		}
	}
	grace := p.cfg.Service.Grace
	var stopped atomic.Int64 // when ctx ended, UnixNano
	ran := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-ran:
			return
		}
		stopped.Store(time.Now().UnixNano())
		p.stopping.Store(true)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			p.cancelWrites()
		case <-ran:
		}
	}()
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		p.watch(wctx)
	}()
	err := p.runInputs(ctx, cancel)
	stopWatch()
	<-watched // no reload runs past Run
	close(ran)
	// What the outputs hold is delivered for what is left of the grace
	// (all of it after exit_on_eof).
	deadline := time.Now().Add(grace)
	if at := stopped.Load(); at != 0 {
		deadline = time.Unix(0, at).Add(grace)
	}
	p.shutdownOutputs(deadline)
	if serr := p.saveStates(); serr != nil {
		p.log.Warn("cannot save the filters' state", "err", serr)
	}
	p.ended.Store(time.Now().UnixNano())
	p.logUnloggedFaults()
	return err
}

// shutdownOutputs shuts the outputs down, all at once, giving them until
// deadline to deliver; once.
func (p *Pipeline) shutdownOutputs(deadline time.Time) error {
	errs := make([]error, len(p.outputs))
	p.shutdown.Do(func() {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		var wg sync.WaitGroup
		for i, o := range p.outputs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = o.out.Shutdown(ctx)
			}()
		}
		wg.Wait()
		p.cancelWrites()
	})
	return errors.Join(errs...)
}

// Close closes inputs, stages and outputs (those a Run did not shut down
// are closed at once).
func (p *Pipeline) Close() error {
	var errs []error
	p.mu.Lock()
	order := p.order
	p.mu.Unlock()
	for _, in := range order {
		errs = append(errs, in.close())
	}
	errs = append(errs, p.gen.Load().closeStages())
	errs = append(errs, p.shutdownOutputs(time.Now()))
	return errors.Join(errs...)
}

// process runs one batch of records through the stages and the outputs of
// the generation the tags were made for, which the caller holds.
// Each input calls it from its own goroutine, with its own scratch slices;
// stages and outputs are safe for concurrent use.
func (p *Pipeline) process(recs []*record.Record, tags *tagCache, sc *scratch) error {
	return p.processWith(recs, tags, sc, output.WriteOptions{}, nil)
}

// processWith is process with the outputs' Write options, adding to res
// what the outputs did not take.
func (p *Pipeline) processWith(recs []*record.Record, tags *tagCache, sc *scratch, opts output.WriteOptions, res *output.Result) error {
	for si, s := range tags.g.stages {
		if s.all {
			n := len(recs)
			kept, counts := s.proc.Process(recs)
			p.addStage(s, n, counts)
			recs = kept
			continue
		}
		n := 0
		for _, r := range recs {
			if tags.matchStage(r, si) {
				n++
			}
		}
		switch n {
		case 0:
			continue
		case len(recs):
			kept, counts := s.proc.Process(recs)
			p.addStage(s, n, counts)
			recs = kept
			continue
		}
		// Records whose tag the stage does not match pass it untouched,
		// keeping their place in the batch. The stage writes what it keeps
		// over the slice it is given, so the selection is kept apart.
		sc.sel, sc.orig = sc.sel[:0], sc.orig[:0]
		for _, r := range recs {
			if tags.matchStage(r, si) {
				sc.sel = append(sc.sel, r)
			}
		}
		sc.orig = append(sc.orig, sc.sel...)
		kept, counts := s.proc.Process(sc.sel)
		p.addStage(s, n, counts)
		if counts.Added > 0 || counts.Made != nil {
			recs = mergeSplit(recs, sc.orig, kept, counts.Made)
		} else {
			recs = removeDropped(recs, sc.orig, kept)
		}
	}
	// A record whose tag no output matches (a policy may have changed it)
	// goes nowhere: count it, rather than let it vanish as "out".
	var unrouted int64
	if !tags.g.anyAll {
		for _, r := range recs {
			if !tags.of(r).routed {
				unrouted++
			}
		}
	}
	if err := p.write(recs, tags, sc, opts, res); err != nil {
		return err
	}
	p.stats.Out.Add(int64(len(recs)) - unrouted)
	p.stats.Unrouted.Add(unrouted)
	return nil
}

// write hands recs to every output that matches them, one after the
// other, and adds to res what each did not take (the most any one output
// did not take: a record refused by two outputs is counted once when
// their refusals overlap). An output's error stops it.
func (p *Pipeline) write(recs []*record.Record, tags *tagCache, sc *scratch, opts output.WriteOptions, res *output.Result) error {
	for oi, o := range tags.g.outputs {
		sel := recs
		if !o.all {
			sc.out = sc.out[:0]
			for _, r := range recs {
				if tags.matchOutput(r, oi) {
					sc.out = append(sc.out, r)
				}
			}
			sel = sc.out
		}
		if len(sel) == 0 {
			continue
		}
		r, err := o.out.Write(p.writeCtx, sel, opts)
		if err != nil {
			if p.writeCtx.Err() != nil {
				return errStopped
			}
			if errors.Is(err, output.ErrFull) {
				return err
			}
			return fmt.Errorf("output %s: %w", o.cfg.Alias, err)
		}
		if res != nil {
			res.Dropped = max(res.Dropped, r.Dropped)
			res.Rejected = max(res.Rejected, r.Rejected)
		}
	}
	return nil
}

// errStopped is what a Write returns when service.grace ran out during a
// stop: the batch is not checkpointed, and the input just stops.
var errStopped = errors.New("stopped before the outputs had the records (service.grace)")

// scratch is the per-input room process needs for a stage or an output
// that matches part of a batch.
type scratch struct{ sel, orig, out []*record.Record }

// removeDropped removes from recs the records of sel that a stage dropped:
// those not in kept, which holds the rest of sel in order. sel and kept
// follow the order of recs, so one walk suffices; sel is overwritten.
func removeDropped(recs, sel, kept []*record.Record) []*record.Record {
	if len(kept) == len(sel) {
		return recs
	}
	return without(recs, without(sel, kept))
}

// mergeSplit puts what a stage kept of sel, the records of recs it ran
// over, in their place. With made (StageCounts.Made), each record of sel
// is replaced by its made[i] records of kept; without, by itself and the
// records split from it, which follow it in kept, or by nothing when it
// was dropped. It returns a new slice.
func mergeSplit(recs, sel, kept []*record.Record, made []int32) []*record.Record {
	out := make([]*record.Record, 0, len(recs)-len(sel)+len(kept))
	if made != nil {
		i, k := 0, 0
		for _, r := range recs {
			if i < len(sel) && sel[i] == r {
				n := int(made[i])
				out = append(out, kept[k:k+n]...)
				i, k = i+1, k+n
				continue
			}
			out = append(out, r)
		}
		return out
	}
	selected := make(map[*record.Record]bool, len(sel))
	for _, r := range sel {
		selected[r] = true
	}
	k := 0
	for _, r := range recs {
		if !selected[r] {
			out = append(out, r)
			continue
		}
		if k < len(kept) && kept[k] == r {
			out = append(out, r)
			for k++; k < len(kept) && !selected[kept[k]]; k++ {
				out = append(out, kept[k])
			}
		}
	}
	return out
}

// without removes from recs, in place, the records of sub, which follow
// the order of recs.
func without(recs, sub []*record.Record) []*record.Record {
	out, k := recs[:0], 0
	for _, r := range recs {
		if k < len(sub) && sub[k] == r {
			k++
			continue
		}
		out = append(out, r)
	}
	return out
}

// Match reports whether a tag matches a Fluent Bit match pattern, where '*'
// stands for any run of characters.
func Match(pattern, tag string) bool {
	for {
		star := strings.IndexByte(pattern, '*')
		if star < 0 {
			return pattern == tag
		}
		if !strings.HasPrefix(tag, pattern[:star]) {
			return false
		}
		tag = tag[star:]
		pattern = pattern[star+1:]
		if pattern == "" {
			return true
		}
		// Try every place the rest of the pattern could start.
		for i := 0; i <= len(tag); i++ {
			if Match(pattern, tag[i:]) {
				return true
			}
		}
		return false
	}
}

// checkpointStore opens the checkpoint file of an input and loads it. A
// checkpoint that cannot be read is reported and ignored: the input then
// starts as read_from_head says, and the next save replaces the file.
func (p *Pipeline) checkpointStore(alias, path string) (*checkpoint.Store, *checkpoint.Checkpoint) {
	if path == "" {
		return nil, nil
	}
	store := checkpoint.NewStore(checkpoint.FileStorage{Path: path})
	cp, format, err := store.Load()
	switch {
	case errors.Is(err, os.ErrNotExist):
		return store, nil
	case err != nil:
		p.log.Warn("checkpoint unreadable; starting as read_from_head says", "input", alias, "file", path, "err", err)
		p.stats.BadCheckpoints.Add(1)
		return store, nil
	case format != checkpoint.Protobuf:
		p.log.Info("checkpoint in an older layout; it is rewritten in the current one on the next save", "input", alias, "file", path, "layout", format)
	}
	return store, cp
}
