package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// benchModule is the module path that findRepo looks for.
const benchModule = "github.com/policyrun/policyrun"

// findRepo returns the root of the policyrun repository: dir if it is not
// empty (checked), otherwise the first directory from the working
// directory up whose go.mod declares the module.
func findRepo(dir string) (string, error) {
	isRoot := func(d string) bool {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err != nil {
			return false
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "module" && f[1] == benchModule {
				return true
			}
		}
		return false
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if !isRoot(abs) {
			return "", fmt.Errorf("--repo %s: no go.mod of %s there", dir, benchModule)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isRoot(d) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not inside the policyrun repository (no go.mod of " + benchModule + " from here up); give --repo")
		}
	}
}

// A stat is the summary of repeated measurements: the median and the
// extremes of N values.
type stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// statOf summarises xs (the median of an even count is the mean of the
// two middle values). The zero stat, N 0, stands for no values.
func statOf(xs []float64) stat {
	if len(xs) == 0 {
		return stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	m := s[n/2]
	if n%2 == 0 {
		m = (s[n/2-1] + s[n/2]) / 2
	}
	return stat{Median: m, Min: s[0], Max: s[n-1], N: n}
}

// scale returns the stat with every value multiplied by k (k ≥ 0).
func (s stat) scale(k float64) stat {
	return stat{Median: s.Median * k, Min: s.Min * k, Max: s.Max * k, N: s.N}
}

// cell is the stat as a table cell: "1.23 (1.20–1.31)", or the median
// alone for a single value.
func (s stat) cell() string {
	if s.N == 0 {
		return "—"
	}
	if s.N == 1 || s.Min == s.Max {
		return fmtNum(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
}

// fmtNum formats a measurement with about three significant digits and no
// exponent: 12,345 · 123 · 12.3 · 1.23 · 0.0123.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case v == 0:
		return "0"
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "—"
	case a >= 1000:
		return groupThousands(fmt.Sprintf("%.0f", v))
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		digits := 2 - int(math.Floor(math.Log10(a)))
		return fmt.Sprintf("%.*f", min(digits, 9), v)
	}
}

// groupThousands puts commas in the integer s ("-1234567" → "-1,234,567").
func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b bytes.Buffer
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// tailLines returns the last n lines of b, for error messages.
func tailLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
