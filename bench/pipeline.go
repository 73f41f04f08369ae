package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
	B1Policies = []string{"1-noop", "2-drop-all", "3-edit", "4-read5-edit", "5-k8s-edit", "6-k8s-lift",
		"7-policy-then-chain", "8-chain-then-policy", "9-output-side"}
	B1Backends = []string{"vm", "lua", "lua_script"}
)

// B1Count is each kind's record count in B1 (cri: the tail input's own
// benchmarks), the default of policyrun gen.
var B1Count = map[string]int{"flat": 1_000_000, "k8s": 300_000, "cri": 300_000}

// B1Kind is the data a B1 policy runs over: the Kubernetes records for
// policies 5 and 6, the flat lines for the others.
func B1Kind(policy string) string {
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

// B1Config is a B1 run as asked for; a zero count takes its default, the
// full size or, with Quick, the smoke test's.
type B1Config struct {
	Repo   string // the repository root (default: found from the working directory up)
	Data   string // where the binary, the data and the configs go
	Binary string // policyrun to measure; empty: built from Repo into Data
	Runs   int
	Flat   int
	K8s    int
	Seed   uint64
	// Backends and Policies are comma-separated; "" is every backend,
	// and Policies "all" or "" every policy.
	Backends, Policies string
	Quick              bool
	Progress           io.Writer // where each run is reported; nil: nowhere
}

// b1Options is a B1Config resolved: defaults taken and names checked.
type b1Options struct {
	repo     string
	data     string
	binary   string
	runs     int
	flat     int
	k8s      int
	seed     uint64
	backends []string
	policies []string
	progress io.Writer
}

// B1Results is what bench pipeline writes.
type B1Results struct {
	Benchmark string         `json:"benchmark"`
	Started   time.Time      `json:"started"`
	Host      Host           `json:"host"`
	Binary    string         `json:"binary"`
	Runs      int            `json:"runs"`
	Seed      uint64         `json:"seed"`
	Records   map[string]int `json:"records"`
	Cases     []B1Case       `json:"cases"`
}

// B1Case is one configuration (policy × backend, or no filter) with its
// runs and their summaries.
type B1Case struct {
	Name    string     `json:"name"`    // "3-edit/vm", "none/flat"
	Policy  string     `json:"policy"`  // "3-edit", "none"
	Backend string     `json:"backend"` // "vm", "lua", "lua_script", "none"
	Data    string     `json:"data"`    // "flat", "k8s"
	Records int64      `json:"records"` // records in, per run
	CPU     Stat       `json:"cpu_s"`
	CPUPerM Stat       `json:"cpu_s_per_million"`
	Wall    Stat       `json:"wall_s"`
	RSS     Stat       `json:"peak_rss_mib"`
	Samples []B1Sample `json:"samples"`
	config  string
}

// B1Sample is one run of policyrun run, measured from outside: CPU from the
// child's rusage, wall around the child, peak RSS from its rusage.
type B1Sample struct {
	User    float64 `json:"user_s"`
	Sys     float64 `json:"sys_s"`
	CPU     float64 `json:"cpu_s"`
	Wall    float64 `json:"wall_s"`
	RSS     float64 `json:"peak_rss_mib"`
	Records int64   `json:"records"`
}

// resolve takes the defaults and checks the names; cleanup removes a
// temporary data directory.
func (c B1Config) resolve() (b1Options, func(), error) {
	cleanup := func() {}
	repo, err := FindRepo(c.Repo)
	if err != nil {
		return b1Options{}, cleanup, err
	}
	o := b1Options{repo: repo, data: c.Data, binary: c.Binary, runs: c.Runs, flat: c.Flat, k8s: c.K8s,
		seed: c.Seed, progress: c.Progress}
	pick := func(n *int, full, q int) {
		if *n == 0 {
			*n = full
			if c.Quick {
				*n = q
			}
		}
	}
	pick(&o.runs, 5, 1)
	pick(&o.flat, B1Count["flat"], quickFlat)
	pick(&o.k8s, B1Count["k8s"], quickK8s)
	if o.runs < 1 || o.flat < 1 || o.k8s < 1 {
		return o, cleanup, errors.New("--runs, --flat and --k8s must be positive")
	}
	backends := c.Backends
	if backends == "" {
		backends = strings.Join(B1Backends, ",")
	}
	for _, b := range strings.Split(backends, ",") {
		if b = strings.TrimSpace(b); b == "" {
			continue
		}
		if b != "vm" && b != "lua" && b != "lua_script" {
			return o, cleanup, fmt.Errorf("--backends: unknown backend %q (known: vm, lua, lua_script)", b)
		}
		o.backends = append(o.backends, b)
	}
	if c.Policies == "all" || c.Policies == "" {
		o.policies = B1Policies
	} else {
		for _, p := range strings.Split(c.Policies, ",") {
			p = strings.TrimSuffix(strings.TrimSpace(p), ".policy")
			if _, err := os.Stat(filepath.Join(repo, "conformance", "policies", p+".policy")); err != nil {
				return o, cleanup, fmt.Errorf("--policies: no conformance/policies/%s.policy", p)
			}
			o.policies = append(o.policies, p)
		}
	}
	if o.data == "" {
		if c.Quick {
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

// RunB1 runs benchmark B1: a UsageError when c asks for what cannot be
// run, the results otherwise.
func RunB1(ctx context.Context, c B1Config) (*B1Results, error) {
	o, cleanup, err := c.resolve()
	defer cleanup()
	if err != nil {
		return nil, UsageError{Err: err}
	}
	return runB1(ctx, o)
}

// runB1 runs benchmark B1.
func runB1(ctx context.Context, o b1Options) (*B1Results, error) {
	res := &B1Results{Benchmark: "B1", Started: time.Now().UTC().Truncate(time.Second), Host: HostInfo(o.repo),
		Runs: o.runs, Seed: o.seed, Records: map[string]int{"flat": o.flat, "k8s": o.k8s}}
	bin, err := b1Binary(ctx, o)
	if err != nil {
		return nil, err
	}
	res.Binary = bin
	kinds := map[string]bool{"flat": true}
	for _, p := range o.policies {
		kinds[B1Kind(p)] = true
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
			res.Cases = append(res.Cases, B1Case{Name: "none/" + k, Policy: "none", Backend: "none", Data: k})
		}
	}
	for _, p := range o.policies {
		for _, b := range o.backends {
			res.Cases = append(res.Cases, B1Case{Name: p + "/" + b, Policy: p, Backend: b, Data: B1Kind(p)})
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
		res.Cases[i].Summarise()
	}
	return res, nil
}

// Summarise sets the case's stats from its samples.
func (c *B1Case) Summarise() {
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
	c.CPU, c.CPUPerM, c.Wall, c.RSS = StatOf(cpu), StatOf(perM), StatOf(wall), StatOf(rss)
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
func b1Config(o b1Options, c *B1Case) string {
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
func b1RunOnce(ctx context.Context, bin, cfg string) (B1Sample, error) {
	cmd := exec.CommandContext(ctx, bin, "run", cfg)
	var errb bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return B1Sample{}, fmt.Errorf("policyrun run %s: %v\n%s", cfg, err, tailLines(errb.Bytes(), 20))
	}
	ps := cmd.ProcessState
	s := B1Sample{User: ps.UserTime().Seconds(), Sys: ps.SystemTime().Seconds(), Wall: wall.Seconds()}
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

// WriteTable prints the medians as bench/pipeline.sh does.
func (r *B1Results) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "\n%-32s %9s %8s %10s %8s %8s\n", fmt.Sprintf("run (median of %d)", r.Runs), "records", "CPU s", "CPU s/M", "wall s", "RSS MiB")
	for _, c := range r.Cases {
		fmt.Fprintf(w, "%-32s %9d %8.3f %10.3f %8.3f %8.1f\n", c.Name, c.Records, c.CPU.Median, c.CPUPerM.Median, c.Wall.Median, c.RSS.Median)
	}
}

// ReadB1Results reads the JSON that bench pipeline wrote.
func ReadB1Results(path string) (*B1Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r B1Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Benchmark != "B1" || len(r.Cases) == 0 {
		return nil, fmt.Errorf("%s: not the results of bench pipeline", path)
	}
	return &r, nil
}
