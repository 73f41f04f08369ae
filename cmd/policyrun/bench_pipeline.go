package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The B1 policies (conformance/policies, conformance/baselines/lua) and
// backends, in the order of the report.
var (
	b1Policies = []string{"1-noop", "2-drop-all", "3-edit", "4-read5-edit", "5-k8s-edit", "6-k8s-lift",
		"7-policy-then-chain", "8-chain-then-policy", "9-output-side"}
	b1Backends = []string{"vm", "lua", "lua_script"}
)

// b1Kind is the data a B1 policy runs over: the Kubernetes records for
// policies 5 and 6, the flat lines for the others.
func b1Kind(policy string) string {
	if strings.HasPrefix(policy, "5-") || strings.HasPrefix(policy, "6-") {
		return "k8s"
	}
	return "flat"
}

// Quick counts: small enough for a smoke test, the same proportion of
// flat to Kubernetes records as B1.
const (
	quickFlat = 20_000
	quickK8s  = 6_000
)

// b1Options configures a B1 run.
type b1Options struct {
	repo     string // the repository root: policies, baselines, the build
	data     string // where the binary, the data and the configs go
	binary   string // policyrun to measure; empty: built from repo into data
	runs     int
	flat     int
	k8s      int
	seed     uint64
	backends []string
	policies []string
	progress io.Writer
}

// b1Results is what bench pipeline writes.
type b1Results struct {
	Benchmark string         `json:"benchmark"`
	Started   time.Time      `json:"started"`
	Host      benchHost      `json:"host"`
	Binary    string         `json:"binary"`
	Runs      int            `json:"runs"`
	Seed      uint64         `json:"seed"`
	Records   map[string]int `json:"records"`
	Cases     []b1Case       `json:"cases"`
}

