package report

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/eval"
)

// ErrNoData is wrapped by the figure builders when the analysis holds
// nothing to draw (no episodes, or no GRPO group for Figure 7).
var ErrNoData = errors.New("nothing to plot")

// Colours: the Okabe-Ito palette, distinguishable with the common forms
// of colour blindness; every series also has its own glyph so that a
// greyscale print still tells them apart.
var (
	okBlue      = color.RGBA{0x00, 0x72, 0xB2, 0xff}
	okOrange    = color.RGBA{0xE6, 0x9F, 0x00, 0xff}
	okGreen     = color.RGBA{0x00, 0x9E, 0x73, 0xff}
	okVermilion = color.RGBA{0xD5, 0x5E, 0x00, 0xff}
	okPurple    = color.RGBA{0xCC, 0x79, 0xA7, 0xff}
	okSky       = color.RGBA{0x56, 0xB4, 0xE9, 0xff}
	okGrey      = color.RGBA{0x99, 0x99, 0x99, 0xff}
	okBlack     = color.RGBA{0x22, 0x22, 0x22, 0xff}
)

// palette colours series that have no fixed colour (persuaders, unknown
// probes), in order.
var palette = []color.Color{okBlue, okVermilion, okGreen, okPurple, okOrange, okSky, okBlack, okGrey}

var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PyramidGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}}

// ActColor is the fixed colour of a persuasion act (Figure 5), so that an
// act has the same colour in every figure: diagnostic blue, evidence
// orange, plan green, commitment vermilion, autonomy purple; grey for an
// unknown name.
func ActColor(act string) color.Color {
	switch act {
	case "diagnostic":
		return okBlue
	case "evidence":
		return okOrange
	case "plan":
		return okGreen
	case "commitment":
		return okVermilion
	case "autonomy":
		return okPurple
	}
	return okGrey
}

// TerminalColor is the fixed colour of a terminal state: accept green,
// conditional sky blue, pending grey, reject vermilion, truncated black,
// failed orange.
func TerminalColor(t decision.Terminal) color.Color {
	switch t {
	case decision.TermAccept:
		return okGreen
	case decision.TermConditional:
		return okSky
	case decision.TermPending:
		return okGrey
	case decision.TermReject:
		return okVermilion
	case decision.TermTruncated:
		return okBlack
	}
	return okOrange
}

// probeColor is the colour of probe k of ids: the default basis' ca, pe,
// ac get blue, orange and purple (never an act's green or vermilion
// neighbours in Figure 6); other ids take the palette in order.
func probeColor(id string, k int) color.Color {
	switch id {
	case "ca":
		return okBlue
	case "pe":
		return okOrange
	case "ac":
		return okPurple
	}
	return palette[k%len(palette)]
}

