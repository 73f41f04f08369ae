package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/policyrun/policyrun/bench"
)

func TestStatCell(t *testing.T) {
	if got := statCell(bench.Stat{Median: 2, Min: 1, Max: 3, N: 3}); got != "2.00 (1.00–3.00)" {
		t.Errorf("statCell = %q", got)
	}
}

func TestFmtNum(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 0.0412: "0.0412", 0.305: "0.305", 1.234: "1.23", 12.34: "12.3", 123.4: "123",
		1234.5: "1,234", 1234567: "1,234,567", -1500: "-1,500",
	} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct{ max, end, step float64 }{
		{0, 1, 0.2}, {9.7, 10, 2}, {33, 40, 10}, {840, 1000, 200}, {0.83, 1, 0.2}, {19258, 20000, 5000},
	} {
		end, step := niceAxis(c.max)
		if end != c.end || step != c.step || end < c.max {
			t.Errorf("niceAxis(%v) = %v, %v, want %v, %v", c.max, end, step, c.end, c.step)
		}
	}
}

var (
	svgRe     = regexp.MustCompile(`(?s)<svg .*?</svg>`)
	barRe     = regexp.MustCompile(`<rect class="bar[^"]*" x="([-0-9.]+)" y="([-0-9.]+)" width="([-0-9.]+)" height="([-0-9.]+)"`)
	yAxisRe   = regexp.MustCompile(`<line class="axis" x1="([-0-9.]+)" y1="[-0-9.]+" x2="([-0-9.]+)"`)
	sectionRe = regexp.MustCompile(`(?s)<section id="([^"]+)">(.*?)</section>`)
)

// checkReport checks a report page as a reader would meet it: self-
// contained, one chart or more per section, bars from zero with
// non-negative sizes, labelled axes, and the sources of the others'
// figures named. It returns the sections' HTML by id.
func checkReport(t *testing.T, page string) map[string]string {
	t.Helper()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") {
		t.Fatalf("not an HTML page: %.80q", page)
	}
	for _, bad := range []string{"<script", "<link", "<img", "src=", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page is not self-contained: it has %q", bad)
		}
	}
	sections := map[string]string{}
	for _, m := range sectionRe.FindAllStringSubmatch(page, -1) {
		sections[m[1]] = m[2]
	}
	for id, body := range sections {
		if id == "others" {
			continue
		}
		svgs := svgRe.FindAllString(body, -1)
		if len(svgs) == 0 {
			t.Errorf("section %s has no chart", id)
		}
		for _, svg := range svgs {
			axes := yAxisRe.FindAllStringSubmatch(svg, -1)
			if len(axes) != 2 || axes[1][1] != axes[1][2] {
				t.Fatalf("section %s: no x and y axis in\n%.300s", id, svg)
			}
			zero := axes[1][1]
			bars := barRe.FindAllStringSubmatch(svg, -1)
			if len(bars) == 0 {
				t.Errorf("section %s: a chart without bars", id)
			}
			for _, b := range bars {
				w, _ := strconv.ParseFloat(b[3], 64)
				h, _ := strconv.ParseFloat(b[4], 64)
				if b[1] != zero || w < 0 || h <= 0 {
					t.Errorf("section %s: bar x=%s (axis at %s) width %v height %v", id, b[1], zero, w, h)
				}
			}
			for _, want := range []string{`class="axis-label"`, `class="tick"`, `class="value"`, `class="legend`} {
				if !strings.Contains(svg, want) {
					t.Errorf("section %s: a chart without %s", id, want)
				}
			}
		}
	}
	return sections
}

// fixtureB1 is B1 results as bench pipeline writes them: three runs.
func fixtureB1() *bench.B1Results {
	r := &bench.B1Results{Benchmark: "B1", Runs: 3, Seed: 1, Records: map[string]int{"flat": 1000, "k8s": 300},
		Host: bench.Host{GoVersion: "go1.x", OS: "linux", Arch: "amd64", CPUs: 2}}
	add := func(policy, backend, data string, cpu float64) {
		name := policy + "/" + backend
		if policy == "none" {
			name = "none/" + data
		}
		c := bench.B1Case{Name: name, Policy: policy, Backend: backend, Data: data}
		for i := range 3 {
			c.Samples = append(c.Samples, bench.B1Sample{CPU: cpu * (1 + float64(i)/10), Wall: cpu, RSS: 40 + float64(i), Records: int64(r.Records[data])})
		}
		c.Summarise()
		r.Cases = append(r.Cases, c)
	}
	add("none", "none", "flat", 0.001)
	add("none", "none", "k8s", 0.001)
	for i, p := range bench.B1Policies {
		for j, b := range bench.B1Backends {
			add(p, b, bench.B1Kind(p), 0.001*float64(1+i+4*j))
		}
	}
	return r
}

