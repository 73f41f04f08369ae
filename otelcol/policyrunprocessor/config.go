package policyrunprocessor

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/component"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/check"
	"github.com/policyrun/policyrun/compiler/diag"
	policysrc "github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/spec"
	"github.com/policyrun/policyrun/state"
	"github.com/policyrun/policyrun/vm"
)

// Config is the processor's configuration:
//
//	processors:
//	  policyrun:
//	    policies: [redact.policy, route.policy]
//	    params: {env: prod, keep_octets: 2}
type Config struct {
	// Policies are policy files, run in order over every log record: a
	// record one drops goes no further. Relative paths are from the
	// Collector's working directory.
	Policies []string `mapstructure:"policies"`
	// Params are the values of the policies' parameters, by name: each
	// policy takes the ones it declares, so that policies of one
	// processor share a value such as env; a name no policy declares is
	// an error.
	Params map[string]any `mapstructure:"params"`
	// Storage names a storage extension (file_storage/…) that keeps the
	// memory of the policies' dedupe, rate_limit and sample statements
	// across restarts; without one it lives in memory only.
	Storage *component.ID `mapstructure:"storage"`
	// MaxSplit is the most records one split of a policy may make of a
	// log record (spec.Limits.MaxSplit; past it, the fault split_limit);
	// 0 or absent: spec.DefaultLimits'.
	MaxSplit int `mapstructure:"max_split"`
}

// Validate compiles every policy, so that `validate` and the start of the
// Collector report every diagnostic of every policy, as `policyrun
// check` renders them.
func (c *Config) Validate() error {
	lim, err := c.limits()
	if err != nil {
		return err
	}
	_, _, err = compilePolicies(c.Policies, c.Params, lim, nil)
	return err
}

// limits are the limits of the policies' runs.
func (c *Config) limits() (spec.Limits, error) {
	if c.MaxSplit < 0 {
		return spec.Limits{}, fmt.Errorf("max_split must not be negative (%s; 0 or absent: %d), not %d", spec.MaxSplitMeaning, spec.DefaultLimits.MaxSplit, c.MaxSplit)
	}
	return spec.Limits{MaxSplit: c.MaxSplit}, nil
}

// policy is a compiled policy and the name its metrics carry.
type policy struct {
	name string
	prog *vm.Program
	// plan is the policy compiled for pdata (plan.go), nil when every
	// record would reach a statement that needs the general path; why
	// names the first such statement.
	plan *plan
	why  string
	// store is the memory of the policy's stateful statements (nil when
	// it has none), bound to prog; memory the most bytes their keys can
	// take (check.Info.StateMemory).
	store  *state.Store
	memory int64
}

// compilePolicies reads and compiles the policies of a config. The error
// names every problem: files that cannot be read, every diagnostic of the
// policies that do not compile (in policyrun check's text), policies
// whose schema is not for OTLP records. The warnings of policies that
// compile are returned as text, for the log. The policies run under lim.
//
// The policies share one compiler.Loader, reading modules with read (nil:
// policysrc.ReadFile): a module that several of them import is read,
// parsed and checked once, and again at the next start, which sees what
// changed in it.
func compilePolicies(files []string, values map[string]any, lim spec.Limits, read compiler.ReadFunc) ([]policy, string, error) {
	if len(files) == 0 {
		return nil, "", errors.New("policies: name at least one policy file")
	}
	params := make(spec.Params, len(values))
	for k, v := range values {
		params[k] = spec.Param{Value: v, Where: "the processor's params"}
	}
	declared := map[string]bool{}
	loader := compiler.NewLoader(read)
	var out []policy
	var problems, warnings bytes.Buffer
	nerr, nwarn, nbad := 0, 0, 0
	for _, name := range files {
		src, err := policysrc.ReadFile(name)
		if err != nil {
			fmt.Fprintf(&problems, "%v\n\n", err)
			nbad++
			continue
		}
		f, info, ds := compiler.CheckFileParams(name, src, params, compiler.WithLoader(loader))
		ds = ownParams(f, ds, declared)
		if ds.HasErrors() {
			ds = withParamErrors(compiler.Diagnose(name, src), ds) // all of them, as check shows them
		}
		e, w := ds.Count()
		nerr, nwarn = nerr+e, nwarn+w
		if e > 0 {
			diag.WriteText(&problems, src, ds)
			problems.WriteString("\n")
			nbad++
			continue
		}
		if len(ds) > 0 {
			diag.WriteText(&warnings, src, ds)
			warnings.WriteString("\n")
		}
		if f.Schema != nil && !f.IsOTLP() {
			fmt.Fprintf(&problems, "%s:%s: the schema is for plain records, and the Collector runs policies over OTLP log records: declare schema otlp { … } (docs/collector.md)\n\n",
				name, f.Schema.Pos())
			nbad++
			continue
		}
		store := state.NewStore()
		prog, err := compiler.Compile(f, info, compiler.WithOptions(spec.Options{Params: params, State: store, Limits: lim}))
		if err != nil {
			fmt.Fprintf(&problems, "%s: %v\n\n", name, err)
			nbad++
			continue
		}
		pname := prog.Name()
		if pname == "" {
			pname = strings.TrimSuffix(filepath.Base(name), ".policy")
		}
		pl, why := compilePlan(f, info)
		pol := policy{name: pname, prog: prog, plan: pl, why: why}
		if len(info.StateOrder) > 0 {
			pol.store, pol.memory = store, info.StateMemory()
		}
		out = append(out, pol)
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !declared[k] {
			fmt.Fprintf(&problems, "params: no policy declares a parameter %s\n\n", k)
			nerr++
			nbad++
		}
	}
	if nbad > 0 {
		return nil, "", fmt.Errorf("policies do not load (%s, %s in %s):\n\n%s",
			plural(nerr, "error"), plural(nwarn, "warning"), plural(len(files), "file"),
			strings.TrimRight(problems.String(), "\n"))
	}
	return out, strings.TrimRight(warnings.String(), "\n"), nil
}

// ownParams drops from ds the values given for parameters f does not
// declare: the processor's params serve all its policies. It adds f's
// parameters to declared.
func ownParams(f *policysrc.File, ds compiler.Diagnostics, declared map[string]bool) compiler.Diagnostics {
	if f != nil {
		for _, d := range f.Decls {
			if p, ok := d.(*policysrc.ParamDecl); ok {
				declared[p.Name.Name] = true
			}
		}
	}
	return slices.DeleteFunc(ds, func(d diag.Diagnostic) bool { return d.Code == check.CodeParamUnknown })
}

// withParamErrors adds to all, which Diagnose found without the params,
// the errors of the params' values that checked found.
func withParamErrors(all, checked compiler.Diagnostics) compiler.Diagnostics {
	for _, d := range checked {
		if d.Code == check.CodeParamMissing || d.Code == check.CodeParamValue {
			all = append(all, d)
		}
	}
	return diag.Sort(all)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
