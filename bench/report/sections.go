package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/policyrun/policyrun/bench"
)

// A reportSection is one benchmark on the page: what it measures, then
// charts, each with its table beside it.
type reportSection struct {
	ID, Title string
	Intro     []string // paragraphs
	Blocks    []reportBlock
	Skipped   string   // why the section has no results
	listed    []figure // figures of this benchmark that no chart could draw
}

type reportBlock struct {
	Chart *chart // nil: a table alone
	table *mdTable
}

// mdTable is a table for the page and for report.md.
type mdTable struct {
	head  []string
	right []bool // right-aligned (numeric) columns
	rows  [][]string
}

func newTable(head ...string) *mdTable {
	t := &mdTable{head: head, right: make([]bool, len(head))}
	for i := 1; i < len(head); i++ {
		t.right[i] = true
	}
	return t
}

func (t *mdTable) add(cells ...string) { t.rows = append(t.rows, cells) }

func (s *reportSection) add(c *chart, t *mdTable) {
	if (c == nil || c.empty()) && (t == nil || len(t.rows) == 0) {
		return
	}
	if c != nil && c.empty() {
		c = nil
	}
	s.Blocks = append(s.Blocks, reportBlock{Chart: c, table: t})
}

func (s *reportSection) charts() []*chart {
	var out []*chart
	for _, b := range s.Blocks {
		if b.Chart != nil {
			out = append(out, b.Chart)
		}
	}
	return out
}

// b1Series names the B1 backends in the legend.
var b1Series = map[string]string{
	"none":       "no filter",
	"vm":         "vm",
	"lua":        "lua (transpiled policy)",
	"lua_script": "lua_script (hand-written Fluent Bit filter)",
}

// b1Section: B1 from the results of bench pipeline.
func b1Section(r *bench.B1Results) *reportSection {
	s := &reportSection{ID: "b1", Title: "B1 — the nine policies, whole process"}
	if r == nil {
		s.Skipped = "not run (add b1 to --sections, or give --pipeline results.json)"
		return s
	}
	s.Intro = paragraphs("b1", r)
	key := func(c bench.B1Case) (string, string) {
		if c.Policy == "none" {
			return c.Name, "no filter (" + c.Data + ")"
		}
		return c.Policy, c.Policy
	}
	cpu := newChart("b1-cpu", "B1", "B1: CPU seconds per million records, whole process", "CPU s/M",
		"CPU seconds (user+sys) per million records — lower is better", "policy")
	rss := newChart("b1-rss", "B1", "B1: peak RSS, whole process", "MiB", "peak RSS, MiB — lower is better", "policy")
	t := newTable("run", "data", "records", "CPU s", "CPU s/M", "wall s", "RSS MiB")
	t.right[1] = false
	for _, c := range r.Cases {
		k, label := key(c)
		series := named(b1Series, c.Backend)
		cpu.add(k, label, series, c.CPUPerM)
		rss.add(k, label, series, c.RSS)
		t.add(c.Name, c.Data, groupThousands(fmt.Sprint(c.Records)), statCell(c.CPU), statCell(c.CPUPerM), statCell(c.Wall), statCell(c.RSS))
	}
	s.add(cpu, t)
	s.add(rss, nil)
	return s
}

