package report

import (
	"embed"
	"fmt"
	"html"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

// The page's templates and its prose: page.html.tmpl and page.md.tmpl
// lay out the page and report.md, sections.tmpl says what each section
// measures. text/template, not html/template: the charts and tables are
// HTML already, every other text is escaped where the page writes it
// (esc), and html/template would escape "+" and the like where the page
// has always written them as they are.
var (
	//go:embed page.html.tmpl page.md.tmpl page.css sections.tmpl
	templateFiles embed.FS
	funcs         = template.FuncMap{
		"esc":       html.EscapeString,
		"thousands": func(n int) string { return groupThousands(strconv.Itoa(n)) },
	}
	pageTemplates = template.Must(template.New("").Funcs(funcs).ParseFS(templateFiles, "page.*"))
	prose         = template.Must(template.New("").Funcs(funcs).ParseFS(templateFiles, "sections.tmpl"))
)

func (p *reportPage) html() string     { return execute(pageTemplates, "page.html.tmpl", p) }
func (p *reportPage) markdown() string { return execute(pageTemplates, "page.md.tmpl", p) }

// text is the prose of sections.tmpl named name, over data.
func text(name string, data any) string { return execute(prose, name, data) }

// paragraphs is text split into its paragraphs, each on one line.
func paragraphs(name string, data any) []string {
	var out []string
	for _, p := range strings.Split(strings.TrimSpace(text(name, data)), "\n\n") {
		out = append(out, strings.ReplaceAll(strings.TrimSpace(p), "\n", " "))
	}
	return out
}

func execute(t *template.Template, name string, data any) string {
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		panic("report: " + name + ": " + err.Error()) // the templates are the package's own
	}
	return b.String()
}

// UndrawnTable lists the figures of benchmarks that have no section here,
// nil when there are none.
func (p *reportPage) UndrawnTable() *mdTable { return figureTable(p.undrawn) }

// ListedTable lists the figures of the section's benchmark that no chart
// could draw, nil when there are none.
func (s *reportSection) ListedTable() *mdTable { return figureTable(s.listed) }

// Table is the table beside the block's chart: its own, or the chart's
// data.
func (b reportBlock) Table() *mdTable {
	if b.table == nil && b.Chart != nil {
		return b.Chart.table()
	}
	return b.table
}

// ShortTitle is the section's title up to its dash: "B1", "Backend ratios".
func (s *reportSection) ShortTitle() string {
	if i := strings.Index(s.Title, " — "); i > 0 {
		return s.Title[:i]
	}
	return s.Title
}

// A sourceLine names one other system drawn in a chart: its figures there
// and where they come from.
type sourceLine struct {
	system, figures, source, url, note string
}

func (l sourceLine) Text() string {
	s := fmt.Sprintf("%s (%s): %s", l.system, l.figures, l.source)
	if l.url != "" {
		s += " — " + l.url
	}
	if l.note != "" {
		s += ". " + l.note
	}
	return s
}

func (l sourceLine) HTML() string {
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
func (c *chart) SourceLines() []sourceLine {
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

// figureTable lists figures with their sources, nil for none.
func figureTable(figs []figure) *mdTable {
	if len(figs) == 0 {
		return nil
	}
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

func (t *mdTable) HTML() string {
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

func (t *mdTable) Markdown() string {
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
