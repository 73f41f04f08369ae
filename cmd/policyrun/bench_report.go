package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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

var allSections = []string{"b1", "backends", "b2", "b3", "b4", "b5"}

func runBenchReport(args []string, stdout, stderr io.Writer) int {
	fl := newFlags("bench report", benchReportUsage, stderr)
	out := fl.String("o", "report.html", "write the page to `FILE`; report.md and the raw results go beside it")
	count := fl.Int("count", 0, "go test -count, and the runs of B1 unless --runs (default 5; --quick 1)")
	others := fl.String("others", "", "figures of other systems, JSON (default: bench/others.json of the repository; none: no figures)")
	sections := fl.String("sections", strings.Join(allSections, ","), "the sections to run, comma-separated")
	pipelineFile := fl.String("pipeline", "", "draw B1 from these results of bench pipeline instead of running it")
	benchFile := fl.String("bench", "", "draw the go test sections from this benchmark output (text or -json) instead of running them")
	b1, quick := b1Flags(fl)
	if code, ok := parseFlags(fl, args); !ok {
		return code
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "policyrun bench report: unexpected arguments: %s\n", strings.Join(fl.Args(), " "))
		return 2
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*sections, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(allSections, s) {
			fmt.Fprintf(stderr, "policyrun bench report: --sections: unknown section %q (known: %s)\n", s, strings.Join(allSections, ", "))
			return 2
		}
		want[s] = true
	}
	if *count == 0 {
		*count = 5
		if *quick {
			*count = 1
		}
	}
	if *b1.runs == 0 {
		*b1.runs = *count
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := benchReport(ctx, reportOptions{
		out: *out, quick: *quick, count: *count, others: *others, sections: want,
		pipelineFile: *pipelineFile, benchFile: *benchFile, b1: b1, progress: stderr,
		command: "policyrun bench report " + strings.Join(args, " "),
	})
	if err != nil {
		fmt.Fprintf(stderr, "policyrun bench report: %v\n", err)
		var u usageError
		if errors.As(err, &u) {
			return 2
		}
		return 1
	}
	return 0
}

type usageError struct{ error }

type reportOptions struct {
	out          string
	quick        bool
	count        int
	others       string
	sections     map[string]bool
	pipelineFile string
	benchFile    string
	b1           b1FlagValues
	progress     io.Writer
	command      string
}

// reportPage is everything on the page.
type reportPage struct {
	title    string
	meta     []string
	quick    bool
	sections []*reportSection
	others   string   // the file of figures, if any
	undrawn  []figure // figures of benchmarks that have no section here
	command  string
}

func benchReport(ctx context.Context, o reportOptions) error {
	// Where the outputs go, checked before anything runs.
	base := strings.TrimSuffix(o.out, filepath.Ext(o.out))
	if base == "" || strings.HasSuffix(o.out, string(filepath.Separator)) {
		return usageError{fmt.Errorf("-o %q: not a file name", o.out)}
	}
	if dir := filepath.Dir(o.out); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageError{fmt.Errorf("-o %s: no directory %s", o.out, dir)}
		}
	}
	repo, err := findRepo(*o.b1.repo)
	needRepo := o.pipelineFile == "" && o.sections["b1"] || o.benchFile == "" && len(goBenches(o.sections, o.quick)) > 0
	if err != nil && needRepo {
		return usageError{err}
	}
	*o.b1.repo = repo

	var figs []figure
	othersPath := o.others
	if othersPath == "" && repo != "" {
		othersPath = filepath.Join(repo, "bench", "others.json")
		if _, err := os.Stat(othersPath); err != nil {
			othersPath = ""
		}
	}
	if othersPath == "none" {
		othersPath = ""
	}
	if othersPath != "" {
		if figs, err = loadOthers(othersPath); err != nil {
			return usageError{err}
		}
	}

	// B1: run, or read.
	var b1 *b1Results
	switch {
	case o.pipelineFile != "":
		if b1, err = readB1Results(o.pipelineFile); err != nil {
			return usageError{err}
		}
	case o.sections["b1"]:
		opts, cleanup, err := o.b1.resolve(o.quick, o.progress)
		if err != nil {
			return usageError{err}
		}
		b1, err = runB1(ctx, opts)
		cleanup()
		if err != nil {
			return fmt.Errorf("B1: %w", err)
		}
		b, _ := json.MarshalIndent(b1, "", "  ")
		if err := os.WriteFile(base+".b1.json", append(b, '\n'), 0o644); err != nil {
			return err
		}
	}

	// The go test benchmarks: run, or read.
	set := &benchSet{}
	if o.benchFile != "" {
		f, err := os.Open(o.benchFile)
		if err != nil {
			return usageError{err}
		}
		set, err = parseBench(f)
		f.Close()
		if err != nil {
			return usageError{fmt.Errorf("%s: %v", o.benchFile, err)}
		}
	} else if runs := goBenches(o.sections, o.quick); len(runs) > 0 {
		for _, g := range runs {
			s, err := runGoBench(ctx, repo, g, o.count, o.progress)
			if err != nil {
				return err
			}
			set.add(s)
		}
		var raw bytes.Buffer
		set.text(&raw)
		if err := os.WriteFile(base+".bench.txt", raw.Bytes(), 0o644); err != nil {
			return err
		}
	}

	page := buildPage(o, repo, b1, set, figs, othersPath)
	if err := os.WriteFile(o.out, []byte(page.html()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".md", []byte(page.markdown()), 0o644); err != nil {
		return err
	}
	if o.progress != nil {
		fmt.Fprintf(o.progress, "wrote %s and %s\n", o.out, base+".md")
	}
	return nil
}