// backendsSection: the VM against the other backends in process, from
// BenchmarkBackendRatios and BenchmarkBackends in ./conformance.
func backendsSection(set *bench.Set) *reportSection {
	s := &reportSection{ID: "backends", Title: "Backend ratios — the policy stage alone, in process"}
	ratios := set.Names("BenchmarkBackendRatios/")
	single := set.Names("BenchmarkBackends/")
	if len(ratios) == 0 && len(single) == 0 {
		s.Skipped = "no results of BenchmarkBackends or BenchmarkBackendRatios (not run: --sections)"
		return s
	}
	s.Intro = paragraphs("backends", nil)
	if len(ratios) > 0 {
		c := newChart("ratios", "backends", "Other backends ÷ VM, time per record, side by side (BenchmarkBackendRatios)", "×",
			"time per record ÷ the VM's (wall clock, the same batches) — higher: the VM is faster", "policy")
		c.suffix = "×"
		t := newTable("policy", "vm ns/record", "lua_t ns/record", "lua_h ns/record", "expr ns/record", "lua_t ÷ vm", "lua_h ÷ vm", "expr ÷ vm")
		for _, n := range ratios {
			p := strings.TrimPrefix(n, "BenchmarkBackendRatios/")
			c.add(p, p, "transpiled Lua ÷ VM", set.Stat(n, "lua_t/vm"))
			c.add(p, p, "hand-written Lua ÷ VM", set.Stat(n, "lua_h/vm"))
			c.add(p, p, "expr ÷ VM", set.Stat(n, "expr/vm"))
			t.add(p, statCell(set.Stat(n, "vm-ns/record")), statCell(set.Stat(n, "lua_t-ns/record")), statCell(set.Stat(n, "lua_h-ns/record")),
				statCell(set.Stat(n, "expr-ns/record")), ratioCell(set.Stat(n, "lua_t/vm")), ratioCell(set.Stat(n, "lua_h/vm")), ratioCell(set.Stat(n, "expr/vm")))
		}
		s.add(c, t)
	}
	if len(single) > 0 {
		c := newChart("backends", "backends", "CPU ns per record by backend (BenchmarkBackends)", "cpu-ns/record",
			"CPU ns per record (the process's, garbage collection included) — lower is better", "policy")
		t := newTable("policy", "backend", "ns/record", "cpu-ns/record", "allocs/record", "B/record")
		t.right[1] = false
		for _, n := range single {
			rest := strings.TrimPrefix(n, "BenchmarkBackends/")
			i := strings.LastIndex(rest, "/")
			if i < 0 {
				continue
			}
			p, be := rest[:i], rest[i+1:]
			cpu := set.Stat(n, "cpu-ns/record")
			if cpu.N == 0 {
				cpu = set.Stat(n, "ns/record")
			}
			c.add(p, p, be, cpu)
			t.add(p, be, statCell(set.Stat(n, "ns/record")), statCell(cpu), statCell(set.Stat(n, "allocs/op")), statCell(set.Stat(n, "B/op")))
		}
		s.add(c, t)
	}
	return s
}

// goSection starts section id, drawn from the results of benchmark bm
// (go test -bench): it returns the section and bm's results, or, with
// none, the section skipped and nil.
func goSection(set *bench.Set, id, title, bm string) (*reportSection, []string) {
	s := &reportSection{ID: id, Title: title}
	names := set.Names(bm + "/")
	if len(names) == 0 {
		s.Skipped = "no results of " + bm + " (not run: --sections)"
		return s, nil
	}
	s.Intro = paragraphs(id, nil)
	return s, names
}

// named is m[k], or k where m has no name for it.
func named(m map[string]string, k string) string {
	if v := m[k]; v != "" {
		return v
	}
	return k
}

func ratioCell(s bench.Stat) string {
	if s.N == 0 {
		return "—"
	}
	return statCell(s) + "×"
}

// b2Labels name the cases of BenchmarkRecordDecode.
var b2Labels = map[string]string{
	"referenced":      "msgpack → arena, referenced",
	"owned":           "msgpack → arena, owned",
	"owned_edits":     "owned, then 3 edits",
	"json_referenced": "JSON → arena, referenced",
	"json_flat_pair":  "JSON → arena, 2 flat lines",
	"json_map":        "encoding/json → map[string]any",
	"msgpack_map":     "msgpack → map[string]any",
}

// b2Section: record construction, BenchmarkRecordDecode in ./record.
func b2Section(set *bench.Set) *reportSection {
	s, names := goSection(set, "b2", "B2 — record construction", "BenchmarkRecordDecode")
	if names == nil {
		return s
	}
	ns := newChart("b2-ns", "B2", "B2: ns per record, decode into a record", "ns/record", "ns per record (one op; json_flat_pair: a pair of lines) — lower is better", "case")
	mem := newChart("b2-bytes", "B2", "B2: reserved arena bytes per record", "arena-B/record", "reserved bytes per record — lower is better", "case")
	t := newTable("case", "ns/op", "arena-B/record", "B/op", "allocs/op")
	for _, n := range names {
		k := strings.TrimPrefix(n, "BenchmarkRecordDecode/")
		label := named(b2Labels, k)
		series := "policyrun arena"
		if strings.HasSuffix(k, "_map") {
			series = "Go map[string]any (baseline, same run)"
		}
		ns.add(k, label, series, set.Stat(n, "ns/op"))
		mem.add(k, label, "policyrun arena", set.Stat(n, "arena-B/record"))
		t.add(label, statCell(set.Stat(n, "ns/op")), statCell(set.Stat(n, "arena-B/record")), statCell(set.Stat(n, "B/op")), statCell(set.Stat(n, "allocs/op")))
	}
	s.add(ns, t)
	s.add(mem, nil)
	s.add(sideBySide(set, "b2-side", "B2: the map[string]any baselines ÷ the arena, side by side (BenchmarkSideBySide)", [][2]string{
		{"json_map/json_referenced", "encoding/json map ÷ JSON arena"},
		{"msgpack_map/referenced", "msgpack map ÷ msgpack arena"},
	}), nil)
	return s
}

