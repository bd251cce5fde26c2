package view

import (
	"fmt"
	"html"
	"html/template"
	"strings"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 640.0, 220.0
	chartL, chartR         = 44.0, 90.0
	chartTop, chartBottom  = 12.0, 30.0
	plotW                  = chartW - chartL - chartR
	plotH                  = chartH - chartTop - chartBottom
	beliefColor            = "#1f5fbf"
	movedLine, probeColors = 0.5, "#d08a2e #3a9a5b #9a3a8a #777777"
)

// beliefChart draws the episode's belief trajectory as inline SVG: B_0
// and every B_t (t = 1..T) as a solid line with dots (a missing belief
// breaks the line), each probe's read-out as a thin dashed line, and the
// B = 0.5 line of the Probe-RPO paper's "moved" threshold. Each dot's
// tooltip gives t, B_t and r_t. The values are numbers and escaped
// labels only, so the markup is safe to inline.
func beliefChart(ep *episode.Episode) template.HTML {
	n := len(ep.Turns)
	xOf := func(t int) float64 {
		if n == 0 {
			return chartL
		}
		return chartL + plotW*float64(t)/float64(n)
	}
	yOf := func(b float64) float64 { return chartTop + plotH*(1-b) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="belief trajectory">`,
		chartW, chartH, chartW, chartH)
	for _, g := range []float64{0, 0.25, 0.5, 0.75, 1} {
		cls := "grid"
		if g == movedLine {
			cls = "grid moved"
		}
		fmt.Fprintf(&b, `<line class="%s" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/><text class="tick" x="%g" y="%.1f" text-anchor="end">%.2f</text>`,
			cls, chartL, chartL+plotW, yOf(g), yOf(g), chartL-6, yOf(g)+4, g)
	}
	for t := 0; t <= n; t++ {
		fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">%d</text>`, xOf(t), chartH-12, t)
	}
	fmt.Fprintf(&b, `<text class="tick" x="%.1f" y="%g" text-anchor="middle">turn t</text>`, chartL+plotW/2, chartH-1)

	// Per-probe read-outs: probe k's P at t = 0 (Initial) and each turn.
	at := func(t int) []probe.Reading {
		if t == 0 {
			return ep.Initial
		}
		return ep.Turns[t-1].Probes
	}
	colors := strings.Fields(probeColors)
	var names []string
	for t := 0; t <= n; t++ {
		for k, r := range at(t) {
			if k == len(names) {
				names = append(names, r.Probe)
			}
		}
	}
	for k, name := range names {
		var pts []point
		for t := 0; t <= n; t++ {
			rs := at(t)
			if k < len(rs) && rs[k].OK {
				pts = append(pts, point{xOf(t), yOf(rs[k].P), true})
			} else {
				pts = append(pts, point{ok: false})
			}
		}
		c := colors[k%len(colors)]
		polylines(&b, pts, fmt.Sprintf(`class="probe" stroke="%s"`, c))
		fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" class="probe"/><text class="legend" x="%g" y="%g">%s</text>`,
			chartW-chartR+10, chartW-chartR+26, chartTop+30+16*float64(k), chartTop+30+16*float64(k), c,
			chartW-chartR+30, chartTop+34+16*float64(k), html.EscapeString(strings.ToUpper(name)))
	}

	// The belief B_t.
	beliefAt := func(t int) *float64 {
		if t == 0 {
			return ep.B0
		}
		return ep.Turns[t-1].Belief
	}
	var pts []point
	for t := 0; t <= n; t++ {
		if p := beliefAt(t); p != nil {
			pts = append(pts, point{xOf(t), yOf(*p), true})
		} else {
			pts = append(pts, point{ok: false})
		}
	}
	polylines(&b, pts, `class="belief" stroke="`+beliefColor+`"`)
	for t := 0; t <= n; t++ {
		p := beliefAt(t)
		if p == nil {
			continue
		}
		tip := fmt.Sprintf("t=%d B=%.3f", t, *p)
		if t > 0 && ep.Turns[t-1].Dense != nil {
			tip += fmt.Sprintf(" r=%+.3f", *ep.Turns[t-1].Dense)
		}
		fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s</title></circle>`, xOf(t), yOf(*p), beliefColor, tip)
	}
	fmt.Fprintf(&b, `<line x1="%g" x2="%g" y1="%g" y2="%g" stroke="%s" class="belief"/><text class="legend" x="%g" y="%g">B_t</text>`,
		chartW-chartR+10, chartW-chartR+26, chartTop+12, chartTop+12, beliefColor, chartW-chartR+30, chartTop+16)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

type point struct {
	x, y float64
	ok   bool
}

// polylines writes one <polyline> per run of consecutive readable points
// (a lone point gets none; the dots show it).
func polylines(b *strings.Builder, pts []point, attrs string) {
	for i := 0; i < len(pts); {
		if !pts[i].ok {
			i++
			continue
		}
		j := i
		var coords []string
		for j < len(pts) && pts[j].ok {
			coords = append(coords, fmt.Sprintf("%.1f,%.1f", pts[j].x, pts[j].y))
			j++
		}
		if len(coords) > 1 {
			fmt.Fprintf(b, `<polyline fill="none" %s points="%s"/>`, attrs, strings.Join(coords, " "))
		}
		i = j
	}
}
