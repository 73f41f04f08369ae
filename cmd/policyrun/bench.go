package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/bench"
	"github.com/policyrun/policyrun/bench/report"
)

func runBench(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, strings.TrimSpace(usageText("bench")))
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	switch args[0] {
	case "pipeline":
		return runBenchPipeline(args[1:], stdout, stderr)
	case "report":
		return runBenchReport(args[1:], stdout, stderr)
	case "otlp":
		return runBenchOTLP(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "policyrun bench: unknown benchmark command %q (known: pipeline, report, otlp)\n", args[0])
	return 2
}

func runBenchPipeline(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("bench pipeline", stderr)
	out := fl.String("o", "", "write the JSON results to `FILE` (default: standard output)")
	var b1 bench.B1Config
	b1.Flags(fl)
	if code, ok := parseFlags(fl, args, flagsOnly); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b1.Progress = stderr
	res, err := bench.RunB1(ctx, b1)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun bench pipeline: %v\n", err)
		return benchExit(err)
	}
	res.WriteTable(stderr)
	b, _ := json.MarshalIndent(res, "", "  ")
	b = append(b, '\n')
	if *out == "" || *out == "-" {
		_, err = stdout.Write(b)
	} else {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintf(stderr, "policyrun bench pipeline: %v\n", err)
		return 2
	}
	return 0
}

// benchExit is the exit status of a benchmark that failed: 2 when it was
// asked for what cannot be run, 1 when the run failed.
func benchExit(err error) int {
	if errors.As(err, new(bench.UsageError)) {
		return 2
	}
	return 1
}

func runBenchReport(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("bench report", stderr)
	o := report.Options{Progress: stderr, Command: "policyrun bench report " + strings.Join(args, " "), Sections: map[string]bool{}}
	fl.StringVar(&o.Out, "o", "report.html", "write the page to `FILE`; report.md and the raw results go beside it")
	fl.IntVar(&o.Count, "count", 0, "go test -count, and the runs of B1 unless --runs (default 5; --quick 1)")
	fl.StringVar(&o.Others, "others", "", "figures of other systems, JSON (default: bench/others.json of the repository; none: no figures)")
	sections := fl.String("sections", strings.Join(report.Sections, ","), "the sections to run, comma-separated")
	fl.StringVar(&o.Pipeline, "pipeline", "", "draw B1 from these results of bench pipeline instead of running it")
	fl.StringVar(&o.Bench, "bench", "", "draw the go test sections from this benchmark output (text or -json) instead of running them")
	var b1 bench.B1Config
	b1.Flags(fl)
	if code, ok := parseFlags(fl, args, flagsOnly); !ok {
		return code
	}
	for _, s := range strings.Split(*sections, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(report.Sections, s) {
			fmt.Fprintf(stderr, "policyrun bench report: --sections: unknown section %q (known: %s)\n", s, strings.Join(report.Sections, ", "))
			return 2
		}
		o.Sections[s] = true
	}
	o.B1, o.Quick = b1, b1.Quick
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := report.Run(ctx, o); err != nil {
		fmt.Fprintf(stderr, "policyrun bench report: %v\n", err)
		return benchExit(err)
	}
	return 0
}

// runBenchOTLP is policyrun bench otlp; args follow the word otlp.
func runBenchOTLP(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench otlp", stderr)
	var l bench.OTLPLoad
	l.Flags(fs)
	gz := fs.Bool("gzip", false, "gzip the requests (--compression gzip)")
	if code, ok := parseFlags(fs, args, flagsOnly); !ok {
		return code
	}
	if *gz {
		l.Compression = "gzip"
	}
	if !l.Valid() {
		fs.Usage()
		return 2
	}
	if err := l.Run(stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "policyrun bench otlp:", err)
		return 2
	}
	return 0
}
