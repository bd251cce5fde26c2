package report

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// DPI is the resolution of PNG figures: a figure of w × h points is
// round(w·DPI/72) × round(h·DPI/72) pixels.
//
// Choice: 150 dpi is sharp on a laptop screen and in a printed paper
// while keeping a four-panel figure near 100 KB.
const DPI = 150

// Formats lists the figure formats Figure.Write accepts.
var Formats = []string{"svg", "png"}

// LegendEntry is one item of a figure's legend strip: a label and the
// line, glyph or fill that marks its series.
type LegendEntry struct {
	Label string
	// Line is the series' line style; a zero Width draws no line.
	Line draw.LineStyle
	// Glyph, when its Radius is non-zero, is drawn on the line.
	Glyph draw.GlyphStyle
	// Fill, when not nil, draws a filled box instead (bar charts).
	Fill color.Color
}

// LegendGroup is a titled run of legend entries ("act:", "terminal:").
type LegendGroup struct {
	Title   string
	Entries []LegendEntry
}

// Figure is one figure of the report: panels (gonum plots) in a grid,
// a title at the top and a legend strip at the bottom shared by all
// panels, so that no legend covers a curve. Build one with Figure5,
// Figure6, Figure7 or TerminalBars and render it with Write.
type Figure struct {
	// Name is the file stem of the figure's files, e.g. "figure5".
	Name string
	// Title is drawn above the panels; Caption explains the figure in the
	// HTML report (plain text).
	Title, Caption string
	// Ref cites what the figure reproduces, e.g. "Probe-RPO paper, Figure 5";
	// empty for figures of our own.
	Ref string
	// Cols is the number of panel columns (>= 1); rows follow from
	// len(Panels).
	Cols int
	// Panels are drawn row by row; a nil panel leaves its cell empty.
	Panels []*plot.Plot
	// Legend is drawn below the panels, groups one after another, wrapped
	// to the figure's width.
	Legend []LegendGroup
	// PanelW and PanelH are one panel's size.
	PanelW, PanelH vg.Length
	// Series names every drawn series, "panel title / series label", in
	// drawing order (for alt text and tests).
	Series []string
}

// Font sizes and the font, in points.
const (
	titleSize  = 13
	panelSize  = 11
	labelSize  = 10
	tickSize   = 9
	legendSize = 10
)

// sans is the figures' typeface. Choice: Liberation Sans (shipped with
// gonum/plot, so PNGs need no system font) is metric-compatible with Arial,
// which the SVG output names as a fallback for viewers without it.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

// sansBold is sans at weight 3, x/image/font.WeightBold (CSS 700).
var sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: 3}

func textStyle(size vg.Length) text.Style {
	return text.Style{Color: color.Black, Font: font.From(sans, size), Handler: plot.DefaultTextHandler,
		XAlign: draw.XLeft, YAlign: draw.YBottom}
}

// newPanel returns a plot with the report's fonts, a light grid and the
// given title and axis labels.
func newPanel(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, panelSize)
	p.Title.Padding = vg.Points(4)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, labelSize)
		ax.Tick.Label.Font = font.From(sans, tickSize)
		ax.Padding = vg.Points(2)
	}
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe4}
	g.Horizontal.Color = color.Gray{Y: 0xe4}
	g.Vertical.Width = vg.Points(0.5)
	g.Horizontal.Width = vg.Points(0.5)
	p.Add(g)
	return p
}

// fitTitle keeps p's title within w: it shrinks the font down to 8 pt,
// then shortens the text in the middle with "…". Idempotent.
func fitTitle(p *plot.Plot, w vg.Length) {
	sty := &p.Title.TextStyle
	for sty.Width(p.Title.Text) > w && sty.Font.Size > 8 {
		sty.Font.Size--
	}
	orig := []rune(p.Title.Text)
	for keep := len(orig) - 1; sty.Width(p.Title.Text) > w && keep > 2; keep-- {
		head := (keep + 1) / 2
		p.Title.Text = string(orig[:head]) + "…" + string(orig[len(orig)-(keep-head):])
	}
}

// intTicks marks every integer from lo to hi (every second one when there
// are more than 12).
func intTicks(lo, hi int) plot.ConstantTicks {
	step := 1
	if hi-lo > 12 {
		step = 2
	}
	var ts plot.ConstantTicks
	for v := lo; v <= hi; v += step {
		ts = append(ts, plot.Tick{Value: float64(v), Label: fmt.Sprint(v)})
	}
	return ts
}