// series builds a legend entry (and line style) for series k of colour c.
func series(label string, c color.Color, k int, dashed bool) LegendEntry {
	e := LegendEntry{Label: label,
		Line:  draw.LineStyle{Color: c, Width: vg.Points(1.6)},
		Glyph: draw.GlyphStyle{Color: c, Radius: vg.Points(2.4), Shape: glyphs[k%len(glyphs)]}}
	if dashed {
		e.Line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return e
}

// panelLetter returns "(a) ", "(b) ", ... for panel i.
func panelLetter(i int) string {
	if i < 26 {
		return "(" + string(rune('a'+i)) + ") "
	}
	return fmt.Sprintf("(%d) ", i+1)
}

// Panel sizes in points.
const (
	panelW = 3.3 * 72
	panelH = 2.5 * 72
)

// Figure5 builds the Probe-RPO paper's Figure 5 from c: one panel per arm,
// five lines (one per act) giving the % of that arm's persuader utterances at
// turn t (x, 1..the longest episode) that contain the act. Turns no episode
// reached are absent.
//
// Errors: ErrNoData (wrapped) when c has no series with points.
func Figure5(c analysis.ActCurves) (*Figure, error) {
	f := &Figure{Name: "figure5", Title: "Persuasion acts by persuader turn", Ref: "Probe-RPO paper, Figure 5", Cols: 2, PanelW: panelW, PanelH: panelH,
		Caption: "Share of persuader utterances containing each of the five persuasion acts, by persuader turn, one panel per persuader (Probe-RPO paper, Figure 5). An utterance can hold several acts, so the curves need not sum to 100%. Late turns rest on fewer episodes (see the n column of the data table)."}
	tmax := 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			tmax = max(tmax, p.T)
		}
	}
	if tmax == 0 {
		return nil, fmt.Errorf("report: figure 5: %w: no persuader turns", ErrNoData)
	}
	var legend LegendGroup
	for k, act := range c.Acts {
		legend.Entries = append(legend.Entries, series(act, ActColor(act), k, false))
	}
	for i, s := range c.Series {
		p := newPanel(panelLetter(i)+s.Label, "persuader turn", "% of utterances")
		for k, e := range legend.Entries {
			xs := make([]float64, len(s.Points))
			ys := make([]float64, len(s.Points))
			for j, pt := range s.Points {
				xs[j], ys[j] = float64(pt.T), 100*pt.Share[k]
			}
			addLine(p, xs, ys, e)
			f.Series = append(f.Series, s.Label+" / "+e.Label)
		}
		p.X.Min, p.X.Max = 0.6, float64(tmax)+0.4
		p.Y.Min, p.Y.Max = -3, 103
		p.X.Tick.Marker = intTicks(1, tmax)
		p.Y.Tick.Marker = fixedTicks("%.0f", 0, 25, 50, 75, 100)
		f.Panels = append(f.Panels, p)
	}
	f.Legend = []LegendGroup{legend}
	return f, nil
}

// Figure6 builds the Probe-RPO paper's Figure 6 from tr: one panel per arm with the
// mean probe state s_{t,k} in [-1, 1] of each probe by turn t = 0..Tmax,
// then one panel of the mean belief B_t in [0, 1] by turn, pooled over
// arms and split by terminal state. A mean with no reading is a gap.
//
// Errors: ErrNoData (wrapped) when tr has no curve.
func Figure6(tr analysis.Trajectories) (*Figure, error) {
	if len(tr.ByArm) == 0 && len(tr.ByTerminal) == 0 {
		return nil, fmt.Errorf("report: figure 6: %w: no episodes", ErrNoData)
	}
	n := len(tr.ByArm) + 1
	f := &Figure{Name: "figure6", Title: "Probe states and belief by turn", Ref: "Probe-RPO paper, Figure 6", Cols: min(3, n), PanelW: panelW, PanelH: panelH,
		Caption: "Mean probe state s = 2p − 1 of each probe by turn, one panel per persuader; t = 0 is the read-out before the first persuader turn. The last panel shows the mean belief B_t pooled over persuaders and split by the episode's terminal decision (Probe-RPO paper, Figure 6). Each mean uses the episodes that reached turn t with a readable probe."}
	tmax := 0
	for _, c := range append(append([]analysis.Trajectory{}, tr.ByArm...), tr.ByTerminal...) {
		for _, p := range c.Points {
			tmax = max(tmax, p.T)
		}
	}
	probes := LegendGroup{Title: "probe:"}
	for k, id := range tr.Probes {
		probes.Entries = append(probes.Entries, series(id, probeColor(id, k), k, false))
	}
	for i, c := range tr.ByArm {
		p := newPanel(panelLetter(i)+c.Label, "turn t", "mean probe state s")
		for k, e := range probes.Entries {
			xs := make([]float64, len(c.Points))
			ys := make([]float64, len(c.Points))
			for j, pt := range c.Points {
				xs[j], ys[j] = float64(pt.T), pt.States[k]
			}
			addLine(p, xs, ys, e)
			f.Series = append(f.Series, c.Label+" / "+e.Label)
		}
		p.X.Min, p.X.Max = -0.4, float64(tmax)+0.4
		p.Y.Min, p.Y.Max = -1.05, 1.05
		p.X.Tick.Marker = intTicks(0, tmax)
		p.Y.Tick.Marker = fixedTicks("%.1f", -1, -0.5, 0, 0.5, 1)
		f.Panels = append(f.Panels, p)
	}
	terms := LegendGroup{Title: "terminal:"}
	p := newPanel(panelLetter(len(tr.ByArm))+"belief by terminal (pooled)", "turn t", "mean belief B_t")
	for k, c := range tr.ByTerminal {
		e := series(c.Label, TerminalColor(c.Terminal), k, false)
		terms.Entries = append(terms.Entries, e)
		xs := make([]float64, len(c.Points))
		ys := make([]float64, len(c.Points))
		for j, pt := range c.Points {
			xs[j], ys[j] = float64(pt.T), pt.Belief
		}
		addLine(p, xs, ys, e)
		f.Series = append(f.Series, "belief / "+c.Label)
	}
	p.X.Min, p.X.Max = -0.4, float64(tmax)+0.4
	p.Y.Min, p.Y.Max = -0.03, 1.03
	p.X.Tick.Marker = intTicks(0, tmax)
	p.Y.Tick.Marker = fixedTicks("%.2f", 0, 0.25, 0.5, 0.75, 1)
	f.Panels = append(f.Panels, p)
	f.Legend = []LegendGroup{probes, terms}
	return f, nil
}

