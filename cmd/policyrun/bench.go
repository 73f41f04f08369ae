package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/bench"
	"github.com/policyrun/policyrun/bench/report"
)

// benchCommands are the commands of bench, run as `policyrun bench NAME`,
// in the order an unknown name lists them. They take no arguments after
// their flags, and name any they are given.
var benchCommands = []struct {
	name string
	command
}{
	{"pipeline", command{args: flagsOnly, declare: benchPipelineCommand}},
	{"report", command{args: flagsOnly, declare: benchReportCommand}},
	{"otlp", command{args: flagsOnly, declare: benchOTLPCommand}},
}

// benchMain is `policyrun bench pipeline|report|otlp [flags]`.
func benchMain(c *call) int {
	args := c.args
	if code, ok := usageAsked(args, func() { fmt.Fprintln(c.stderr, strings.TrimSpace(usageText("bench"))) }); ok {
		return code
	}
	var names []string
	for _, sub := range benchCommands {
		if sub.name == args[0] {
			return sub.run("bench "+args[0], &call{args[1:], c.stdin, c.stdout, c.stderr})
		}
		names = append(names, sub.name)
	}
	fmt.Fprintf(c.stderr, "policyrun bench: unknown benchmark command %q (known: %s)\n", args[0], strings.Join(names, ", "))
	return 2
}

func benchPipelineCommand(fl *flag.FlagSet) runFunc {
	out := fl.String("o", "", "write the JSON results to `FILE` (default: standard output)")
	var b1 bench.B1Config
	b1.Flags(fl)
	return func(c *call) int {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		b1.Progress = c.stderr
		res, err := bench.RunB1(ctx, b1)
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun bench pipeline: %v\n", err)
			return benchExit(err)
		}
		res.WriteTable(c.stderr)
		b, _ := json.MarshalIndent(res, "", "  ")
		b = append(b, '\n')
		if *out == "" || *out == "-" {
			_, err = c.stdout.Write(b)
		} else {
			err = os.WriteFile(*out, b, 0o644)
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "policyrun bench pipeline: %v\n", err)
			return 2
		}
		return 0
	}
}

// benchExit is the exit status of a benchmark that failed: 2 when it was
// asked for what cannot be run, 1 when the run failed.
func benchExit(err error) int {
	if errors.As(err, new(bench.UsageError)) {
		return 2
	}
	return 1
}

func benchReportCommand(fl *flag.FlagSet) runFunc {
	o := report.Options{Sections: map[string]bool{}}
	fl.StringVar(&o.Out, "o", "report.html", "write the page to `FILE`; report.md and the raw results go beside it")
	fl.IntVar(&o.Count, "count", 0, "go test -count, and the runs of B1 unless --runs (default 5; --quick 1)")
	fl.StringVar(&o.Others, "others", "", "figures of other systems, JSON (default: bench/others.json of the repository; none: no figures)")
	sections := fl.String("sections", strings.Join(report.Sections, ","), "the sections to run, comma-separated")
	fl.StringVar(&o.Pipeline, "pipeline", "", "draw B1 from these results of bench pipeline instead of running it")
	fl.StringVar(&o.Bench, "bench", "", "draw the go test sections from this benchmark output (text or -json) instead of running them")
	var b1 bench.B1Config
	b1.Flags(fl)
	return func(c *call) int {
		o.Progress, o.Command = c.stderr, "policyrun bench report "+strings.Join(c.args, " ")
		for _, s := range strings.Split(*sections, ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			if !slices.Contains(report.Sections, s) {
				fmt.Fprintf(c.stderr, "policyrun bench report: --sections: unknown section %q (known: %s)\n", s, strings.Join(report.Sections, ", "))
				return 2
			}
			o.Sections[s] = true
		}
		o.B1, o.Quick = b1, b1.Quick
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		if err := report.Run(ctx, o); err != nil {
			fmt.Fprintf(c.stderr, "policyrun bench report: %v\n", err)
			return benchExit(err)
		}
		return 0
	}
}

func benchOTLPCommand(fl *flag.FlagSet) runFunc {
	var l bench.OTLPLoad
	l.Flags(fl)
	gz := fl.Bool("gzip", false, "gzip the requests (--compression gzip)")
	return func(c *call) int {
		if *gz {
			l.Compression = "gzip"
		}
		if !l.Valid() {
			fl.Usage()
			return 2
		}
		if err := l.Run(c.stdout, c.stderr); err != nil {
			fmt.Fprintln(c.stderr, "policyrun bench otlp:", err)
			return 2
		}
		return 0
	}
}
