package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/policyrun/policyrun/bench"
)

// A chart is a horizontal bar chart of groups (a policy, a case), each with
// one bar per series (a backend, a system). A bar starts at zero and ends
// at the median; a whisker spans min to max when there were several runs.
// Figures of other systems are bars of their own series.
type chart struct {
	id        string
	Title     string
	benchmark string // the benchmark whose figures may be drawn here
	unit      string // the values' unit, which a figure must have (or convert to)
	axis      string // the x axis's label
	groupAxis string // the y axis's label
	suffix    string // after each value label, e.g. "×"
	Note      string // under the chart
	groups    []*chartGroup
	series    []string
	other     map[string]bool // series of other systems
	drawn     []figure        // the figures drawn, for the sources
}

type chartGroup struct {
	key, label string
	bars       []chartBar
}

type chartBar struct {
	series string
	st     bench.Stat
}

func newChart(id, benchmark, title, unit, axis, groupAxis string) *chart {
	return &chart{id: id, benchmark: benchmark, Title: title, unit: unit, axis: axis, groupAxis: groupAxis, other: map[string]bool{}}
}

// add puts a bar of series into group key (made with label if new); a
// stat with no values adds nothing.
func (c *chart) add(key, label, series string, st bench.Stat) {
	if st.N == 0 {
		return
	}
	g := c.group(key, label)
	g.bars = append(g.bars, chartBar{series: series, st: st})
	if !slices.Contains(c.series, series) {
		c.series = append(c.series, series)
	}
}

func (c *chart) group(key, label string) *chartGroup {
	for _, g := range c.groups {
		if g.key == key {
			return g
		}
	}
	g := &chartGroup{key: key, label: label}
	c.groups = append(c.groups, g)
	return g
}

// addFigures draws the figures of other systems that have this chart's
// benchmark, one of its groups as case and its unit; drawn records which.
func (c *chart) addFigures(figs []figure, drawn map[int]bool) {
	for i, f := range figs {
		if f.Benchmark != c.benchmark {
			continue
		}
		v, ok := f.valueIn(c.unit)
		if !ok {
			continue
		}
		var g *chartGroup
		for _, x := range c.groups {
			if x.key == f.Case {
				g = x
			}
		}
		if g == nil {
			continue
		}
		g.bars = append(g.bars, chartBar{series: f.System, st: bench.Stat{Median: v, Min: v, Max: v, N: 1}})
		if !slices.Contains(c.series, f.System) {
			c.series = append(c.series, f.System)
		}
		c.other[f.System] = true
		c.drawn = append(c.drawn, f)
		drawn[i] = true
	}
}

func (c *chart) empty() bool { return len(c.groups) == 0 }

var (
	oursColors  = []string{"#2563eb", "#0d9488", "#7c3aed", "#64748b", "#0891b2", "#4d7c0f"}
	otherColors = []string{"#ea580c", "#dc2626", "#b45309", "#db2777", "#92400e"}
)

func (c *chart) colors() map[string]string {
	m := map[string]string{}
	o, t := 0, 0
	for _, s := range c.series {
		if c.other[s] {
			m[s] = otherColors[t%len(otherColors)]
			t++
		} else {
			m[s] = oursColors[o%len(oursColors)]
			o++
		}
	}
	return m
}

// niceAxis returns the end of the axis and the step of its ticks for
// values up to max: steps of 1, 2, 2.5 or 5 × 10^k, about five of them.
func niceAxis(max float64) (end, step float64) {
	if !(max > 0) || math.IsInf(max, 0) {
		return 1, 0.2
	}
	raw := max / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * p; step >= raw {
			break
		}
	}
	end = math.Ceil(max/step-1e-9) * step
	return end, step
}

// Layout of a chart, in SVG user units (pixels at 100%).
const (
	chartWidth   = 680
	chartBarH    = 14
	chartBarGap  = 3
	chartGroupGp = 12
	chartRight   = 72 // room for the value labels
	chartFont    = 11
)