// AdvantagePoint is Figure 7(c) for one arm at one step: the mean
// absolute contribution of the two terms of A_{i,t} = A_out_i +
// λ·A_dense_{i,t} (Probe-RPO paper, Eq. 3) over every turn of the arm's groups.
type AdvantagePoint struct {
	Arm   analysis.Arm
	Label string
	// Step is the training step; -1 in AdvantageTerms.Overall.
	Step int
	// Groups counts the groups (>= 2 scored rollouts) and Turns the
	// rollout turns (i, t) the means run over.
	Groups, Turns int
	// MeanAbsOut is mean |A_out_i| and MeanAbsDense mean |λ·A_dense_{i,t}|
	// over those turns; NaN when Turns is 0.
	MeanAbsOut, MeanAbsDense float64
}

// AdvantageTerms is the Probe-RPO paper's Figure 7(c) data, computed with package
// grpo's advantage functions over stored rollouts.
type AdvantageTerms struct {
	// Lambda is the λ used.
	Lambda float64
	// Points are ordered by arm (first appearance), then step.
	Points []AdvantagePoint
	// Overall has one point per arm, over all steps (Step = -1).
	Overall []AdvantagePoint
}

// armSteps returns the steps at which arm a has groups in pts.
func armSteps(pts []analysis.DeadGroupPoint, a analysis.Arm) (steps []int) {
	for _, p := range pts {
		if p.Arm == a && p.Groups > 0 {
			steps = append(steps, p.Step)
		}
	}
	return steps
}