// fixtureBench is go test benchmark output for every section, -count 3.
func fixtureBench() string {
	var b strings.Builder
	for run := range 3 {
		k := 1 + float64(run)/10
		b.WriteString("pkg: github.com/policyrun/policyrun/conformance\n")
		for _, p := range bench.B1Policies {
			fmt.Fprintf(&b, "BenchmarkBackendRatios/%s-2 5 1000 ns/op %g vm-ns/record %g lua_t-ns/record %g lua_h-ns/record %g expr-ns/record %g lua_t/vm %g lua_h/vm %g expr/vm\n",
				p, 100*k, 3000*k, 2000*k, 5000*k, 30*k, 20*k, 50*k)
			for i, be := range []string{"vm", "lua_transpiled", "lua_handwritten", "expr"} {
				fmt.Fprintf(&b, "BenchmarkBackends/%s/%s-2 100 %g ns/op %g cpu-ns/record %g ns/record 0 B/op %d allocs/op\n", p, be, 100*k*float64(1+i), 90*k*float64(1+i), 100*k*float64(1+i), 10*i)
			}
		}
		b.WriteString("pkg: github.com/policyrun/policyrun/record\n")
		for i, c := range []string{"referenced", "owned", "owned_edits", "json_referenced", "json_flat_pair", "json_map", "msgpack_map"} {
			fmt.Fprintf(&b, "BenchmarkRecordDecode/%s-2 100 %g ns/op %g arena-B/record 0 B/op 0 allocs/op\n", c, 300*k+float64(100*i), 700+float64(100*i))
		}
		for i, c := range []string{"fields12_edits0", "fields12_edits0_reencode", "fields12_upserts6", "fields128_edits0", "fields128_edits0_reencode", "fields128_upserts6"} {
			fmt.Fprintf(&b, "BenchmarkEditChain/%s-2 100 %g ns/op 500 MB/s 0 B/op 0 allocs/op\n", c, 300*k*float64(1+i))
		}
		fmt.Fprintf(&b, "BenchmarkSideBySide-2 1 1000 ns/op %g json_map/json_referenced %g msgpack_map/referenced %g upserts6/edits0 %g upserts6/edits0_reencode\n", 9*k, 5*k, 1.6*k, 1.1*k)
		for _, c := range []string{"decode/arena", "decode/protogo", "encode/arena", "encode/protogo"} {
			fmt.Fprintf(&b, "BenchmarkOTLP/%s-2 100 %g ns/op %g ns/record 100 B/op 1 allocs/op\n", c, 80000*k, 800*k)
		}
		b.WriteString("pkg: github.com/policyrun/policyrun/pipeline/checkpoint\n")
		for _, op := range []string{"save", "load"} {
			for fi, f := range []string{"json", "protobuf"} {
				for _, n := range []int{1, 10, 100, 1000} {
					fmt.Fprintf(&b, "BenchmarkCheckpoint/%s/%s/files=%d-2 100 %g ns/op %d bytes/checkpoint 0 B/op 0 allocs/op\n",
						op, f, n, float64(n)*7000*k/float64(1+5*fi), n*(2049-fi*761))
				}
			}
		}
	}
	return b.String()
}

