package policyrunprocessor

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/policyrun/policyrun/compiler"
	"github.com/policyrun/policyrun/compiler/diag"
	policysrc "github.com/policyrun/policyrun/policy"
	"github.com/policyrun/policyrun/vm"
)

// Config is the processor's configuration:
//
//	processors:
//	  policyrun:
//	    policies: [redact.policy, route.policy]
type Config struct {
	// Policies are policy files, run in order over every log record: a
	// record one drops goes no further. Relative paths are from the
	// Collector's working directory.
	Policies []string `mapstructure:"policies"`
}

// Validate compiles every policy, so that `validate` and the start of the
// Collector report every diagnostic of every policy, as `policyrun
// check` renders them.
func (c *Config) Validate() error {
	_, _, err := compilePolicies(c.Policies)
	return err
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
}

// compilePolicies reads and compiles the policies of a config. The error
// names every problem: files that cannot be read, every diagnostic of the
// policies that do not compile (in policyrun check's text), policies
// whose schema is not for OTLP records. The warnings of policies that
// compile are returned as text, for the log.
func compilePolicies(files []string) ([]policy, string, error) {
	if len(files) == 0 {
		return nil, "", errors.New("policies: name at least one policy file")
	}
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
		f, info, ds := compiler.CheckFile(name, src)
		if ds.HasErrors() {
			ds = compiler.Diagnose(name, src) // all of them, as check shows them
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
		prog, err := compiler.Compile(f, info)
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
		out = append(out, policy{name: pname, prog: prog, plan: pl, why: why})
	}
	if nbad > 0 {
		return nil, "", fmt.Errorf("policies do not load (%s, %s in %s):\n\n%s",
			plural(nerr, "error"), plural(nwarn, "warning"), plural(len(files), "file"),
			strings.TrimRight(problems.String(), "\n"))
	}
	return out, strings.TrimRight(warnings.String(), "\n"), nil
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