// sideBySide charts ratios of BenchmarkSideBySide, which runs the B2 and B3
// contenders in alternation, a short chunk each per op, so that their
// ratios are steadier than those of separate benchmarks. A chart with no
// results (no BenchmarkSideBySide runs) is left out by reportSection.add.
func sideBySide(set *bench.Set, id, title string, ratios [][2]string) *chart {
	const name = "BenchmarkSideBySide"
	c := newChart(id, "", title, "×", "ratio of the medians of ns per record, the contenders alternating", "ratio")
	c.suffix = "×"
	for _, r := range ratios {
		c.add(r[0], r[1], "policyrun", set.Stat(name, r[0]))
	}
	return c
}

// b3Section: edit chains, BenchmarkEditChain in ./record.
func b3Section(set *bench.Set) *reportSection {
	s, names := goSection(set, "b3", "B3 — edit chains", "BenchmarkEditChain")
	if names == nil {
		return s
	}
	c := newChart("b3", "B3", "B3: seconds per million records, decode + edits + encode", "CPU s/M",
		"seconds per million records — lower is better", "case")
	c.Note = paragraphs("b3 note", nil)[0]
	t := newTable("case", "ns/record", "s / M records", "MB/s", "allocs/op")
	for _, n := range names {
		k := strings.TrimPrefix(n, "BenchmarkEditChain/")
		label := b3Label(k)
		ns := set.Stat(n, "ns/op")
		c.add(k, label, "policyrun", ns.Scale(1e-3))
		t.add(label, statCell(ns), statCell(ns.Scale(1e-3)), statCell(set.Stat(n, "MB/s")), statCell(set.Stat(n, "allocs/op")))
	}
	s.add(c, t)
	s.add(sideBySide(set, "b3-side", "B3: the cost of 6 upserts, 128 fields, side by side (BenchmarkSideBySide)", [][2]string{
		{"upserts6/edits0", "6 upserts ÷ 0 edits"},
		{"upserts6/edits0_reencode", "6 upserts ÷ 0 edits, encoded again"},
	}), nil)
	return s
}

// b3Label: "fields128_upserts6" → "128 fields, 6 upserts".
func b3Label(k string) string {
	fields, edits, ok := strings.Cut(strings.TrimPrefix(k, "fields"), "_")
	if !ok {
		return k
	}
	switch edits {
	case "edits0":
		edits = "0 edits"
	case "edits0_reencode":
		edits = "0 edits, encoded again"
	case "upserts6":
		edits = "6 upserts"
	}
	return fields + " fields, " + edits
}