// Figure7 builds the Probe-RPO paper's Figure 7 from st and adv: over
// training steps when any arm has groups at more than one step — (a)
// dead-group share by step per arm, (b) overall dead and dense-separated
// shares per arm, (c) mean |A_out| and |λ·A_dense| by step per arm — and
// otherwise (an eval run, step 0) panels (b) and (c) as bar charts per arm. A
// zero-value adv leaves panel (c) out.
//
// Errors: ErrNoData (wrapped) when no arm has a group of 2 or more scored
// rollouts.
func Figure7(st analysis.DeadGroupStats, adv AdvantageTerms) (*Figure, error) {
	var arms []analysis.DeadGroupPoint
	multi := false
	for _, o := range st.Overall {
		if o.Groups > 0 {
			arms = append(arms, o)
			multi = multi || len(armSteps(st.Points, o.Arm)) > 1
		}
	}
	if len(arms) == 0 {
		return nil, fmt.Errorf("report: figure 7: %w: no scenario has 2 or more scored rollouts of one persuader (evaluate with --rollouts 2 or more)", ErrNoData)
	}
	f := &Figure{Name: "figure7", Title: "Dead GRPO groups and the dense term", Ref: "Probe-RPO paper, Figure 7", Cols: 3, PanelW: panelW, PanelH: panelH,
		Caption: fmt.Sprintf("A group is the scored rollouts of one scenario for one persuader; it is dead when all its rollouts have the same outcome reward R_goal, so its outcome advantage is zero, and the dense term separates it when the rollouts' per-turn dense advantages differ (Probe-RPO paper, Figure 7). The advantage-terms panel shows the mean absolute outcome advantage |A_out| and dense term |λ·A_dense| per rollout turn, λ = %g, computed with package grpo (Probe-RPO paper, Eq. 3).", adv.Lambda)}
	labels := make([]string, len(arms))
	for i, a := range arms {
		labels[i] = a.Label
	}
	var legend []LegendGroup
	letter := 0
	if multi {
		p := newPanel(panelLetter(letter)+"dead groups over training", "training step", "dead groups, %")
		letter++
		arml := LegendGroup{Title: "persuader:"}
		for k, a := range arms {
			e := series(a.Label, palette[k%len(palette)], k, false)
			arml.Entries = append(arml.Entries, e)
			var xs, ys []float64
			for _, pt := range st.Points {
				if pt.Arm == a.Arm && pt.Groups > 0 {
					xs, ys = append(xs, float64(pt.Step)), append(ys, 100*pt.DeadShare)
				}
			}
			addLine(p, xs, ys, e)
			f.Series = append(f.Series, "dead over steps / "+a.Label)
		}
		p.Y.Min, p.Y.Max = -3, 103
		p.Y.Tick.Marker = fixedTicks("%.0f", 0, 25, 50, 75, 100)
		stepAxis(p, st.Points)
		f.Panels = append(f.Panels, p)
		legend = append(legend, arml)
	}
	// (b) overall shares.
	dead := LegendEntry{Label: "dead groups", Fill: okGrey}
	sep := LegendEntry{Label: "dense-separated | dead", Fill: okBlue}
	title := "dead groups and dense-separated share"
	if multi {
		title = "dead and separated, all steps"
	}
	p := newPanel(panelLetter(letter)+title, "%", "")
	letter++
	d := make(plotter.Values, len(arms))
	s := make(plotter.Values, len(arms))
	for i, a := range arms {
		d[i] = 100 * a.DeadShare
		s[i] = zeroNaN(100 * a.SeparatedShare)
	}
	addBars(p, labels, []plotter.Values{d, s}, []LegendEntry{dead, sep})
	f.Series = append(f.Series, "overall / "+dead.Label, "overall / "+sep.Label)
	p.X.Max = 105
	p.X.Tick.Marker = fixedTicks("%.0f", 0, 25, 50, 75, 100)
	f.Panels = append(f.Panels, p)
	f.PanelH = max(f.PanelH, barPanelH(len(arms)))
	shares := LegendGroup{Entries: []LegendEntry{dead, sep}}
	// (c) advantage terms.
	var terms LegendGroup
	if len(adv.Overall) > 0 {
		out := LegendEntry{Label: "|A_out|", Fill: okOrange}
		den := LegendEntry{Label: fmt.Sprintf("|λ·A_dense| (λ = %g)", adv.Lambda), Fill: okPurple}
		title := panelLetter(letter) + "advantage terms"
		if multi {
			p := newPanel(title+" over training", "training step", "mean absolute value")
			for k, a := range adv.Overall {
				c := palette[k%len(palette)]
				var xs, o, dn []float64
				for _, pt := range adv.Points {
					if pt.Arm == a.Arm && pt.Turns > 0 {
						xs = append(xs, float64(pt.Step))
						o, dn = append(o, pt.MeanAbsOut), append(dn, pt.MeanAbsDense)
					}
				}
				addLine(p, xs, o, series(a.Label+" |A_out|", c, k, false))
				addLine(p, xs, dn, series(a.Label+" |λ·A_dense|", c, k, true))
				f.Series = append(f.Series, "advantage / "+a.Label+" |A_out|", "advantage / "+a.Label+" |λ·A_dense|")
			}
			p.Y.Min = 0
			p.Y.Max = headroom(p.Y.Max)
			stepAxis(p, st.Points)
			f.Panels = append(f.Panels, p)
			terms = LegendGroup{Title: "(c):", Entries: []LegendEntry{
				{Label: "solid |A_out|", Line: draw.LineStyle{Color: okBlack, Width: vg.Points(1.6)}},
				{Label: "dashed |λ·A_dense|", Line: draw.LineStyle{Color: okBlack, Width: vg.Points(1.6), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}}}}
		} else {
			p := newPanel(title, "mean absolute value", "")
			var names []string
			o := make(plotter.Values, 0, len(adv.Overall))
			dn := make(plotter.Values, 0, len(adv.Overall))
			for _, a := range adv.Overall {
				names = append(names, a.Label)
				o, dn = append(o, zeroNaN(a.MeanAbsOut)), append(dn, zeroNaN(a.MeanAbsDense))
			}
			addBars(p, names, []plotter.Values{o, dn}, []LegendEntry{out, den})
			f.Series = append(f.Series, "advantage / "+out.Label, "advantage / "+den.Label)
			p.X.Max = headroom(max(slices.Max(o), slices.Max(dn)))
			f.Panels = append(f.Panels, p)
			f.PanelH = max(f.PanelH, barPanelH(len(names)))
			terms = LegendGroup{Entries: []LegendEntry{out, den}}
		}
	}
	f.Cols = len(f.Panels)
	f.Legend = append(legend, shares)
	if len(terms.Entries) > 0 {
		f.Legend = append(f.Legend, terms)
	}
	return f, nil
}

