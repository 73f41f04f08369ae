package pipeline

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/luascript"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
)

// NewStage builds the processor of a filter from its config: a policy on
// one of the registered backends (package backend; vm when none is named),
// or a Fluent Bit-style Lua script (backend lua_script). A policy with
// errors fails here, with every diagnostic, before anything runs; a
// policy's warnings are kept for Pipeline.Warnings.
func NewStage(f config.Filter, dir string) (Processor, error) {
	return newStage(f, dir, compiler.NewLoader(nil))
}

// newStage is NewStage with the modules the policy imports loaded by
// loader, which the other stages of the pipeline share.
func newStage(f config.Filter, dir string, loader *compiler.Loader) (Processor, error) {
	if f.Backend == config.ScriptBackend {
		return newScriptStage(f, dir)
	}
	path := resolve(dir, f.File)
	src, err := policy.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := f.Backend
	if name == "" {
		name = backend.Names()[0]
	}
	b, err := backend.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w or %s", err, config.ScriptBackend)
	}
	file, info, diags := compiler.CheckFileParams(path, src, f.Params, compiler.WithLoader(loader))
	if diags.HasErrors() {
		return nil, policyErrors(src, diags)
	}
	store := state.NewStore()
	prog, err := b.Load(file, info, spec.Options{Params: f.Params, State: store, Limits: spec.Limits{MaxSplit: f.MaxSplit}})
	if err != nil {
		return nil, err
	}
	s := &policyStage{prog: prog, splits: backend.Splits(prog)}
	if len(info.StateOrder) > 0 {
		s.store, s.memory = store, info.StateMemory()
	}
	if _, n := diags.Count(); n > 0 {
		var b bytes.Buffer
		diag.WriteText(&b, src, diags)
		s.warn = Warnings{File: path, N: n, Text: b.Bytes()}
	}
	return s, nil
}

// newScriptStage loads a Fluent Bit-style Lua filter, from its script
// or its inline code, with Fluent Bit's options. print writes to stderr,
// prefixed with the filter's alias.
func newScriptStage(f config.Filter, dir string) (Processor, error) {
	name, prefix, src := resolve(dir, f.File), f.File, []byte(f.Code)
	if f.Code != "" {
		// Fluent Bit's name for an inline script.
		name, prefix = "fluentbit.lua", "fluentbit.lua"
	} else {
		var err error
		if src, err = policy.ReadFile(name); err != nil {
			return nil, err
		}
	}
	s, err := luascript.LoadLimits(name, src, f.Call, luascript.Limits{Time: f.TimeLimit, Memory: f.MemoryLimit})
	if err != nil {
		return nil, err
	}
	s.PrintPrefix = prefix
	if f.Alias != "" {
		s.PrintPrefix = f.Alias // the filter's name, as in the logs and the summary
	}
	s.TimeAsTable = f.TimeAsTable
	s.TypeIntKeys, s.TypeArrayKeys = f.TypeIntKeys, f.TypeArrayKeys
	s.AllowGetenv = f.AllowGetenv
	return &policyStage{prog: s}, nil
}

func policyErrors(src []byte, diags compiler.Diagnostics) error {
	var b bytes.Buffer
	diag.WriteText(&b, src, diags)
	return fmt.Errorf("the policy does not compile:\n%s", bytes.TrimRight(b.Bytes(), "\n"))
}

// policyStage runs a loaded program over a batch: in one RunBatch call
// where the backend has one, record by record else (RunSplit for a
// program that can split records), every record a run of one batch
// (spec.Batch: one time for them all). Programs are safe for concurrent
// use, and so is the stage.
type policyStage struct {
	prog    backend.Program
	results sync.Pool // []spec.Result scratch, one per concurrent batch
	warn    Warnings  // the policy's warnings (N == 0 when none)
	// splits says the policy has a split: its runs make sequences of
	// records (backend.RunAll), each with its result (processPieces).
	splits bool
	pieces sync.Pool // []backend.Piece scratch, as results
	// store holds the memory of the policy's dedupe, rate_limit and
	// sample statements (nil without any), which can take up to memory
	// bytes.
	store  *state.Store
	memory int64
}

// StateStore is the Store of the policy's stateful statements, or nil.
func (s *policyStage) StateStore() *state.Store { return s.store }

// StateMemory is the most bytes the policy's stateful statements can
// hold (check.Info.StateMemory).
func (s *policyStage) StateMemory() int64 { return s.memory }

func (s *policyStage) warnings() Warnings { return s.warn }