// TestBenchReportFromFiles draws the page from saved results, without
// running anything: every section, the others' figures beside ours.
func TestBenchReportFromFiles(t *testing.T) {
	dir := t.TempDir()
	b1, _ := json.Marshal(fixtureB1())
	if err := os.WriteFile(filepath.Join(dir, "b1.json"), b1, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bench.txt"), []byte(fixtureBench()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.html")
	err := Run(context.Background(), Options{Out: out, Pipeline: filepath.Join(dir, "b1.json"), Bench: filepath.Join(dir, "bench.txt"),
		Sections: allSections()})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sections := checkReport(t, string(page))
	for _, id := range Sections {
		if sections[id] == "" {
			t.Errorf("no section %s", id)
		}
	}
	// Three runs: whiskers.
	if !strings.Contains(sections["b1"], `class="whisker"`) {
		t.Error("B1 of three runs has no whisker")
	}
	for _, id := range []string{"b2-side", "b3-side", "ratios", "b4-speedup"} {
		if !strings.Contains(string(page), `id="`+id+`"`) {
			t.Errorf("no chart %s", id)
		}
	}
	// Every figure of bench/others.json is on the page, with its source:
	// drawn under its chart, or listed under its section.
	figs, err := loadOthers("../others.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range figs {
		body := sections[strings.ToLower(f.Benchmark)]
		if !strings.Contains(body, html.EscapeString(f.System)) || !strings.Contains(body, html.EscapeString(f.Source)) {
			t.Errorf("%s %s %s: not on the page with its source", f.Benchmark, f.System, f.Case)
		}
	}
	for _, want := range []string{
		`class="bar other"`,                          // drawn beside ours
		"Fluent Bit (compact record arena)</strong>", // named under the B2 chart
		"OpenTelemetry Collector (protobuf checkpoints)</strong>",
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page has no %q", want)
		}
	}
	// B5's server figures have no codec counterpart: listed, not drawn.
	if strings.Contains(sections["b5"], `class="bar other"`) || !strings.Contains(sections["b5"], "no matching measurement") {
		t.Error("B5: the server figures should be listed, not drawn")
	}
	md, err := os.ReadFile(filepath.Join(dir, "r.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## B1 — ", "| 3-edit/vm | flat | 1,000 |", "## B4 — ", "Fluent Bit 5.2 (chain fusion) ("} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md has no %q", want)
		}
	}
}

func TestOthersFile(t *testing.T) {
	figs, err := loadOthers("../others.json")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range figs {
		seen[f.Benchmark] = true
		if f.Unit == "CPU s" && f.Records == 0 {
			t.Errorf("%s %s %s: CPU s without its records", f.Benchmark, f.System, f.Case)
		}
	}
	for _, b := range []string{"B1", "B2", "B3", "B4", "B5"} {
		if !seen[b] {
			t.Errorf("bench/others.json has no figure of %s", b)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`[{"system":"x","benchmark":"B2","case":"owned","value":1,"unit":"ns/record"}]`), 0o644)
	if _, err := loadOthers(bad); err == nil || !strings.Contains(err.Error(), "source") {
		t.Errorf("a figure without its source: %v", err)
	}
}

// TestBenchReportQuick is the smoke test of the whole thing: bench report
// --quick builds policyrun, runs B1 over small data as child processes,
// runs the go test benchmarks from the repository root, and writes the
// page; every section has its chart and the others' sources are named.
func TestBenchReportQuick(t *testing.T) {
	if testing.Short() {
		t.Skip("builds policyrun and runs it as child processes")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	var progress bytes.Buffer
	t0 := time.Now()
	if err := Run(context.Background(), Options{Out: out, Quick: true, Sections: allSections(), Progress: &progress}); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	t.Logf("bench report --quick: %.1f s", time.Since(t0).Seconds())
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sections := checkReport(t, string(page))
	for _, id := range Sections {
		if sections[id] == "" || strings.Contains(sections[id], `class="skipped"`) {
			t.Errorf("section %s missing or not run", id)
		}
	}
	if !strings.Contains(string(page), "Quick run") {
		t.Error("no quick-run banner")
	}
	for _, want := range []string{"Fluent Bit 5.1.1 (Lua filter)</strong>", "Fluent Bit (compact record arena)</strong>",
		"Fluent Bit 5.2 (chain fusion)</strong>", "OpenTelemetry Collector (protobuf checkpoints)</strong>", "source: "} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page does not name %q", want)
		}
	}
	// The raw results are beside it, and draw the same page again.
	for _, f := range []string{"r.md", "r.b1.json", "r.bench.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	b1, err := bench.ReadB1Results(filepath.Join(dir, "r.b1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b1.Cases) != 2+len(bench.B1Policies)*len(bench.B1Backends) {
		t.Errorf("B1 ran %d configurations", len(b1.Cases))
	}
	for _, c := range b1.Cases {
		if len(c.Samples) != 1 || c.CPU.Median <= 0 || c.RSS.Median <= 0 || c.Records != int64(b1.Records[c.Data]) {
			t.Errorf("%s: %+v", c.Name, c)
		}
	}
}

// allSections is every section, as bench report runs by default.
func allSections() map[string]bool {
	m := map[string]bool{}
	for _, s := range Sections {
		m[s] = true
	}
	return m
}