// stepAxis sets p's x axis to the steps of pts: every step marked when
// there are at most 12, gonum's ticks otherwise.
func stepAxis(p *plot.Plot, pts []analysis.DeadGroupPoint) {
	lo, hi := math.MaxInt, math.MinInt
	for _, pt := range pts {
		if pt.Groups > 0 {
			lo, hi = min(lo, pt.Step), max(hi, pt.Step)
		}
	}
	if lo > hi {
		return
	}
	p.X.Min, p.X.Max = float64(lo)-0.5, float64(hi)+0.5
	if hi-lo <= 12 {
		p.X.Tick.Marker = intTicks(lo, hi)
	}
}

// headroom returns an axis maximum 8% above the largest value hi, so
// that no bar or line touches the frame (1 when hi is not positive).
func headroom(hi float64) float64 {
	if !(hi > 0) {
		return 1
	}
	return 1.08 * hi
}

func zeroNaN(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// barRow is the height of one labelled row of a horizontal bar chart.
const barRow = 0.42 * 72

// barPanelH is the panel height that fits n rows of bars.
func barPanelH(n int) vg.Length { return vg.Points(barRow*float64(n) + 75) }

// addBars draws horizontal bars: one row per label, top to bottom, with
// one bar per group (in legend order, top first) in each row. Labels sit
// on the y axis, so long names never overlap.
func addBars(p *plot.Plot, labels []string, groups []plotter.Values, es []LegendEntry) {
	n := len(labels)
	w := vg.Points(barRow * 0.8 / float64(len(groups)))
	for k, vs := range groups {
		rev := make(plotter.Values, n)
		for i := range vs {
			rev[n-1-i] = vs[i]
		}
		b, _ := plotter.NewBarChart(rev, w)
		b.Horizontal = true
		b.Color = es[k].Fill
		b.LineStyle.Width = 0
		b.Offset = (vg.Length(len(groups)-1)/2 - vg.Length(k)) * w
		p.Add(b)
	}
	names := make([]string, n)
	for i, l := range labels {
		names[n-1-i] = l
	}
	p.NominalY(names...)
	p.X.Min = 0
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
}

// TerminalBars builds the Table 5 view: one horizontal bar per summary
// (persuader × persuadee × set, top to bottom in sums order), split into
// the shares of accept, conditional, pending, reject (and truncated, when
// any) in %. Summaries with no scored episode are left out. The label
// names the persuadee too when sums hold more than one.
//
// Errors: ErrNoData (wrapped) when no summary has a scored episode.
func TerminalBars(sums []eval.Summary) (*Figure, error) {
	var rows []eval.Summary
	pees := map[string]bool{}
	sets := map[string]bool{}
	trunc := false
	for _, s := range sums {
		if s.N > 0 {
			rows = append(rows, s)
			pees[s.Persuadee] = true
			sets[s.Set] = true
			trunc = trunc || s.Truncated > 0
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("report: terminal bars: %w: no scored episode", ErrNoData)
	}
	label := func(s eval.Summary) string {
		parts := []string{s.Persuader}
		if len(pees) > 1 {
			parts = append(parts, "vs "+s.Persuadee)
		}
		if s.Set != "" && (len(sets) > 1 || s.Set != "all") {
			parts = append(parts, "· "+s.Set)
		}
		return strings.Join(parts, " ")
	}
	terms := slicesOf(decision.Terminals)
	if trunc {
		terms = append(terms, decision.TermTruncated)
	}
	rowH := vg.Points(20)
	f := &Figure{Name: "terminals", Title: "Terminal decisions", Ref: "Probe-RPO paper, Table 5", Cols: 1, PanelW: 6.6 * 72,
		PanelH:  vg.Length(len(rows))*rowH + vg.Points(50),
		Caption: "Share of scored episodes ending in each terminal state, per persuader and scenario set (the terminal columns of the Probe-RPO paper's Table 5). Failed episodes are left out."}
	p := newPanel("", "% of episodes", "")
	p.Y.Padding = 0
	var legend LegendGroup
	var below *plotter.BarChart
	names := make([]string, len(rows))
	for i, s := range rows {
		names[len(rows)-1-i] = label(s)
	}
	for _, t := range terms {
		vs := make(plotter.Values, len(rows))
		for i, s := range rows {
			vs[len(rows)-1-i] = 100 * zeroNaN(share(s, t))
		}
		b, _ := plotter.NewBarChart(vs, rowH*0.7)
		b.Horizontal = true
		b.Color = TerminalColor(t)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		e := LegendEntry{Label: string(t), Fill: TerminalColor(t)}
		legend.Entries = append(legend.Entries, e)
		f.Series = append(f.Series, "terminal / "+string(t))
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, 100
	p.X.Tick.Marker = fixedTicks("%.0f", 0, 20, 40, 60, 80, 100)
	p.Y.Min, p.Y.Max = -0.6, float64(len(rows))-0.4
	f.Panels = []*plot.Plot{p}
	f.Legend = []LegendGroup{legend}
	return f, nil
}

func slicesOf(ts []decision.Terminal) []decision.Terminal {
	return append([]decision.Terminal{}, ts...)
}

// share returns s's share of terminal t.
func share(s eval.Summary, t decision.Terminal) float64 {
	switch t {
	case decision.TermAccept:
		return s.Accept
	case decision.TermConditional:
		return s.Conditional
	case decision.TermPending:
		return s.Pending
	case decision.TermReject:
		return s.Reject
	case decision.TermTruncated:
		return s.Truncated
	}
	return math.NaN()
}

// WriteFigure5 renders Figure5(c) as format ("svg" or "png") to w.
// Errors: as Figure5 and Figure.Write.
func WriteFigure5(w io.Writer, c analysis.ActCurves, format string) error {
	f, err := Figure5(c)
	if err != nil {
		return err
	}
	return f.Write(w, format)
}

// WriteFigure6 renders Figure6(tr) as format ("svg" or "png") to w.
// Errors: as Figure6 and Figure.Write.
func WriteFigure6(w io.Writer, tr analysis.Trajectories, format string) error {
	f, err := Figure6(tr)
	if err != nil {
		return err
	}
	return f.Write(w, format)
}

// WriteFigure7 renders Figure7(st, adv) as format ("svg" or "png") to w.
// Errors: as Figure7 and Figure.Write.
func WriteFigure7(w io.Writer, st analysis.DeadGroupStats, adv AdvantageTerms, format string) error {
	f, err := Figure7(st, adv)
	if err != nil {
		return err
	}
	return f.Write(w, format)
}

// WriteTerminalBars renders TerminalBars(sums) as format ("svg" or "png")
// to w. Errors: as TerminalBars and Figure.Write.
func WriteTerminalBars(w io.Writer, sums []eval.Summary, format string) error {
	f, err := TerminalBars(sums)
	if err != nil {
		return err
	}
	return f.Write(w, format)
}
