package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/policyrun/policyrun/pipeline"
	"github.com/policyrun/policyrun/pipeline/config"
)

// runReplay is `policyrun replay --config FILE DIR`.
func runReplay(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fl := newFlags("replay", stderr)
	cfgFile := fl.String("config", "", "the pipeline config whose output owns DIR")
	if code, ok := parseFlags(fl, args, oneArg); !ok {
		return code
	}
	if *cfgFile == "" {
		fl.Usage()
		return 2
	}
	cfg, err := config.Load(*cfgFile)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	alias, st, err := pipeline.Replay(ctx, cfg, fl.Arg(0), log)
	if alias != "" {
		fmt.Fprintf(stdout, "output %s: sent %d requests (%d records), %d left\n", alias, st.Files, st.Records, st.Left)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "policyrun replay: %v\n", err)
		return 2
	case st.Left > 0:
		return 1
	}
	return 0
}