// b4Section: checkpoints, BenchmarkCheckpoint in ./pipeline/checkpoint.
func b4Section(set *bench.Set) *reportSection {
	s, names := goSection(set, "b4", "B4 — checkpoints", "BenchmarkCheckpoint")
	if names == nil {
		return s
	}
	type key struct{ op, format, files string }
	var counts []string
	have := map[key]string{}
	for _, n := range names {
		parts := strings.Split(strings.TrimPrefix(n, "BenchmarkCheckpoint/"), "/")
		if len(parts) != 3 {
			continue
		}
		f := strings.TrimPrefix(parts[2], "files=")
		have[key{parts[0], parts[1], f}] = n
		if !slices.Contains(counts, f) {
			counts = append(counts, f)
		}
	}
	if len(counts) == 0 {
		s.Skipped = "no results of the expected form BenchmarkCheckpoint/<op>/<format>/files=<n>"
		return s
	}
	speed := newChart("b4-speedup", "B4", "B4: protobuf checkpoints, times faster than JSON", "× faster than JSON",
		"JSON ns/op ÷ protobuf ns/op — higher: protobuf is faster", "operation, tracked files")
	speed.suffix = "×"
	for _, op := range []string{"save", "save1", "snapshot", "load"} {
		for _, f := range counts {
			j, p := have[key{op, "json", f}], have[key{op, "protobuf", f}]
			if op == "snapshot" {
				j = have[key{"save", "json", f}] // JSON's save is its snapshot
			}
			if j == "" || p == "" {
				continue
			}
			speed.add(op+"/files="+f, op+", "+files(f), "policyrun", pairedRatio(set.Values(j, "ns/op"), set.Values(p, "ns/op")))
		}
	}
	size := newChart("b4-size", "B4", "B4: checkpoint size, 1 file", "bytes", "bytes per checkpoint — lower is better", "format")
	for _, format := range []string{"json", "protobuf"} {
		if n := have[key{"save", format, "1"}]; n != "" {
			label := map[string]string{"json": "JSON, 1 file", "protobuf": "protobuf, 1 file"}[format]
			size.add(format+"/files=1", label, "policyrun", set.Stat(n, "bytes/checkpoint"))
		}
	}
	large := counts[len(counts)-1]
	times := newChart("b4-time", "B4", "B4: save and load, "+files(large), "µs/op",
		"µs per checkpoint — lower is better", "operation")
	for _, op := range []string{"save", "save1", "snapshot", "load"} {
		for _, format := range []string{"json", "protobuf"} {
			if n := have[key{op, format, large}]; n != "" {
				times.add(op+"/files="+large, op, map[string]string{"json": "JSON", "protobuf": "protobuf"}[format], set.Stat(n, "ns/op").Scale(1e-3))
			}
		}
	}
	t := newTable("case", "ns/op", "bytes/checkpoint", "written-B/save", "B/op", "allocs/op")
	for _, n := range names {
		t.add(strings.TrimPrefix(n, "BenchmarkCheckpoint/"), statCell(set.Stat(n, "ns/op")), statCell(set.Stat(n, "bytes/checkpoint")),
			statCell(set.Stat(n, "written-B/save")), statCell(set.Stat(n, "B/op")), statCell(set.Stat(n, "allocs/op")))
	}
	rt := newTable("case", "protobuf × faster than JSON")
	for _, g := range speed.groups {
		rt.add(g.label, ratioCell(g.bars[0].st))
	}
	s.add(speed, rt)
	s.add(times, t)
	s.add(size, nil)
	return s
}

// pairedRatio is the stat of a[i] ÷ b[i].
func pairedRatio(a, b []float64) bench.Stat {
	var r []float64
	for i := 0; i < len(a) && i < len(b); i++ {
		if b[i] > 0 {
			r = append(r, a[i]/b[i])
		}
	}
	return bench.StatOf(r)
}

// files names a count of tracked files: "1 file", "1,000 files".
func files(n string) string {
	if n == "1" {
		return "1 file"
	}
	if _, err := strconv.Atoi(n); err == nil {
		n = groupThousands(n)
	}
	return n + " files"
}

// b5Section: the OTLP codecs, BenchmarkOTLP in ./record, the codec part
// of B5.
func b5Section(set *bench.Set) *reportSection {
	s, names := goSection(set, "b5", "B5 — OTLP, the codec part", "BenchmarkOTLP")
	if names == nil {
		return s
	}
	c := newChart("b5", "B5", "B5: ns per OTLP log record, protobuf decode and encode", "ns/record", "ns per record (requests of 100) — lower is better", "direction")
	t := newTable("case", "ns/record", "ns/request", "B/request", "allocs/request")
	impl := map[string]string{"arena": "policyrun arena codec", "protogo": "protobuf-go generated types"}
	for _, n := range names {
		k := strings.TrimPrefix(n, "BenchmarkOTLP/")
		dir, im, _ := strings.Cut(k, "/")
		series := named(impl, im)
		per := set.Stat(n, "ns/record")
		c.add(dir, dir, series, per)
		t.add(k, statCell(per), statCell(set.Stat(n, "ns/op")), statCell(set.Stat(n, "B/op")), statCell(set.Stat(n, "allocs/op")))
	}
	s.add(c, t)
	return s
}
