// Package exprbaseline holds the nine B1 policies as github.com/expr-lang/expr
// programs over map[string]any records decoded with encoding/json: what a Go
// developer would otherwise build, and the CPU baseline the VM is measured
// against.
package exprbaseline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	exprlang "github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"
)

// Op is one step of a baseline, in the order the policy runs them.
type Op struct {
	Kind OpKind
	Path string // dotted: "kubernetes.cluster"
	To   string // rename target; lift prefix
	Expr string // the condition (Drop, If) or the value (Set, SetIfAbsent)
	Then []Op   // If: run when Expr is true

	prog *vm.Program
}

// OpKind says what an Op does.
type OpKind int

const (
	Drop        OpKind = iota // drop the record when Expr is true
	Set                       // Path = Expr
	SetIfAbsent               // Path = Expr when absent or null
	Remove                    // delete Path
	Rename                    // move Path to To
	Lift                      // move each key k of the map at Path to its parent as To+k
	If                        // run Then when Expr is true
	MergeRoot                 // add the keys of the map Expr gives to the record, its values winning
)

// Baseline is one policy as expr programs and map edits.
type Baseline struct {
	Name string
	Kind string // "flat" or "k8s": the records it runs on
	Ops  []Op
}

// flatEnv and k8sEnv type the programs: expr checks every program against
// them at compile time. encoding/json decodes numbers as float64.
var (
	flatEnv = map[string]any{
		"level": "", "msg": "", "message": "", "user": "", "path": "", "method": "",
		"status": 0.0, "latency_ms": 0.0, "bytes": 0.0, "trace_id": "", "service": "", "time": "",
	}
	k8sEnv = map[string]any{
		"log": "", "stream": "", "time": "",
		"kubernetes": map[string]any{"labels": map[string]any{}, "annotations": map[string]any{}},
	}
)

// All returns the nine baselines, compiled, in B1 order.
func All() ([]*Baseline, error) {
	bs := []*Baseline{
		{Name: "1-noop", Kind: "flat"},
		{Name: "2-drop-all", Kind: "flat", Ops: []Op{{Kind: Drop, Expr: "true"}}},
		{Name: "3-edit", Kind: "flat", Ops: []Op{
			{Kind: Remove, Path: "trace_id"},
			{Kind: Set, Path: "env", Expr: `"prod"`},
		}},
		{Name: "4-read5-edit", Kind: "flat", Ops: []Op{
			{Kind: If, Expr: `level == "error" && status >= 500 && method == "POST" && hasPrefix(path, "/api/") && latency_ms > 100.0`,
				Then: []Op{{Kind: Set, Path: "alert", Expr: `"page-oncall"`}}},
		}},
		{Name: "5-k8s-edit", Kind: "k8s", Ops: []Op{
			{Kind: Set, Path: "kubernetes.cluster", Expr: `"prod-eu-1"`},
			{Kind: Set, Path: "kubernetes.app", Expr: `kubernetes.labels["app"] ?? "unknown"`},
			{Kind: Remove, Path: "kubernetes.pod_id"},
			{Kind: Remove, Path: "kubernetes.annotations"},
		}},
		{Name: "6-k8s-lift", Kind: "k8s", Ops: []Op{{Kind: Lift, Path: "kubernetes", To: "k8s_"}}},
		{Name: "7-policy-then-chain", Kind: "flat", Ops: []Op{
			{Kind: Drop, Expr: `level == "debug"`},
			{Kind: Set, Path: "slow", Expr: `latency_ms > 200.0`},
			{Kind: SetIfAbsent, Path: "env", Expr: `"prod"`},
			{Kind: Set, Path: "pipeline", Expr: `"b1"`},
			{Kind: Remove, Path: "trace_id"},
			{Kind: Rename, Path: "msg", To: "message"},
		}},
		{Name: "8-chain-then-policy", Kind: "flat", Ops: []Op{
			{Kind: SetIfAbsent, Path: "env", Expr: `"prod"`},
			{Kind: Set, Path: "pipeline", Expr: `"b1"`},
			{Kind: Remove, Path: "trace_id"},
			{Kind: Rename, Path: "msg", To: "message"},
			{Kind: Drop, Expr: `level == "debug"`},
			{Kind: Set, Path: "slow", Expr: `latency_ms > 200.0`},
			{Kind: Set, Path: "has_error", Expr: `message contains "failed"`},
		}},
		{Name: "9-output-side", Kind: "flat", Ops: []Op{
			{Kind: Drop, Expr: `level == "debug" || path == "/healthz"`},
			{Kind: Remove, Path: "trace_id"},
			{Kind: Remove, Path: "user"},
			{Kind: Set, Path: "shipped_by", Expr: `"policyrun"`},
			{Kind: Set, Path: "status_class", Expr: `int(status / 100)`},
		}},
	}
	for _, b := range bs {
		env := flatEnv
		if b.Kind == "k8s" {
			env = k8sEnv
		}
		if err := compile(b.Ops, env); err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name, err)
		}
	}
	return bs, nil
}

