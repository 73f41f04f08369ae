package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"sync"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	"github.com/policyrun/policyrun/lua"
	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/record"
	"github.com/policyrun/policyrun/vm"
)

// NewStage builds the processor of a filter from its config: a policy on
// the VM (backend vm), the same policy transpiled to Lua (backend lua), or a
// Fluent Bit-style Lua script (backend lua_script). A policy with errors
// fails here, with every diagnostic, before anything runs.
func NewStage(f config.Filter, dir string) (Processor, error) {
	path := resolve(dir, f.File)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	switch f.Backend {
	case "vm", "":
		prog, diags := compiler.CompileFile(path, src)
		if diag.HasErrors(diags) {
			return nil, policyErrors(src, diags)
		}
		return newVMStage(prog), nil
	case "lua":
		file, info, diags := compiler.CheckFile(path, src)
		if diag.HasErrors(diags) {
			return nil, policyErrors(src, diags)
		}
		prog, err := lua.Compile(file, info)
		if err != nil {
			return nil, err
		}
		return &luaStage{run: prog.Run}, nil
	case "lua_script":
		s, err := lua.LoadScript(path, src, f.Call)
		if err != nil {
			return nil, err
		}
		return &luaStage{run: s.Run}, nil
	}
	return nil, fmt.Errorf("unknown backend %q", f.Backend)
}

func policyErrors(src []byte, diags []diag.Diagnostic) error {
	var b bytes.Buffer
	diag.WriteText(&b, src, diags)
	return fmt.Errorf("the policy does not compile:\n%s", bytes.TrimRight(b.Bytes(), "\n"))
}

// vmStage runs a compiled Program over a batch with one RunBatch call.
type vmStage struct {
	prog    *vm.Program
	results sync.Pool // []vm.Result scratch, one per concurrent batch
}

func newVMStage(prog *vm.Program) *vmStage {
	return &vmStage{prog: prog}
}

func (s *vmStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	res, _ := s.results.Get().(*[]vm.Result)
	if res == nil {
		res = new([]vm.Result)
	}
	if cap(*res) < len(recs) {
		*res = make([]vm.Result, len(recs))
	}
	results := (*res)[:len(recs)]
	s.prog.RunBatch(recs, results)
	var c StageCounts
	kept := recs[:0]
	for i, r := range recs {
		out := results[i]
		if out.Fault != vm.NoFault {
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

func (s *vmStage) Close() error { return nil }

// luaStage runs a transpiled policy or a Fluent Bit-style script record by
// record; both pool their Lua states, so it is safe for concurrent use.
type luaStage struct {
	run func(*record.Record) (lua.Result, error)
}

func (s *luaStage) Process(recs []*record.Record) ([]*record.Record, StageCounts) {
	var c StageCounts
	kept := recs[:0]
	for _, r := range recs {
		res, err := s.run(r)
		reason := res.Reason
		if err != nil && reason == "" {
			reason = lua.FaultLuaError
		}
		if res.Action == lua.Fault || reason != "" {
			c.Faulted++
			if c.Faults == nil {
				c.Faults = map[string]int64{}
			}
			c.Faults[reason]++
		}
		if res.Action == lua.Drop || res.Dropped {
			c.Dropped++
			continue
		}
		kept = append(kept, r)
	}
	return kept, c
}

func (s *luaStage) Close() error { return nil }
