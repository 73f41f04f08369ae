package report

import (
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
)

// pageCSS is the page's only style: no fonts, images or scripts are
// fetched, and the page reads the same without any of it.
const pageCSS = `
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #111827; margin: 2em auto; max-width: 1640px; padding: 0 1.5em; line-height: 1.45; }
h1 { margin-bottom: .2em; } h2 { margin-top: 2.2em; border-bottom: 1px solid #d1d5db; padding-bottom: .2em; }
h3 { margin: 1.2em 0 .4em; font-size: 1.05em; }
.meta { color: #4b5563; margin: 0; } nav a { margin-right: 1em; }
.quick { background: #fef3c7; border: 1px solid #f59e0b; padding: .5em 1em; }
.skipped { color: #6b7280; font-style: italic; }
.block { display: flex; flex-wrap: wrap; gap: 1.5em; align-items: flex-start; margin-bottom: 1.5em; }
figure { margin: 0; max-width: 100%; } figure svg { max-width: 100%; height: auto; }
.sources { font-size: 12px; color: #374151; max-width: 680px; margin: .3em 0 0; padding-left: 1.2em; }
table { border-collapse: collapse; font-size: 12.5px; }
th, td { border: 1px solid #d1d5db; padding: 2px 7px; } th { background: #f3f4f6; text-align: left; }
td.r, th.r { text-align: right; font-variant-numeric: tabular-nums; }
details { font-size: 12px; margin-top: .4em; } pre { background: #f9fafb; padding: .5em; overflow-x: auto; }
svg text { fill: #111827; } svg .tick, svg .value { font-size: 10px; } svg .axis-label { font-size: 11.5px; fill: #374151; }
svg .grid { stroke: #e5e7eb; } svg line.tick, svg .axis { stroke: #374151; }
svg .whisker { stroke: #111827; stroke-width: 1.3; fill: none; }
svg .legend text { font-size: 11px; }
`

func (p *reportPage) html() string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", esc(p.title), pageCSS)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(p.title))
	for _, m := range p.meta {
		fmt.Fprintf(&b, "<p class=\"meta\">%s</p>\n", esc(m))
	}
	if p.quick {
		b.WriteString("<p class=\"quick\"><strong>Quick run</strong> (--quick): small counts and one run each, a smoke test. The figures are not for comparison: start-up dominates the whole-process runs, and the figures of other systems were measured at full size.</p>\n")
	}
	b.WriteString("<nav>")
	for _, s := range p.sections {
		fmt.Fprintf(&b, "<a href=\"#%s\">%s</a>", esc(s.id), esc(shortTitle(s.title)))
	}
	b.WriteString("</nav>\n")
	for _, s := range p.sections {
		fmt.Fprintf(&b, "<section id=\"%s\">\n<h2>%s</h2>\n", esc(s.id), esc(s.title))
		if s.skipped != "" {
			fmt.Fprintf(&b, "<p class=\"skipped\">%s</p>\n", esc(s.skipped))
		}
		for _, para := range s.intro {
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(para))
		}
		for _, bl := range s.blocks {
			b.WriteString("<div class=\"block\">\n")
			if c := bl.chart; c != nil {
				fmt.Fprintf(&b, "<figure>\n<h3>%s</h3>\n%s\n", esc(c.title), c.svg())
				if lines := c.sourceLines(); len(lines) > 0 {
					b.WriteString("<ul class=\"sources\">")
					for _, l := range lines {
						fmt.Fprintf(&b, "<li>%s</li>", l.html())
					}
					b.WriteString("</ul>\n")
				}
				if c.note != "" {
					fmt.Fprintf(&b, "<p class=\"sources\">%s</p>\n", esc(c.note))
				}
				b.WriteString("</figure>\n")
			}
			t := bl.table
			if t == nil && bl.chart != nil {
				t = bl.chart.table()
			}
			if t != nil {
				b.WriteString("<div>\n")
				b.WriteString(t.html())
				fmt.Fprintf(&b, "<details><summary>markdown</summary><pre>%s</pre></details>\n", esc(t.markdown()))
				b.WriteString("</div>\n")
			}
			b.WriteString("</div>\n")
		}
		if len(s.listed) > 0 {
			b.WriteString("<h3>Published figures for this benchmark with no matching measurement here</h3>\n")
			b.WriteString(figureTable(s.listed).html())
		}
		b.WriteString("</section>\n")
	}
	if len(p.undrawn) > 0 {
		b.WriteString("<section id=\"others\">\n<h2>Other published figures</h2>\n")
		b.WriteString(figureTable(p.undrawn).html())
		b.WriteString("</section>\n")
	}
	b.WriteString("<footer>\n<h2>Reproduce</h2>\n")
	if p.command != "" {
		fmt.Fprintf(&b, "<pre>%s</pre>\n", esc(p.command))
	}
	b.WriteString("<p>Bars start at zero; each is the median of the runs, and its whisker spans the minimum to the maximum. Figures of other systems")
	if p.others != "" {
		fmt.Fprintf(&b, " come from %s and", esc(p.others))
	}
	b.WriteString(" are drawn as warm-coloured bars, their sources named under each chart. docs/bench.md describes every section.</p>\n</footer>\n</body>\n</html>\n")
	return b.String()
}

