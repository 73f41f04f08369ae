package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/bench"
	"github.com/policyrun/policyrun/bench/report"
	"github.com/policyrun/policyrun/internal/contentenc"
	"github.com/policyrun/policyrun/internal/gen"
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
	b1 := b1Flags(fl)
	if code, ok := parseFlags(fl, args, anyArgs); !ok {
		return code
	}
	if code, ok := noArgs(fl, stderr); !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	b1.Progress = stderr
	res, err := bench.RunB1(ctx, *b1)
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

// b1Flags defines the flags that bench pipeline and bench report share;
// the config they fill is read once the flags are parsed.
func b1Flags(fl *flag.FlagSet) *bench.B1Config {
	c := &bench.B1Config{}
	fl.StringVar(&c.Repo, "repo", "", "the policyrun repository `DIR` (default: found from the working directory up)")
	fl.StringVar(&c.Data, "data", "", "`DIR` for the binary, the data and the configs (default: $TMPDIR/policyrun-bench; --quick: a temporary directory)")
	fl.StringVar(&c.Binary, "policyrun", "", "measure this policyrun `BINARY` instead of one built from the repository")
	fl.IntVar(&c.Runs, "runs", 0, "runs of every configuration (default 5; --quick 1)")
	fl.IntVar(&c.Flat, "flat", 0, "flat records (default 1,000,000; --quick 20,000)")
	fl.IntVar(&c.K8s, "k8s", 0, "Kubernetes records (default 300,000; --quick 6,000)")
	fl.Uint64Var(&c.Seed, "seed", 1, "seed of policyrun gen")
	fl.StringVar(&c.Backends, "backends", strings.Join(bench.B1Backends, ","), "backends, comma-separated")
	fl.StringVar(&c.Policies, "policies", "all", "policies of conformance/policies, comma-separated (e.g. 1-noop,3-edit), or all")
	fl.BoolVar(&c.Quick, "quick", false, "small counts, one run: a smoke test")
	return c
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
	b1 := b1Flags(fl)
	if code, ok := parseFlags(fl, args, anyArgs); !ok {
		return code
	}
	if code, ok := noArgs(fl, stderr); !ok {
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
	o.B1, o.Quick = *b1, b1.Quick
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
	fs.StringVar(&l.URL, "url", "http://127.0.0.1:4318/v1/logs", "the OTLP/HTTP logs endpoint")
	fs.IntVar(&l.Clients, "clients", 16, "clients sending at once, each on its own connection")
	fs.IntVar(&l.Batch, "batch", gen.OTLPBatch, "records per request")
	fs.IntVar(&l.Records, "records", 1_000_000, "records to send and measure")
	fs.StringVar(&l.Encoding, "encoding", "protobuf", "protobuf or json")
	fs.StringVar(&l.Compression, "compression", "none", "none, or the requests' Content-Encoding: "+strings.Join(contentenc.Names(), " or "))
	gz := fs.Bool("gzip", false, "gzip the requests (--compression gzip)")
	fs.IntVar(&l.Warmup, "warmup", 50_000, "records sent first, not measured")
	fs.Uint64Var(&l.Seed, "seed", 1, "the generator's seed")
	fs.IntVar(&l.ServerPID, "server-pid", 0, "the server's process id, to measure its CPU and memory (Linux /proc)")
	fs.DurationVar(&l.Wait, "wait", 0, "wait up to this long for the endpoint to accept connections before sending")
	if code, ok := parseFlags(fs, args, anyArgs); !ok {
		return code
	}
	if code, ok := noArgs(fs, stderr); !ok {
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