// goBenches are the go test invocations that the sections need: one per
// -benchtime. Full runs use go test's default benchtime (1s), but
// BenchmarkBackendRatios, each of whose iterations is a whole batch
// through four backends, 100x as bench/backends.sh does.
func goBenches(want map[string]bool, quick bool) []goBench {
	bt := func(full, q string) string {
		if quick {
			return q
		}
		return full
	}
	var out []goBench
	if want["backends"] {
		out = append(out,
			goBench{pkgs: []string{"./conformance"}, pattern: "^BenchmarkBackends$", benchtime: bt("", "100x")},
			goBench{pkgs: []string{"./conformance"}, pattern: "^BenchmarkBackendRatios$", benchtime: bt("100x", "5x")})
	}
	var pkgs, names []string
	for _, s := range []struct{ section, pkg, bench string }{
		{"b2", "./record", "BenchmarkRecordDecode"},
		{"b3", "./record", "BenchmarkEditChain"},
		{"b5", "./record", "BenchmarkOTLP"},
		{"b4", "./pipeline/checkpoint", "BenchmarkCheckpoint"},
	} {
		if want[s.section] {
			if !slices.Contains(pkgs, s.pkg) {
				pkgs = append(pkgs, s.pkg)
			}
			names = append(names, s.bench)
		}
	}
	if want["b2"] || want["b3"] {
		names = append(names, "BenchmarkSideBySide")
	}
	if len(names) > 0 {
		out = append(out, goBench{pkgs: pkgs, pattern: "^(" + strings.Join(names, "|") + ")$", benchtime: bt("", "100x")})
	}
	return out
}

func buildPage(o reportOptions, repo string, b1 *b1Results, set *benchSet, figs []figure, othersPath string) *reportPage {
	p := &reportPage{title: "policyrun benchmarks", quick: o.quick, command: strings.TrimSpace(o.command)}
	var host benchHost
	if b1 != nil {
		host = b1.Host
	} else {
		host = hostInfo(repo)
	}
	p.meta = append(p.meta, fmt.Sprintf("%s · %s %s/%s, %d CPUs", time.Now().UTC().Format("2006-01-02 15:04 UTC"), host.GoVersion, host.OS, host.Arch, host.CPUs))
	if host.Commit != "" {
		p.meta = append(p.meta, "commit "+host.Commit)
	}
	switch {
	case o.benchFile != "":
		p.meta = append(p.meta, "go test benchmarks read from "+o.benchFile)
	case set != nil && len(set.lines) > 0:
		p.meta = append(p.meta, fmt.Sprintf("go test benchmarks: -count %d%s", o.count, map[bool]string{true: ", -benchtime 100x (ratios 5x)", false: ""}[o.quick]))
	}
	if o.pipelineFile != "" {
		p.meta = append(p.meta, "B1 read from "+o.pipelineFile)
	}
	if othersPath != "" {
		p.others = othersPath
		if repo != "" {
			if rel, err := filepath.Rel(repo, othersPath); err == nil && !strings.HasPrefix(rel, "..") {
				p.others = filepath.ToSlash(rel)
			}
		}
	}
	build := map[string]func() *reportSection{
		"b1":       func() *reportSection { return b1Section(b1) },
		"backends": func() *reportSection { return backendsSection(set) },
		"b2":       func() *reportSection { return b2Section(set) },
		"b3":       func() *reportSection { return b3Section(set) },
		"b4":       func() *reportSection { return b4Section(set) },
		"b5":       func() *reportSection { return b5Section(set) },
	}
	drawn := map[int]bool{}
	for _, id := range allSections {
		// A section whose results were read from a file is drawn even
		// if --sections left it out.
		s := build[id]()
		if !o.sections[id] && s.skipped != "" {
			continue
		}
		for _, c := range s.charts() {
			c.addFigures(figs, drawn)
		}
		p.sections = append(p.sections, s)
	}
	for i, f := range figs {
		if drawn[i] {
			continue
		}
		placed := false
		for _, s := range p.sections {
			if strings.EqualFold(s.id, f.Benchmark) {
				s.listed = append(s.listed, f)
				placed = true
			}
		}
		if !placed {
			p.undrawn = append(p.undrawn, f)
		}
	}
	return p
}