func (p *reportPage) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", p.title)
	for _, m := range p.meta {
		fmt.Fprintf(&b, "%s  \n", m)
	}
	b.WriteString("\n")
	if p.quick {
		b.WriteString("**Quick run** (--quick): small counts and one run each, a smoke test; the figures are not for comparison.\n\n")
	}
	for _, s := range p.sections {
		fmt.Fprintf(&b, "## %s\n\n", s.title)
		if s.skipped != "" {
			fmt.Fprintf(&b, "_%s_\n\n", s.skipped)
		}
		for _, para := range s.intro {
			fmt.Fprintf(&b, "%s\n\n", para)
		}
		for _, bl := range s.blocks {
			if c := bl.chart; c != nil {
				fmt.Fprintf(&b, "### %s\n\n", c.title)
				if bl.table == nil {
					b.WriteString(c.table().markdown())
					b.WriteString("\n")
				}
			}
			if bl.table != nil {
				b.WriteString(bl.table.markdown())
				b.WriteString("\n")
			}
			if c := bl.chart; c != nil {
				for _, l := range c.sourceLines() {
					fmt.Fprintf(&b, "- %s\n", l.text())
				}
				if len(c.drawn) > 0 {
					b.WriteString("\n")
				}
			}
		}
		if len(s.listed) > 0 {
			b.WriteString("Published figures for this benchmark with no matching measurement here:\n\n")
			b.WriteString(figureTable(s.listed).markdown())
			b.WriteString("\n")
		}
	}
	if len(p.undrawn) > 0 {
		b.WriteString("## Other published figures\n\n")
		b.WriteString(figureTable(p.undrawn).markdown())
		b.WriteString("\n")
	}
	if p.command != "" {
		fmt.Fprintf(&b, "Made with `%s`.\n", p.command)
	}
	return b.String()
}

// shortTitle is a section's title up to its dash: "B1", "Backend ratios".
func shortTitle(t string) string {
	if i := strings.Index(t, " — "); i > 0 {
		return t[:i]
	}
	return t
}

// A sourceLine names one other system drawn in a chart: its figures there
// and where they come from.
type sourceLine struct {
	system, figures, source, url, note string
}

func (l sourceLine) text() string {
	s := fmt.Sprintf("%s (%s): %s", l.system, l.figures, l.source)
	if l.url != "" {
		s += " — " + l.url
	}
	if l.note != "" {
		s += ". " + l.note
	}
	return s
}

func (l sourceLine) html() string {
	esc := html.EscapeString
	s := fmt.Sprintf("<strong>%s</strong> (%s): source: %s", esc(l.system), esc(l.figures), esc(l.source))
	if l.url != "" {
		s += fmt.Sprintf(" — <a href=\"%s\">%s</a>", esc(l.url), esc(l.url))
	}
	if l.note != "" {
		s += ". " + esc(l.note)
	}
	return s
}

// sourceLines groups the drawn figures by system and source.
func (c *chart) sourceLines() []sourceLine {
	type key struct{ system, source, url string }
	var order []key
	figs := map[key][]string{}
	for _, f := range c.drawn {
		k := key{f.System, f.Source, f.URL}
		if _, ok := figs[k]; !ok {
			order = append(order, k)
		}
		label := f.Case
		for _, g := range c.groups {
			if g.key == f.Case {
				label = g.label
			}
		}
		s := fmt.Sprintf("%s: %s %s", label, exactNum(f.Value), f.Unit)
		if f.Note != "" {
			s += " (" + f.Note + ")"
		}
		figs[k] = append(figs[k], s)
	}
	var out []sourceLine
	for _, k := range order {
		out = append(out, sourceLine{system: k.system, figures: strings.Join(figs[k], "; "), source: k.source, url: k.url})
	}
	return out
}

// table is a chart's own data as a table, for a chart drawn without one.
func (c *chart) table() *mdTable {
	t := newTable(append([]string{c.groupAxis}, c.series...)...)
	for _, g := range c.groups {
		row := []string{g.label}
		for _, s := range c.series {
			cell := "—"
			for _, bar := range g.bars {
				if bar.series == s {
					cell = statCell(bar.st) + c.suffix
				}
			}
			row = append(row, cell)
		}
		t.add(row...)
	}
	return t
}

// figureTable lists figures with their sources.
func figureTable(figs []figure) *mdTable {
	figs = append([]figure(nil), figs...)
	sort.SliceStable(figs, func(i, j int) bool { return figs[i].Benchmark < figs[j].Benchmark })
	t := newTable("benchmark", "system", "case", "value", "unit", "source")
	t.right = []bool{false, false, false, true, false, false}
	for _, f := range figs {
		src := f.cite()
		if f.Note != "" {
			src += " (" + f.Note + ")"
		}
		t.add(f.Benchmark, f.System, f.Case, exactNum(f.Value), f.Unit, src)
	}
	return t
}

// exactNum is a published figure as given: 245.8, 0.825, 1,818.
func exactNum(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	i, frac, _ := strings.Cut(s, ".")
	if frac != "" {
		frac = "." + frac
	}
	return groupThousands(i) + frac
}

func (t *mdTable) html() string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString("<table>\n<thead><tr>")
	for i, h := range t.head {
		fmt.Fprintf(&b, "<th%s>%s</th>", t.class(i), esc(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range t.rows {
		b.WriteString("<tr>")
		for i, c := range r {
			fmt.Fprintf(&b, "<td%s>%s</td>", t.class(i), esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody>\n</table>\n")
	return b.String()
}

func (t *mdTable) class(i int) string {
	if i < len(t.right) && t.right[i] {
		return ` class="r"`
	}
	return ""
}

func (t *mdTable) markdown() string {
	var b strings.Builder
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	b.WriteString("|")
	for _, h := range t.head {
		fmt.Fprintf(&b, " %s |", cell(h))
	}
	b.WriteString("\n|")
	for i := range t.head {
		if i < len(t.right) && t.right[i] {
			b.WriteString("--:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			fmt.Fprintf(&b, " %s |", cell(c))
		}
		b.WriteString("\n")
	}
	return b.String()
}
