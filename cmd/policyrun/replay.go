package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/policyrun/policyrun/pipeline"
	"github.com/policyrun/policyrun/pipeline/config"
)

// replayCommand is `policyrun replay --config FILE DIR`.
func replayCommand(fl *flag.FlagSet) runFunc {
	cfgFile := fl.String("config", "", "the pipeline config whose output owns DIR")
	return func(c *call) int {
		if *cfgFile == "" {
			fl.Usage()
			return 2
		}
		cfg, err := config.Load(*cfgFile)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return 2
		}
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		alias, st, err := pipeline.Replay(ctx, cfg, fl.Arg(0), log)
		if alias != "" {
			fmt.Fprintf(c.stdout, "output %s: sent %d requests (%d records), %d left\n", alias, st.Files, st.Records, st.Left)
		}
		switch {
		case err != nil:
			fmt.Fprintf(c.stderr, "policyrun replay: %v\n", err)
			return 2
		case st.Left > 0:
			return 1
		}
		return 0
	}
}
