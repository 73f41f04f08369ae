package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"sync"

	"github.com/policyrun/policyrun/backend"
	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/spec"
)

// NewStage builds the processor of a filter from its config: a policy on
// one of the registered backends (package backend; vm when none is named),
// or a Fluent Bit-style Lua script (backend lua_script). A policy with
// errors fails here, with every diagnostic, before anything runs.
func NewStage(f config.Filter, dir string) (Processor, error) {
	path := resolve(dir, f.File)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if f.Backend == config.ScriptBackend {
		s, err := lua.LoadScriptLimits(path, src, f.Call, lua.ScriptLimits{Time: f.TimeLimit, Memory: f.MemoryLimit})
		if err != nil {
			return nil, err
		}
		return &policyStage{prog: s}, nil
	}
	name := f.Backend
	if name == "" {
		name = backend.Names()[0]
	}
	b, err := backend.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w or %s", err, config.ScriptBackend)
	}
	file, info, diags := compiler.CheckFile(path, src)
	if diags.HasErrors() {
		return nil, policyErrors(src, diags)
	}
	prog, err := b.Load(file, info, spec.Options{})
	if err != nil {
		return nil, err
	}
	return &policyStage{prog: prog}, nil
}

func policyErrors(src []byte, diags compiler.Diagnostics) error {
	var b bytes.Buffer
	diag.WriteText(&b, src, diags)
	return fmt.Errorf("the policy does not compile:\n%s", bytes.TrimRight(b.Bytes(), "\n"))
}

// policyStage runs a loaded program over a batch: in one RunBatch call
// where the backend has one, else record by record. Programs are safe for
// concurrent use, and so is the stage.
type policyStage struct {
	prog    backend.Program
	results sync.Pool // []spec.Result scratch, one per concurrent batch
}

func (s *policyStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	res, _ := s.results.Get().(*[]spec.Result)
	if res == nil {
		res = new([]spec.Result)
	}
	if cap(*res) < len(recs) {
		*res = make([]spec.Result, len(recs))
	}
	results := (*res)[:len(recs)]
	if bp, ok := s.prog.(backend.BatchProgram); ok {
		if err := bp.RunBatch(recs, results); err != nil {
			// A batch program fails only as a whole; pass every record
			// through, counted, rather than lose one.
			for i := range results {
				results[i] = spec.Result{Fault: spec.LuaError}
			}
		}
	} else {
		for i, r := range recs {
			var err error
			if results[i], err = s.prog.Run(r); err != nil {
				// A failure of the backend itself: the record goes on as
				// it came in, counted as the Lua error it is.
				results[i] = spec.Result{Fault: spec.LuaError}
			}
		}
	}
	var c StageCounts
	kept := recs[:0]
	for i, r := range recs {
		out := results[i]
		if out.Fault != spec.NoFault {
			c.Faulted++
			if c.Faults == nil {
				c.Faults = map[string]int64{}
			}
			c.Faults[out.Fault.String()]++
		}
		if !out.Kept() {
			c.Dropped++
			continue
		}
		kept = append(kept, r)
	}
	s.results.Put(res)
	return kept, c
}

func (s *policyStage) Close() error { return nil }
