// Package report draws benchmark results as a self-contained HTML page of
// bar charts, each with its table, and the same tables as markdown.
package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/policyrun/policyrun/bench"
)

// Sections are the sections of the page, in its order.
var Sections = []string{"b1", "backends", "b2", "b3", "b4", "b5"}

// Options say what to run, or read, and where the page goes.
type Options struct {
	Out      string          // the page; report.md and the raw results go beside it
	Quick    bool            // small counts: a smoke test
	Count    int             // go test -count, and B1's runs unless B1.Runs (0: 5; Quick: 1)
	Others   string          // figures of other systems (default: bench/others.json of the repository; "none": none)
	Sections map[string]bool // the sections to run
	// Pipeline and Bench, when not empty, are results read instead of
	// run: of bench pipeline, and of go test -bench (text or -json).
	Pipeline string
	Bench    string
	B1       bench.B1Config
	Progress io.Writer // what runs, as it runs
	Command  string    // the command line, for the page's footer
}

// reportPage is everything on the page.
type reportPage struct {
	Title    string
	Meta     []string
	Quick    bool
	Sections []*reportSection
	Others   string   // the file of figures, if any
	undrawn  []figure // figures of benchmarks that have no section here
	Command  string
}

// Run runs the benchmarks of o.Sections (or reads their results) and
// writes the page, report.md and the raw results. Errors in what o asks
// for are bench.UsageErrors.
func Run(ctx context.Context, o Options) error {
	// Where the outputs go, checked before anything runs.
	base := strings.TrimSuffix(o.Out, filepath.Ext(o.Out))
	if base == "" || strings.HasSuffix(o.Out, string(filepath.Separator)) {
		return usageError(fmt.Errorf("-o %q: not a file name", o.Out))
	}
	if dir := filepath.Dir(o.Out); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usageError(fmt.Errorf("-o %s: no directory %s", o.Out, dir))
		}
	}
	if o.Count == 0 {
		o.Count = 5
		if o.Quick {
			o.Count = 1
		}
	}
	if o.B1.Runs == 0 {
		o.B1.Runs = o.Count
	}
	o.B1.Quick, o.B1.Progress = o.Quick, o.Progress
	repo, err := bench.FindRepo(o.B1.Repo)
	needRepo := o.Pipeline == "" && o.Sections["b1"] || o.Bench == "" && len(goTests(o.Sections, o.Quick)) > 0
	if err != nil && needRepo {
		return usageError(err)
	}
	o.B1.Repo = repo

	var figs []figure
	othersPath := o.Others
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
			return usageError(err)
		}
	}

	// B1: run, or read.
	var b1 *bench.B1Results
	switch {
	case o.Pipeline != "":
		if b1, err = bench.ReadB1Results(o.Pipeline); err != nil {
			return usageError(err)
		}
	case o.Sections["b1"]:
		if b1, err = bench.RunB1(ctx, o.B1); err != nil {
			if errors.As(err, new(bench.UsageError)) {
				return err
			}
			return fmt.Errorf("B1: %w", err)
		}
		b, _ := json.MarshalIndent(b1, "", "  ")
		if err := os.WriteFile(base+".b1.json", append(b, '\n'), 0o644); err != nil {
			return err
		}
	}

	// The go test benchmarks: run, or read.
	set := &bench.Set{}
	if o.Bench != "" {
		f, err := os.Open(o.Bench)
		if err != nil {
			return usageError(err)
		}
		set, err = bench.Parse(f)
		f.Close()
		if err != nil {
			return usageError(fmt.Errorf("%s: %v", o.Bench, err))
		}
	} else if runs := goTests(o.Sections, o.Quick); len(runs) > 0 {
		for _, g := range runs {
			s, err := g.Run(ctx, repo, o.Count, o.Progress)
			if err != nil {
				return err
			}
			set.Add(s)
		}
		var raw bytes.Buffer
		set.WriteText(&raw)
		if err := os.WriteFile(base+".bench.txt", raw.Bytes(), 0o644); err != nil {
			return err
		}
	}

	page := buildPage(o, repo, b1, set, figs, othersPath)
	if err := os.WriteFile(o.Out, []byte(page.html()), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(base+".md", []byte(page.markdown()), 0o644); err != nil {
		return err
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "wrote %s and %s\n", o.Out, base+".md")
	}
	return nil
}

func usageError(err error) error { return bench.UsageError{Err: err} }

// goTests are the go test invocations that the sections need: one per
// -benchtime. Full runs use go test's default benchtime (1s), but
// BenchmarkBackendRatios, each of whose iterations is a whole batch
// through four backends, 100x as bench/backends.sh does.
func goTests(want map[string]bool, quick bool) []bench.GoTest {
	bt := func(full, q string) string {
		if quick {
			return q
		}
		return full
	}
	var out []bench.GoTest
	if want["backends"] {
		out = append(out,
			bench.GoTest{Pkgs: []string{"./conformance"}, Pattern: "^BenchmarkBackends$", Benchtime: bt("", "100x")},
			bench.GoTest{Pkgs: []string{"./conformance"}, Pattern: "^BenchmarkBackendRatios$", Benchtime: bt("100x", "5x")})
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
		out = append(out, bench.GoTest{Pkgs: pkgs, Pattern: "^(" + strings.Join(names, "|") + ")$", Benchtime: bt("", "100x")})
	}
	return out
}

func buildPage(o Options, repo string, b1 *bench.B1Results, set *bench.Set, figs []figure, othersPath string) *reportPage {
	p := &reportPage{Title: "policyrun benchmarks", Quick: o.Quick, Command: strings.TrimSpace(o.Command)}
	var host bench.Host
	if b1 != nil {
		host = b1.Host
	} else {
		host = bench.HostInfo(repo)
	}
	p.Meta = append(p.Meta, fmt.Sprintf("%s · %s %s/%s, %d CPUs", time.Now().UTC().Format("2006-01-02 15:04 UTC"), host.GoVersion, host.OS, host.Arch, host.CPUs))
	if host.Commit != "" {
		p.Meta = append(p.Meta, "commit "+host.Commit)
	}
	switch {
	case o.Bench != "":
		p.Meta = append(p.Meta, "go test benchmarks read from "+o.Bench)
	case set != nil && len(set.Lines) > 0:
		p.Meta = append(p.Meta, fmt.Sprintf("go test benchmarks: -count %d%s", o.Count, map[bool]string{true: ", -benchtime 100x (ratios 5x)", false: ""}[o.Quick]))
	}
	if o.Pipeline != "" {
		p.Meta = append(p.Meta, "B1 read from "+o.Pipeline)
	}
	if othersPath != "" {
		p.Others = othersPath
		if repo != "" {
			if rel, err := filepath.Rel(repo, othersPath); err == nil && !strings.HasPrefix(rel, "..") {
				p.Others = filepath.ToSlash(rel)
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
	for _, id := range Sections {
		// A section whose results were read from a file is drawn even
		// if --sections left it out.
		s := build[id]()
		if !o.Sections[id] && s.Skipped != "" {
			continue
		}
		for _, c := range s.charts() {
			c.addFigures(figs, drawn)
		}
		p.Sections = append(p.Sections, s)
	}
	for i, f := range figs {
		if drawn[i] {
			continue
		}
		placed := false
		for _, s := range p.Sections {
			if strings.EqualFold(s.ID, f.Benchmark) {
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