// fixedTicks marks the given values with the given number format.
func fixedTicks(format string, vs ...float64) plot.ConstantTicks {
	ts := make(plot.ConstantTicks, len(vs))
	for i, v := range vs {
		ts[i] = plot.Tick{Value: v, Label: strings.Replace(fmt.Sprintf(format, v), "-", "−", 1)}
	}
	return ts
}

// addLine draws one series on p: the finite points of xs, ys joined by a
// line (a NaN y breaks the line), each marked with the glyph.
func addLine(p *plot.Plot, xs, ys []float64, e LegendEntry) {
	var seg plotter.XYs
	flush := func() {
		if len(seg) == 0 {
			return
		}
		if len(seg) > 1 {
			l, _ := plotter.NewLine(seg)
			l.LineStyle = e.Line
			p.Add(l)
		}
		if e.Glyph.Radius > 0 {
			s, _ := plotter.NewScatter(seg)
			s.GlyphStyle = e.Glyph
			p.Add(s)
		}
		seg = nil
	}
	for i := range xs {
		if math.IsNaN(ys[i]) || math.IsInf(ys[i], 0) {
			flush()
			continue
		}
		seg = append(seg, plotter.XY{X: xs[i], Y: ys[i]})
	}
	flush()
}

// Size returns the figure's width and height in points: the panel grid,
// plus the title and legend strips.
func (f *Figure) Size() (w, h vg.Length) {
	cols, rows := f.grid()
	w = vg.Length(cols) * f.PanelW
	return w, f.titleHeight() + vg.Length(rows)*f.PanelH + f.legendHeight(w)
}

func (f *Figure) grid() (cols, rows int) {
	cols = max(1, min(f.Cols, len(f.Panels)))
	rows = max(1, (len(f.Panels)+cols-1)/cols)
	return cols, rows
}

func (f *Figure) titleHeight() vg.Length {
	if f.Title == "" {
		return vg.Points(6)
	}
	return vg.Points(titleSize * 2.2)
}

const (
	legendPad   = 6  // points around the strip and between entries
	legendThumb = 22 // points: a thumbnail's width
)

// legendItem is one placed legend item: a group title or an entry.
type legendItem struct {
	title string
	entry *LegendEntry
	width vg.Length
}

// legendLines wraps the legend's items into lines no wider than w.
func (f *Figure) legendLines(w vg.Length) [][]legendItem {
	sty := textStyle(legendSize)
	bold := sty
	bold.Font = font.From(sansBold, legendSize)
	var lines [][]legendItem
	var cur []legendItem
	var curW vg.Length
	avail := w - 2*legendPad
	put := func(it legendItem, newGroup bool) {
		if len(cur) > 0 && curW+it.width > avail {
			lines = append(lines, cur)
			cur, curW = nil, 0
		}
		if newGroup && len(cur) > 0 {
			curW += 2 * legendPad
		}
		cur = append(cur, it)
		curW += it.width + legendPad
	}
	for _, g := range f.Legend {
		first := true
		if g.Title != "" {
			put(legendItem{title: g.Title, width: bold.Width(g.Title)}, true)
			first = false
		}
		for i := range g.Entries {
			e := &g.Entries[i]
			put(legendItem{entry: e, width: thumbWidth(*e) + 4 + sty.Width(e.Label)}, first)
			first = false
		}
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

func lineHeight() vg.Length { return vg.Points(legendSize * 1.7) }

func (f *Figure) legendHeight(w vg.Length) vg.Length {
	n := len(f.legendLines(w))
	if n == 0 {
		return vg.Points(4)
	}
	return vg.Length(n)*lineHeight() + 2*legendPad
}

// draw renders the figure onto c (its full size).
func (f *Figure) draw(c draw.Canvas) {
	w, h := f.Size()
	c.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: w, Y: 0}, {X: w, Y: h}, {X: 0, Y: h}})
	if f.Title != "" {
		sty := textStyle(titleSize)
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
		c.FillText(sty, vg.Point{X: w / 2, Y: h - f.titleHeight()/2}, f.Title)
	}
	lh := f.legendHeight(w)
	cols, rows := f.grid()
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
		for k := range cols {
			if i := r*cols + k; i < len(f.Panels) {
				grid[r][k] = f.Panels[i]
			}
		}
	}
	area := draw.Crop(c, 0, 0, lh, -f.titleHeight())
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(14), PadY: vg.Points(10),
		PadLeft: vg.Points(4), PadRight: vg.Points(10), PadTop: vg.Points(2), PadBottom: vg.Points(2)}
	canvases := plot.Align(grid, tiles, area)
	for r := range grid {
		for k, p := range grid[r] {
			if p != nil {
				fitTitle(p, f.PanelW-vg.Points(8))
				p.Draw(canvases[r][k])
			}
		}
	}
	f.drawLegend(c, w, lh)
}