type benchHost struct {
	GoVersion string `json:"go"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	Commit    string `json:"commit,omitempty"`
}

// b1Case is one configuration (policy × backend, or no filter) with its
// runs and their summaries.
type b1Case struct {
	Name    string     `json:"name"`    // "3-edit/vm", "none/flat"
	Policy  string     `json:"policy"`  // "3-edit", "none"
	Backend string     `json:"backend"` // "vm", "lua", "lua_script", "none"
	Data    string     `json:"data"`    // "flat", "k8s"
	Records int64      `json:"records"` // records in, per run
	CPU     stat       `json:"cpu_s"`
	CPUPerM stat       `json:"cpu_s_per_million"`
	Wall    stat       `json:"wall_s"`
	RSS     stat       `json:"peak_rss_mib"`
	Samples []b1Sample `json:"samples"`
	config  string
}

// b1Sample is one run of policyrun run, measured from outside: CPU from the
// child's rusage, wall around the child, peak RSS from its rusage.
type b1Sample struct {
	User    float64 `json:"user_s"`
	Sys     float64 `json:"sys_s"`
	CPU     float64 `json:"cpu_s"`
	Wall    float64 `json:"wall_s"`
	RSS     float64 `json:"peak_rss_mib"`
	Records int64   `json:"records"`
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
	o, quick := b1Flags(fl)
	if code, ok := parseFlags(fl, args); !ok {
		return code
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "policyrun bench pipeline: unexpected arguments: %s\n", strings.Join(fl.Args(), " "))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts, cleanup, err := o.resolve(*quick, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun bench pipeline: %v\n", err)
		return 2
	}
	defer cleanup()
	res, err := runB1(ctx, opts)
	if err != nil {
		fmt.Fprintf(stderr, "policyrun bench pipeline: %v\n", err)
		return 1
	}
	res.writeTable(stderr)
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

// b1FlagValues are the flags that bench pipeline and bench report share.
type b1FlagValues struct {
	repo, data, binary *string
	runs, flat, k8s    *int
	seed               *uint64
	backends, policies *string
}

func b1Flags(fl *flag.FlagSet) (b1FlagValues, *bool) {
	v := b1FlagValues{
		repo:     fl.String("repo", "", "the policyrun repository `DIR` (default: found from the working directory up)"),
		data:     fl.String("data", "", "`DIR` for the binary, the data and the configs (default: $TMPDIR/policyrun-bench; --quick: a temporary directory)"),
		binary:   fl.String("policyrun", "", "measure this policyrun `BINARY` instead of one built from the repository"),
		runs:     fl.Int("runs", 0, "runs of every configuration (default 5; --quick 1)"),
		flat:     fl.Int("flat", 0, "flat records (default 1,000,000; --quick 20,000)"),
		k8s:      fl.Int("k8s", 0, "Kubernetes records (default 300,000; --quick 6,000)"),
		seed:     fl.Uint64("seed", 1, "seed of policyrun gen"),
		backends: fl.String("backends", strings.Join(b1Backends, ","), "backends, comma-separated"),
		policies: fl.String("policies", "all", "policies of conformance/policies, comma-separated (e.g. 1-noop,3-edit), or all"),
	}
	quick := fl.Bool("quick", false, "small counts, one run: a smoke test")
	return v, quick
}

// resolve turns the flags into options; cleanup removes a temporary data
// directory.
func (v b1FlagValues) resolve(quick bool, progress io.Writer) (b1Options, func(), error) {
	cleanup := func() {}
	repo, err := findRepo(*v.repo)
	if err != nil {
		return b1Options{}, cleanup, err
	}
	o := b1Options{repo: repo, data: *v.data, binary: *v.binary, runs: *v.runs, flat: *v.flat, k8s: *v.k8s,
		seed: *v.seed, progress: progress}
	pick := func(n *int, full, q int) {
		if *n == 0 {
			*n = full
			if quick {
				*n = q
			}
		}
	}
	pick(&o.runs, 5, 1)
	pick(&o.flat, b1Count["flat"], quickFlat)
	pick(&o.k8s, b1Count["k8s"], quickK8s)
	if o.runs < 1 || o.flat < 1 || o.k8s < 1 {
		return o, cleanup, errors.New("--runs, --flat and --k8s must be positive")
	}
	for _, b := range strings.Split(*v.backends, ",") {
		if b = strings.TrimSpace(b); b == "" {
			continue
		}
		if b != "vm" && b != "lua" && b != "lua_script" {
			return o, cleanup, fmt.Errorf("--backends: unknown backend %q (known: vm, lua, lua_script)", b)
		}
		o.backends = append(o.backends, b)
	}
	if *v.policies == "all" || *v.policies == "" {
		o.policies = b1Policies
	} else {
		for _, p := range strings.Split(*v.policies, ",") {
			p = strings.TrimSuffix(strings.TrimSpace(p), ".policy")
			if _, err := os.Stat(filepath.Join(repo, "conformance", "policies", p+".policy")); err != nil {
				return o, cleanup, fmt.Errorf("--policies: no conformance/policies/%s.policy", p)
			}
			o.policies = append(o.policies, p)
		}
	}
	if o.data == "" {
		if quick {
			d, err := os.MkdirTemp("", "policyrun-bench-")
			if err != nil {
				return o, cleanup, err
			}
			o.data, cleanup = d, func() { os.RemoveAll(d) }
		} else {
			o.data = filepath.Join(os.TempDir(), "policyrun-bench")
		}
	}
	if o.data, err = filepath.Abs(o.data); err != nil {
		return o, cleanup, err
	}
	return o, cleanup, os.MkdirAll(o.data, 0o755)
}

// runB1 runs benchmark B1.
func runB1(ctx context.Context, o b1Options) (*b1Results, error) {
	res := &b1Results{Benchmark: "B1", Started: time.Now().UTC().Truncate(time.Second), Host: hostInfo(o.repo),
		Runs: o.runs, Seed: o.seed, Records: map[string]int{"flat": o.flat, "k8s": o.k8s}}
	bin, err := b1Binary(ctx, o)
	if err != nil {
		return nil, err
	}
	res.Binary = bin
	kinds := map[string]bool{"flat": true}
	for _, p := range o.policies {
		kinds[b1Kind(p)] = true
	}
	if len(o.policies) == 0 {
		kinds["k8s"] = true
	}
	for _, k := range []string{"flat", "k8s"} {
		if kinds[k] {
			if err := b1Gen(ctx, bin, o, k, res.Records[k]); err != nil {
				return nil, err
			}
		}
	}

	// The configurations: no filter per kind, then policy × backend.
	for _, k := range []string{"flat", "k8s"} {
		if kinds[k] {
			res.Cases = append(res.Cases, b1Case{Name: "none/" + k, Policy: "none", Backend: "none", Data: k})
		}
	}
	for _, p := range o.policies {
		for _, b := range o.backends {
			res.Cases = append(res.Cases, b1Case{Name: p + "/" + b, Policy: p, Backend: b, Data: b1Kind(p)})
		}
	}
	for i := range res.Cases {
		c := &res.Cases[i]
		c.config = filepath.Join(o.data, strings.ReplaceAll(c.Name, "/", "_")+".yaml")
		if err := os.WriteFile(c.config, []byte(b1Config(o, c)), 0o644); err != nil {
			return nil, err
		}
	}

	// Interleaved rounds; each round starts one configuration further on,
	// so that no configuration always runs first or after the same one.
	for r := 0; r < o.runs; r++ {
		for j := range res.Cases {
			c := &res.Cases[(j+r)%len(res.Cases)]
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			s, err := b1RunOnce(ctx, bin, c.config)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			if want := int64(res.Records[c.Data]); s.Records != want {
				return nil, fmt.Errorf("%s: the run read %d records of %d", c.Name, s.Records, want)
			}
			c.Samples = append(c.Samples, s)
			if o.progress != nil {
				fmt.Fprintf(o.progress, "run %d/%d %-32s CPU %.3f s, wall %.3f s, RSS %.1f MiB\n",
					r+1, o.runs, c.Name, s.CPU, s.Wall, s.RSS)
			}
		}
	}
	for i := range res.Cases {
		res.Cases[i].summarise()
	}
	return res, nil
}

func (c *b1Case) summarise() {
	var cpu, perM, wall, rss []float64
	for _, s := range c.Samples {
		cpu = append(cpu, s.CPU)
		wall = append(wall, s.Wall)
		rss = append(rss, s.RSS)
		if s.Records > 0 {
			perM = append(perM, s.CPU/float64(s.Records)*1e6)
		}
		c.Records = s.Records
	}
	c.CPU, c.CPUPerM, c.Wall, c.RSS = statOf(cpu), statOf(perM), statOf(wall), statOf(rss)
}

// b1Binary returns the policyrun to measure: --policyrun, or a plain
// build of the repository's cmd/policyrun (no race detector, no test
// binary), as bench/pipeline.sh does.
func b1Binary(ctx context.Context, o b1Options) (string, error) {
	if o.binary != "" {
		return filepath.Abs(o.binary)
	}
	bin := filepath.Join(o.data, "policyrun")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if o.progress != nil {
		fmt.Fprintf(o.progress, "go build -o %s ./cmd/policyrun\n", bin)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/policyrun")
	cmd.Dir = o.repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, tailLines(out, 20))
	}
	return bin, nil
}

// b1Gen writes <data>/<kind>.log with `policyrun gen`, unless it is there
// from the same binary, count and seed already.
func b1Gen(ctx context.Context, bin string, o b1Options, kind string, n int) error {
	file := filepath.Join(o.data, kind+".log")
	sum, err := fileSHA256(bin)
	if err != nil {
		return err
	}
	stamp := fmt.Sprintf("%s %d %d %s\n", kind, n, o.seed, sum)
	if old, err := os.ReadFile(file + ".stamp"); err == nil && string(old) == stamp {
		if _, err := os.Stat(file); err == nil {
			if o.progress != nil {
				fmt.Fprintf(o.progress, "kept      %s\n", file)
			}
			return nil
		}
	}
	os.Remove(file + ".stamp")
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, bin, "gen", kind, "--count", strconv.Itoa(n),
		"--seed", strconv.FormatUint(o.seed, 10), "-o", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("policyrun gen %s: %v\n%s", kind, err, tailLines(out, 20))
	}
	if o.progress != nil {
		fmt.Fprintf(o.progress, "generated %s: %d records in %.2f s\n", file, n, time.Since(t0).Seconds())
	}
	return os.WriteFile(file+".stamp", []byte(stamp), 0o644)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// b1Config is the pipeline of one configuration, as bench/pipeline.sh
// writes it.
func b1Config(o b1Options, c *b1Case) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline:\n  inputs:\n    - name: tail\n      path: %s\n", yamlQuote(filepath.Join(o.data, c.Data+".log")))
	b.WriteString("      parser: json\n      read_from_head: true\n      exit_on_eof: true\n      poll_interval: 50ms\n")
	switch c.Backend {
	case "none":
	case "lua_script":
		fmt.Fprintf(&b, "  filters:\n    - name: policy\n      backend: lua_script\n      file: %s\n      call: cb\n",
			yamlQuote(filepath.Join(o.repo, "conformance", "baselines", "lua", c.Policy+".lua")))
	default:
		fmt.Fprintf(&b, "  filters:\n    - name: policy\n      backend: %s\n      file: %s\n", c.Backend,
			yamlQuote(filepath.Join(o.repo, "conformance", "policies", c.Policy+".policy")))
	}
	b.WriteString("  outputs:\n    - name: null\n")
	return b.String()
}

// yamlQuote quotes a path as a YAML double-quoted scalar.
func yamlQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var (
	summaryRecords = regexp.MustCompile(`(?m)^records: in (\d+)`)
	summaryRSS     = regexp.MustCompile(`(?m)peak RSS ([0-9.]+) MiB`)
)

// b1RunOnce runs `policyrun run cfg` once and measures it.
func b1RunOnce(ctx context.Context, bin, cfg string) (b1Sample, error) {
	cmd := exec.CommandContext(ctx, bin, "run", cfg)
	var errb bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return b1Sample{}, fmt.Errorf("policyrun run %s: %v\n%s", cfg, err, tailLines(errb.Bytes(), 20))
	}
	ps := cmd.ProcessState
	s := b1Sample{User: ps.UserTime().Seconds(), Sys: ps.SystemTime().Seconds(), Wall: wall.Seconds()}
	s.CPU = s.User + s.Sys
	m := summaryRecords.FindSubmatch(errb.Bytes())
	if m == nil {
		return s, fmt.Errorf("policyrun run %s: no summary on stderr:\n%s", cfg, tailLines(errb.Bytes(), 20))
	}
	s.Records, _ = strconv.ParseInt(string(m[1]), 10, 64)
	if rss, ok := peakRSSMiB(ps); ok {
		s.RSS = rss
	} else if m := summaryRSS.FindSubmatch(errb.Bytes()); m != nil {
		s.RSS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	return s, nil
}

// hostInfo describes the machine and, when git knows it, the commit.
func hostInfo(repo string) benchHost {
	h := benchHost{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	if out, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		h.GoVersion = strings.TrimSpace(string(out))
	}
	cmd := exec.Command("git", "rev-parse", "--short=12", "HEAD")
	cmd.Dir = repo
	if out, err := cmd.Output(); err == nil {
		h.Commit = strings.TrimSpace(string(out))
		cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
		cmd.Dir = repo
		if out, err := cmd.Output(); err == nil && len(bytes.TrimSpace(out)) > 0 {
			h.Commit += "+dirty"
		}
	}
	return h
}

// writeTable prints the medians as bench/pipeline.sh does.
func (r *b1Results) writeTable(w io.Writer) {
	fmt.Fprintf(w, "\n%-32s %9s %8s %10s %8s %8s\n", fmt.Sprintf("run (median of %d)", r.Runs), "records", "CPU s", "CPU s/M", "wall s", "RSS MiB")
	for _, c := range r.Cases {
		fmt.Fprintf(w, "%-32s %9d %8.3f %10.3f %8.3f %8.1f\n", c.Name, c.Records, c.CPU.Median, c.CPUPerM.Median, c.Wall.Median, c.RSS.Median)
	}
}

// readB1Results reads the JSON that bench pipeline wrote.
func readB1Results(path string) (*b1Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r b1Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Benchmark != "B1" || len(r.Cases) == 0 {
		return nil, fmt.Errorf("%s: not the results of bench pipeline", path)
	}
	return &r, nil
}
