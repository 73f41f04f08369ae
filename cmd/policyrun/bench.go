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

func init() {
	register(command{
		name:    "bench",
		summary: "benchmarks: whole-process runs (bench pipeline), an HTML report with charts (bench report), an OTLP/HTTP load generator (bench otlp)",
		run:     runBench,
	})
}

const benchUsage = `
usage: policyrun bench pipeline [-o results.json] [--runs N] [--quick] [flags]
       policyrun bench report [-o report.html] [--quick] [--others FILE] [flags]
       policyrun bench otlp [--url URL] [--clients N] [--records N] [flags]

pipeline  benchmark B1, whole process: builds policyrun from the repository,
          generates the data with policyrun gen and runs policyrun run
          (tail → one policy → null) for the nine policies of
          conformance/policies on every backend, the runs interleaved;
          writes the CPU seconds (user+sys of the child), wall time and
          peak RSS of every run, and their medians with min and max, as JSON.
report    runs B1 and the go test benchmarks (backend ratios, B2, B3, B4,
          B5's codecs) and writes a self-contained HTML page with SVG bar
          charts, a table beside each chart, the same tables as markdown
          (report.md) and the raw results (report.b1.json, report.bench.txt).

Both need the policyrun repository (found from the working directory up,
or --repo) and a Go toolchain. docs/bench.md describes every section.

otlp      benchmark B5's load: generated OTLP records sent to any OTLP/HTTP
          endpoint from N persistent clients; records/s, request p50/p99,
          and with --server-pid the server's CPU and memory.

Run 'policyrun bench pipeline -h', 'bench report -h' or 'bench otlp -h' for flags.
`

func runBench(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, strings.TrimSpace(benchUsage))
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

const benchPipelineUsage = `
usage: policyrun bench pipeline [-o results.json] [--runs N] [--quick] [flags]

Benchmark B1, whole process (docs/bench.md). Builds policyrun from the
repository (or takes --policyrun), generates the data with policyrun gen
(flat: 1,000,000 JSON lines, k8s: 300,000 records with the kubernetes map;
kept from run to run while binary, count and seed are the same), and runs
policyrun run (tail with the json parser → one policy → null, exiting at
the end of input) for each of the nine policies of conformance/policies
with backends vm, lua (the transpiled policy) and lua_script (the
hand-written Fluent Bit filter of conformance/baselines/lua), plus a run
with no filter per data kind. The runs are interleaved: each round runs
every configuration once, so a slow spell of the machine hits them alike.
Prints a table on stderr and writes every run and the medians with min
and max as JSON.
`

func runBenchPipeline(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("bench pipeline", benchPipelineUsage, stderr)
	out := fl.String("o", "", "write the JSON results to `FILE` (default: standard output)")
	b1 := b1Flags(fl)
	if code, ok := parseFlags(fl, args); !ok {
		return code
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "policyrun bench pipeline: unexpected arguments: %s\n", strings.Join(fl.Args(), " "))
		return 2
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

const benchReportUsage = `
usage: policyrun bench report [-o report.html] [--quick] [--count N] [--others FILE]
                              [--sections b1,backends,b2,b3,b4,b5]
                              [--pipeline results.json] [--bench bench.txt] [flags]

Runs the benchmarks and writes a self-contained HTML page (inline CSS and
SVG, no scripts, nothing fetched) with a bar chart per measurement — bars
from zero, each the median with a min–max whisker, values and axes
labelled — and a table beside each chart, for:
  b1        B1, whole process: the nine policies on every backend
            (bench pipeline, run here)
  backends  the VM against transpiled Lua, hand-written Lua and expr
            (BenchmarkBackendRatios, BenchmarkBackends in ./conformance)
  b2, b3    record construction and edit chains (./record)
  b4        checkpoints, JSON against protobuf (./pipeline/checkpoint)
  b5        B5's codec part, OTLP protobuf (BenchmarkOTLP in ./record)
The go test benchmarks run from the repository root with -count N. Figures
of other systems (--others, default bench/others.json of the repository)
are drawn beside ours, their sources named under the chart. Beside the
page go the same tables as markdown (report.md) and the raw results
(report.b1.json, report.bench.txt), which --pipeline and --bench read back
to draw the page again without running anything.

--quick runs small counts (B1 over 20,000 flat and 6,000 Kubernetes
records, one run; -benchtime 100x, -count 1): a smoke test, whose figures
are not for comparison.
`

func runBenchReport(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("bench report", benchReportUsage, stderr)
	o := report.Options{Progress: stderr, Command: "policyrun bench report " + strings.Join(args, " "), Sections: map[string]bool{}}
	fl.StringVar(&o.Out, "o", "report.html", "write the page to `FILE`; report.md and the raw results go beside it")
	fl.IntVar(&o.Count, "count", 0, "go test -count, and the runs of B1 unless --runs (default 5; --quick 1)")
	fl.StringVar(&o.Others, "others", "", "figures of other systems, JSON (default: bench/others.json of the repository; none: no figures)")
	sections := fl.String("sections", strings.Join(report.Sections, ","), "the sections to run, comma-separated")
	fl.StringVar(&o.Pipeline, "pipeline", "", "draw B1 from these results of bench pipeline instead of running it")
	fl.StringVar(&o.Bench, "bench", "", "draw the go test sections from this benchmark output (text or -json) instead of running them")
	b1 := b1Flags(fl)
	if code, ok := parseFlags(fl, args); !ok {
		return code
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "policyrun bench report: unexpected arguments: %s\n", strings.Join(fl.Args(), " "))
		return 2
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

const benchOTLPUsage = `
usage: policyrun bench otlp [--url URL] [--clients N] [--batch N] [--records N]
                            [--encoding protobuf|json] [--compression none|gzip|zstd]
                            [--gzip] [--warmup N]
                            [--seed S] [--server-pid PID] [--wait D]

Sends generated OTLP log records (as policyrun gen otlp makes them: B5's
shape) to an OTLP/HTTP endpoint, any of them (policyrun's otlp input,
the OpenTelemetry Collector, Fluent Bit), from N clients at once, each on
a persistent connection. A request refused with 429, 502, 503 or 504, or
a connection error, is sent again (after Retry-After, when given). After
--warmup records, not measured, it sends --records and prints records/s
and the request latency's p50 and p99. With --server-pid (Linux), it also
prints the server process's CPU seconds per million records over the
measured records (user+sys, from /proc) and its resident memory: steady
(the median of samples every 100 ms) and peak. --wait waits for the
endpoint to accept connections first (a server just started); with
--records 0 it only waits. --compression sends each request compressed
(Content-Encoding), compressed once ahead; --gzip is --compression gzip.
`

// runBenchOTLP is policyrun bench otlp; args follow the word otlp.
func runBenchOTLP(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("bench otlp", benchOTLPUsage, stderr)
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
	if code, ok := parseFlags(fs, args); !ok {
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