// split is the records a run split one record into, after it.
type split struct {
	i     int
	extra []*record.Record
}

func (s *policyStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	if s.splits {
		return s.processPieces(recs)
	}
	res, _ := s.results.Get().(*[]spec.Result)
	if res == nil {
		res = new([]spec.Result)
	}
	if cap(*res) < len(recs) {
		*res = make([]spec.Result, len(recs))
	}
	results := (*res)[:len(recs)]
	var c StageCounts
	var splits []split
	if bp, ok := s.prog.(backend.BatchProgram); ok {
		if err := bp.RunBatch(recs, results); err != nil {
			// A batch program fails only as a whole; pass every record
			// through, counted, rather than lose one.
			for i := range results {
				results[i] = spec.Result{Fault: spec.LuaError}
			}
			whole := spec.Result{Fault: spec.LuaError}
			noteErr(&c, &whole, err)
		}
	} else if sp, ok := s.prog.(backend.SplitProgram); ok {
		for i, r := range recs {
			var extra []*record.Record
			var err error
			results[i], extra, err = sp.RunSplit(r)
			if err != nil {
				noteErr(&c, &results[i], err)
			}
			if len(extra) > 0 {
				splits = append(splits, split{i, extra})
				c.Added += int64(len(extra))
			}
		}
	} else if ib, ok := s.prog.(backend.InBatch); ok {
		var b spec.Batch
		for i, r := range recs {
			var err error
			if results[i], err = ib.RunIn(&b, r); err != nil {
				noteErr(&c, &results[i], err)
			}
		}
	} else {
		for i, r := range recs {
			var err error
			if results[i], err = s.prog.Run(r); err != nil {
				noteErr(&c, &results[i], err)
			}
		}
	}
	kept := recs[:0]
	if len(splits) > 0 {
		// The output is longer than the input: it cannot overwrite it.
		kept = make([]*record.Record, 0, len(recs)+int(c.Added))
	}
	for i, r := range recs {
		out := results[i]
		if !c.count(out) {
			continue
		}
		kept = append(kept, r)
		if len(splits) > 0 && splits[0].i == i {
			kept = append(kept, splits[0].extra...)
			splits = splits[1:]
		}
	}
	s.results.Put(res)
	return kept, c
}

// processPieces runs a policy with a split: each record becomes the
// records of its run, in its place and in order, each counted by its
// result; those the split added beyond the first are StageCounts.Added.
func (s *policyStage) processPieces(recs []*record.Record) ([]*record.Record, StageCounts) {
	buf, _ := s.pieces.Get().(*[]backend.Piece)
	if buf == nil {
		buf = new([]backend.Piece)
	}
	var c StageCounts
	// The output may be longer than the input: it cannot overwrite it.
	kept := make([]*record.Record, 0, len(recs))
	c.Made = make([]int32, len(recs))
	var b spec.Batch
	for i, r := range recs {
		pieces, err := backend.RunAllIn(&b, s.prog, r, (*buf)[:0])
		*buf = pieces[:0]
		if err != nil {
			// RunAll has passed on the records concerned, faulted.
			noteErr(&c, &pieces[len(pieces)-1].Result, err)
		}
		c.Added += int64(len(pieces) - 1)
		for _, pc := range pieces {
			if c.count(pc.Result) {
				kept = append(kept, pc.Rec)
				c.Made[i]++
			}
		}
		clear(pieces)
	}
	s.pieces.Put(buf)
	return kept, c
}

// count counts one result and reports whether its record is kept.
func (c *StageCounts) count(out spec.Result) bool {
	if out.Fault != spec.NoFault {
		c.Faulted++
		if c.Faults == nil {
			c.Faults = map[string]int64{}
		}
		c.Faults[out.Fault.String()]++
	}
	if out.Kept() {
		return true
	}
	c.Dropped++
	if out.Why != spec.ByPolicy {
		c.Drops[out.Why]++
	}
	return false
}

// noteErr applies the error of a run to its result: with a fault it
// describes the fault, kept among the batch's first messages; without
// one it is a failure of the backend itself, and the record goes on as it
// came in, counted as the Lua error it is.
func noteErr(c *StageCounts, res *spec.Result, err error) {
	if !res.Faulted() {
		*res = spec.Result{Fault: spec.LuaError}
	}
	if len(c.Messages) < MaxFaultMessages {
		c.Messages = append(c.Messages, FaultMessage{Reason: res.Fault.String(), Msg: err.Error()})
	}
}

func (s *policyStage) Close() error { return nil }
