package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/policyrun/policyrun/pipeline/config"
	"github.com/policyrun/policyrun/pipeline/output"
)

// Replay sends the files of a dead-letter directory again, through the
// output of cfg whose dead_letter path it is (compared resolved, as the
// config compares files), with that output's endpoint, TLS, headers,
// compression and retries; each file delivered is removed. The output is
// built without its buffer, so a pipeline may be running meanwhile.
func Replay(ctx context.Context, cfg *config.Config, dir string, log *slog.Logger) (alias string, st output.ReplayStats, err error) {
	want := config.Canonical("", dir)
	var dirs []string
	for _, o := range cfg.Outputs {
		f, _ := output.Lookup(o.Name)
		out, err := f.New(o.Settings, output.Env{Alias: o.Alias, Dir: cfg.Dir, Logger: log.With("output", o.Alias), Check: true})
		if err != nil {
			return o.Alias, st, fmt.Errorf("output at line %d: %w", o.Line, err)
		}
		r, ok := out.(output.Replayer)
		if !ok || r.DeadLetterDir() == "" {
			continue
		}
		if config.Canonical("", r.DeadLetterDir()) != want {
			dirs = append(dirs, r.DeadLetterDir())
			continue
		}
		st, err = r.Replay(ctx, log.With("output", o.Alias))
		return o.Alias, st, err
	}
	if len(dirs) == 0 {
		return "", st, fmt.Errorf("%s: no output of the config has a dead_letter directory", dir)
	}
	return "", st, fmt.Errorf("%s is the dead_letter directory of no output of the config (they are %s)", dir, strings.Join(dirs, ", "))
}
