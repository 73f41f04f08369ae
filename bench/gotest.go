package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A Line is one result line of `go test -bench`: the benchmark's name
// (the -GOMAXPROCS suffix taken off), its package and its metrics by unit
// (ns/op, B/op, allocs/op and the ReportMetric ones).
type Line struct {
	Pkg     string
	Name    string
	Iters   int64
	Metrics map[string]float64
}

// A Set is every result line of one or more `go test -bench` runs; with
// -count N each benchmark has N lines, in the order they ran.
type Set struct {
	Lines []Line
}

// Values returns the measurements of one benchmark in one unit, one per
// run, in run order.
func (s *Set) Values(name, unit string) []float64 {
	var out []float64
	for _, l := range s.Lines {
		if l.Name == name {
			if v, ok := l.Metrics[unit]; ok {
				out = append(out, v)
			}
		}
	}
	return out
}

// Stat summarises Values.
func (s *Set) Stat(name, unit string) Stat { return StatOf(s.Values(name, unit)) }

// Names returns the distinct benchmark names under prefix ("BenchmarkX/"),
// in the order they first ran.
func (s *Set) Names(prefix string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range s.Lines {
		if strings.HasPrefix(l.Name, prefix) && !seen[l.Name] {
			seen[l.Name] = true
			out = append(out, l.Name)
		}
	}
	return out
}

// Add appends the lines of o.
func (s *Set) Add(o *Set) {
	if o != nil {
		s.Lines = append(s.Lines, o.Lines...)
	}
}

// WriteText writes the set back as standard benchmark output (with pkg:
// lines), which Parse reads again: the raw results that bench report keeps.
func (s *Set) WriteText(w io.Writer) {
	pkg := ""
	for _, l := range s.Lines {
		if l.Pkg != pkg {
			pkg = l.Pkg
			fmt.Fprintf(w, "pkg: %s\n", pkg)
		}
		fmt.Fprintf(w, "%s\t%d", l.Name, l.Iters)
		for _, u := range sortedUnits(l.Metrics) {
			fmt.Fprintf(w, "\t%s %s", strconv.FormatFloat(l.Metrics[u], 'g', -1, 64), u)
		}
		fmt.Fprintln(w)
	}
}

// sortedUnits puts ns/op first, as go test does, then the others by name.
func sortedUnits(m map[string]float64) []string {
	var us []string
	for u := range m {
		if u != "ns/op" {
			us = append(us, u)
		}
	}
	slices.Sort(us)
	if _, ok := m["ns/op"]; ok {
		us = append([]string{"ns/op"}, us...)
	}
	return us
}

// testEvent is the part of a `go test -json` event that matters here.
type testEvent struct {
	Action  string
	Package string
	Output  string
}

// Parse reads benchmark results: the standard output of
// `go test -bench` (several packages, each after its pkg: line) or the
// events of `go test -json -bench`, whose output events it joins per
// package before reading the lines (a result line may come in two events:
// its name when the benchmark starts, its figures when it ends).
func Parse(r io.Reader) (*Set, error) {
	br := bufio.NewReader(r)
	first, _ := br.Peek(1)
	set := &Set{}
	if len(first) == 1 && first[0] == '{' {
		texts := map[string]*strings.Builder{}
		var order []string
		dec := json.NewDecoder(br)
		for {
			var ev testEvent
			if err := dec.Decode(&ev); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("go test -json output: %v", err)
			}
			if ev.Action != "output" {
				continue
			}
			b := texts[ev.Package]
			if b == nil {
				b = &strings.Builder{}
				texts[ev.Package] = b
				order = append(order, ev.Package)
			}
			b.WriteString(ev.Output)
		}
		for _, p := range order {
			set.Lines = append(set.Lines, parseBenchText(p, texts[p].String())...)
		}
	} else {
		b, err := io.ReadAll(br)
		if err != nil {
			return nil, err
		}
		set.Lines = parseBenchText("", string(b))
	}
	stripProcs(set.Lines)
	return set, nil
}

// parseBenchText reads the result lines of standard benchmark output.
func parseBenchText(pkg, text string) []Line {
	var out []Line
	for _, line := range strings.Split(text, "\n") {
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		if l, ok := parseBenchLine(line); ok {
			l.Pkg = pkg
			out = append(out, l)
		}
	}
	return out
}

// parseBenchLine reads "BenchmarkX/sub-2  100  92.5 ns/op  40 cpu-ns/record ...".
func parseBenchLine(line string) (Line, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return Line{}, false
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Line{}, false
	}
	l := Line{Name: f[0], Iters: n, Metrics: map[string]float64{}}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Line{}, false
		}
		l.Metrics[f[i+1]] = v
	}
	return l, true
}

var procsSuffix = regexp.MustCompile(`-(\d+)$`)

// stripProcs takes the -GOMAXPROCS suffix off the names when every line
// has the same one (go test adds none when GOMAXPROCS is 1, and then a
// name's own "-12" must stay).
func stripProcs(lines []Line) {
	suffix := ""
	for i, l := range lines {
		m := procsSuffix.FindString(l.Name)
		if m == "" || i > 0 && m != suffix {
			return
		}
		suffix = m
	}
	for i := range lines {
		lines[i].Name = strings.TrimSuffix(lines[i].Name, suffix)
	}
}

// GoTest is one `go test -bench` invocation.
type GoTest struct {
	Pkgs      []string
	Pattern   string
	Benchtime string // empty: go test's default, 1s
}

// Run runs the benchmarks in the repository with -json, count times each,
// and reads their results.
func (g GoTest) Run(ctx context.Context, repo string, count int, progress io.Writer) (*Set, error) {
	args := []string{"test", "-run", "^$", "-bench", g.Pattern, "-benchmem", "-count", strconv.Itoa(count), "-timeout", "90m", "-json"}
	if g.Benchtime != "" {
		args = append(args, "-benchtime", g.Benchtime)
	}
	args = append(args, g.Pkgs...)
	if progress != nil {
		fmt.Fprintf(progress, "go %s\n", strings.Join(quoteArgs(args), " "))
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = repo
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	runErr := cmd.Run()
	set, err := Parse(bytes.NewReader(out.Bytes()))
	if runErr != nil {
		// The failure's own words are in the output events.
		var text strings.Builder
		dec := json.NewDecoder(bytes.NewReader(out.Bytes()))
		for {
			var ev testEvent
			if dec.Decode(&ev) != nil {
				break
			}
			if ev.Action == "output" || ev.Action == "build-output" {
				text.WriteString(ev.Output)
			}
		}
		return nil, fmt.Errorf("go test %s: %v\n%s%s", strings.Join(g.Pkgs, " "), runErr,
			tailLines([]byte(text.String()), 30), tailLines(errb.Bytes(), 10))
	}
	if err != nil {
		return nil, err
	}
	if len(set.Lines) == 0 {
		return nil, fmt.Errorf("go test %s -bench %s: no benchmark results", strings.Join(g.Pkgs, " "), g.Pattern)
	}
	return set, nil
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, "^$|*? ") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