func compile(ops []Op, env map[string]any) error { return compileWith(ops, env, nil) }

// compileWith compiles ops against env, with extra options (functions).
func compileWith(ops []Op, env map[string]any, extra []exprlang.Option) error {
	for i := range ops {
		op := &ops[i]
		if op.Expr != "" {
			opts := append([]exprlang.Option{exprlang.Env(env)}, extra...)
			if op.Kind == Drop || op.Kind == If {
				opts = append(opts, exprlang.AsBool())
			}
			p, err := exprlang.Compile(op.Expr, opts...)
			if err != nil {
				return err
			}
			op.prog = p
		}
		if err := compileWith(op.Then, env, extra); err != nil {
			return err
		}
	}
	return nil
}

// Runner runs baselines; it holds a reused expr VM and buffers, and is
// used by one goroutine at a time.
type Runner struct {
	vm  vm.VM
	buf bytes.Buffer
}

// Run decodes one JSON line with encoding/json, runs b over it and returns
// the re-encoded record, or dropped. A record the programs cannot run on
// (a field of another type) is passed through unchanged, as a fault.
func (r *Runner) Run(b *Baseline, line []byte) (out []byte, dropped bool, err error) {
	var rec map[string]any
	if err := json.Unmarshal(line, &rec); err != nil {
		return nil, false, err
	}
	dropped, err = r.apply(b.Ops, rec)
	if err != nil {
		return bytes.TrimRight(line, "\n"), false, nil
	}
	if dropped {
		return nil, true, nil
	}
	r.buf.Reset()
	enc := json.NewEncoder(&r.buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, false, err
	}
	return bytes.TrimRight(r.buf.Bytes(), "\n"), false, nil
}

func (r *Runner) apply(ops []Op, rec map[string]any) (bool, error) {
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case Drop, If:
			v, err := r.vm.Run(op.prog, rec)
			if err != nil {
				return false, err
			}
			if v.(bool) {
				if op.Kind == Drop {
					return true, nil
				}
				if drop, err := r.apply(op.Then, rec); drop || err != nil {
					return drop, err
				}
			}
		case Set, SetIfAbsent:
			parent, key := walk(rec, op.Path, true)
			if parent == nil {
				return false, fmt.Errorf("cannot set %s", op.Path)
			}
			if op.Kind == SetIfAbsent && parent[key] != nil {
				continue
			}
			v, err := r.vm.Run(op.prog, rec)
			if err != nil {
				return false, err
			}
			parent[key] = v
		case MergeRoot:
			v, err := r.vm.Run(op.prog, rec)
			if err != nil {
				return false, err
			}
			m, _ := v.(map[string]any)
			for k, x := range m {
				rec[k] = x
			}
		case Remove:
			if parent, key := walk(rec, op.Path, false); parent != nil {
				delete(parent, key)
			}
		case Rename:
			parent, key := walk(rec, op.Path, false)
			if parent == nil {
				continue
			}
			v, ok := parent[key]
			if !ok {
				continue
			}
			delete(parent, key)
			to, tkey := walk(rec, op.To, true)
			if to == nil {
				return false, fmt.Errorf("cannot rename to %s", op.To)
			}
			to[tkey] = v
		case Lift:
			parent, key := walk(rec, op.Path, false)
			if parent == nil {
				continue
			}
			switch m := parent[key].(type) {
			case nil:
			case map[string]any:
				delete(parent, key)
				for k, v := range m {
					parent[op.To+k] = v
				}
			default:
				return false, fmt.Errorf("cannot lift %s", op.Path)
			}
		}
	}
	return false, nil
}

// walk returns the map holding the last key of a dotted path, creating
// missing maps when create is set; nil when a step is not a map.
func walk(rec map[string]any, path string, create bool) (map[string]any, string) {
	m := rec
	for {
		i := strings.IndexByte(path, '.')
		if i < 0 {
			return m, path
		}
		k := path[:i]
		path = path[i+1:]
		switch c := m[k].(type) {
		case map[string]any:
			m = c
		case nil:
			if !create {
				return nil, ""
			}
			n := map[string]any{}
			m[k] = n
			m = n
		default:
			return nil, ""
		}
	}
}