// drawLegend draws the legend strip, each line centred, in the bottom lh
// points of c.
func (f *Figure) drawLegend(c draw.Canvas, w, lh vg.Length) {
	lines := f.legendLines(w)
	sty := textStyle(legendSize)
	sty.YAlign = draw.YCenter
	for i, line := range lines {
		y := lh - legendPad - (vg.Length(i)+0.5)*lineHeight()
		var lw vg.Length
		for j, it := range line {
			lw += it.width
			if j > 0 {
				lw += legendPad
				if it.title != "" {
					lw += 2 * legendPad
				}
			}
		}
		x := (w - lw) / 2
		for j, it := range line {
			if j > 0 && it.title != "" {
				x += 2 * legendPad
			}
			if it.title != "" {
				t := sty
				t.Font = font.From(sansBold, legendSize)
				c.FillText(t, vg.Point{X: x, Y: y}, it.title)
			} else {
				drawThumb(c, *it.entry, x, y)
				c.FillText(sty, vg.Point{X: x + thumbWidth(*it.entry) + 4, Y: y}, it.entry.Label)
			}
			x += it.width + legendPad
		}
	}
}

// thumbWidth is the width of an entry's marker: a square for a fill, a
// short line otherwise.
func thumbWidth(e LegendEntry) vg.Length {
	if e.Fill != nil {
		return vg.Points(legendSize * 0.9)
	}
	return legendThumb
}

// drawThumb draws an entry's marker in the thumbWidth-wide box at x,
// centred on y.
func drawThumb(c draw.Canvas, e LegendEntry, x, y vg.Length) {
	if e.Fill != nil {
		s := thumbWidth(e)
		c.FillPolygon(e.Fill, []vg.Point{{X: x, Y: y - s/2}, {X: x + s, Y: y - s/2}, {X: x + s, Y: y + s/2}, {X: x, Y: y + s/2}})
		return
	}
	if e.Line.Width > 0 {
		c.StrokeLine2(e.Line, x, y, x+legendThumb, y)
	}
	if e.Glyph.Radius > 0 {
		c.DrawGlyphNoClip(e.Glyph, vg.Point{X: x + legendThumb/2, Y: y})
	}
}

// Write renders the figure as "svg" or "png" to w. The SVG names Arial
// and sans-serif as fallbacks for Liberation Sans and carries no XML
// prolog, so it can be inlined in HTML as is; the same figure gives the
// same bytes.
//
// Errors: an unknown format, or the writer's error.
func (f *Figure) Write(w io.Writer, format string) error {
	if len(f.Panels) == 0 {
		return fmt.Errorf("report: figure %s has no panels", f.Name)
	}
	width, height := f.Size()
	switch format {
	case "svg":
		cv := vgsvg.New(width, height)
		f.draw(draw.New(cv))
		var b bytes.Buffer
		if _, err := cv.WriteTo(&b); err != nil {
			return err
		}
		_, err := w.Write(cleanSVG(b.Bytes()))
		return err
	case "png":
		cv := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(DPI), vgimg.UseBackgroundColor(color.White))
		f.draw(draw.New(cv))
		_, err := vgimg.PngCanvas{Canvas: cv}.WriteTo(w)
		return err
	}
	return fmt.Errorf("report: unknown figure format %q (want svg or png)", format)
}

// cleanSVG drops gonum's XML prolog and generator comment (an inline SVG
// in HTML must not carry them) and gives the font a fallback list.
func cleanSVG(b []byte) []byte {
	s := string(b)
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return []byte(s)
}