// svg draws the chart: legend, groups with their labels, bars from zero,
// whiskers, value labels, gridlines, the x axis with ticks and its label,
// and the y axis's label.
func (c *chart) SVG() string {
	colors := c.colors()
	labelW := 80.0
	for _, g := range c.groups {
		labelW = max(labelW, float64(len([]rune(g.label)))*6.3+14)
	}
	labelW = min(labelW, 280) + 22 // and the y axis's label
	x0, x1 := labelW, float64(chartWidth-chartRight)
	maxV := 0.0
	for _, g := range c.groups {
		for _, b := range g.bars {
			maxV = max(maxV, b.st.Max, b.st.Median)
		}
	}
	end, step := niceAxis(maxV)
	xOf := func(v float64) float64 { return x0 + (x1-x0)*max(v, 0)/end }

	var b strings.Builder
	esc := html.EscapeString
	// The legend, wrapped.
	legend := &strings.Builder{}
	lx, ly := x0, 16.0
	for _, s := range c.series {
		name := s
		w := float64(len([]rune(name)))*5.9 + 28
		if lx+w > chartWidth && lx > x0 {
			lx, ly = x0, ly+18
		}
		class := "ours"
		if c.other[s] {
			class = "other"
		}
		fmt.Fprintf(legend, `<g class="legend %s"><rect x="%.1f" y="%.1f" width="12" height="12" fill="%s"/><text x="%.1f" y="%.1f">%s</text></g>`,
			class, lx, ly-10, colors[s], lx+16, ly, esc(name))
		lx += w
	}
	top := ly + 14

	// The groups.
	body := &strings.Builder{}
	y := top
	for _, g := range c.groups {
		bars := slices.Clone(g.bars)
		slices.SortStableFunc(bars, func(a, b chartBar) int {
			return slices.Index(c.series, a.series) - slices.Index(c.series, b.series)
		})
		h := float64(len(bars))*chartBarH + float64(len(bars)-1)*chartBarGap
		fmt.Fprintf(body, `<text class="group" x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`,
			x0-8, y+h/2, esc(g.label))
		for _, bar := range bars {
			w := xOf(bar.st.Median) - x0
			class := "bar"
			if c.other[bar.series] {
				class += " other"
			}
			tip := fmt.Sprintf("%s, %s: %s%s", g.label, bar.series, fmtNum(bar.st.Median), c.suffix)
			if bar.st.N > 1 {
				tip += fmt.Sprintf(" (median of %d; min %s, max %s)", bar.st.N, fmtNum(bar.st.Min), fmtNum(bar.st.Max))
			}
			fmt.Fprintf(body, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s</title></rect>`,
				class, x0, y, w, chartBarH, colors[bar.series], esc(tip))
			end := xOf(bar.st.Median)
			if bar.st.N > 1 && bar.st.Max > bar.st.Min {
				a, z, m := xOf(bar.st.Min), xOf(bar.st.Max), y+chartBarH/2
				fmt.Fprintf(body, `<path class="whisker" d="M%.1f %.1fH%.1fM%.1f %.1fV%.1fM%.1f %.1fV%.1f"/>`,
					a, m, z, a, y+3, y+chartBarH-3, z, y+3, y+chartBarH-3)
				end = max(end, z)
			}
			fmt.Fprintf(body, `<text class="value" x="%.1f" y="%.1f" dominant-baseline="middle">%s%s</text>`,
				end+4, y+chartBarH/2, esc(fmtNum(bar.st.Median)), esc(c.suffix))
			y += chartBarH + chartBarGap
		}
		y += chartGroupGp - chartBarGap
	}
	axisY := y - chartGroupGp/2

	// Gridlines, ticks and the axes.
	grid := &strings.Builder{}
	for v := 0.0; v <= end*(1+1e-9); v += step {
		x := xOf(v)
		fmt.Fprintf(grid, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, top-4, x, axisY)
		fmt.Fprintf(grid, `<line class="tick" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, axisY, x, axisY+4)
		fmt.Fprintf(grid, `<text class="tick" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, axisY+16, esc(fmtNum(v)))
	}
	height := axisY + 44
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="%s" class="chart" viewBox="0 0 %d %.0f" width="%d" height="%.0f" role="img" aria-label="%s" font-family="system-ui, sans-serif" font-size="%d">`,
		esc(c.id), chartWidth, height, chartWidth, height, esc(c.Title), chartFont)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	b.WriteString(grid.String())
	b.WriteString(legend.String())
	b.WriteString(body.String())
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x0, axisY, x1, axisY)
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x0, top-4, x0, axisY)
	fmt.Fprintf(&b, `<text class="axis-label" x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, (x0+x1)/2, axisY+34, esc(c.axis))
	fmt.Fprintf(&b, `<text class="axis-label" transform="translate(12 %.1f) rotate(-90)" text-anchor="middle">%s</text>`, (top+axisY)/2, esc(c.groupAxis))
	b.WriteString(`</svg>`)
	return b.String()
}
