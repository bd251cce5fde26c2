package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/store"
)

// TrainingRun is one training run's per-step metrics as the trainer
// stored them (store.DB.Metrics; names in docs/training.md).
type TrainingRun struct {
	RunID string
	Steps []store.StepMetrics
}

// trainingPanel is one panel of the training figure: metrics drawn on one
// axis, with a scale factor (100 for shares shown in %).
type trainingPanel struct {
	title, ylabel string
	metrics       []string
	labels        []string
	scale         float64
	min, max      float64 // NaN: from the data
}

var trainingPanels = []trainingPanel{
	{"full acceptance", "% of rollouts", []string{"accept"}, []string{"accept"}, 100, 0, 100},
	{"mean outcome reward", "R_out", []string{"mean_r_out"}, []string{"R_out"}, 1, math.NaN(), math.NaN()},
	{"dead groups (Figure 7a)", "%", []string{"dead_share", "separated_share"}, []string{"dead", "separated | dead"}, 100, 0, 100},
	{"advantage terms (Figure 7c)", "mean absolute value", []string{"mean_abs_a_out", "mean_abs_lambda_a_dense"}, []string{"|A_out|", "|λ·A_dense|"}, 1, 0, math.NaN()},
	{"KL to the reference", "k3 KL", []string{"kl"}, []string{"KL"}, 1, 0, math.NaN()},
	{"policy entropy", "entropy", []string{"entropy"}, []string{"entropy"}, 1, 0, math.NaN()},
}

// TrainingFigure draws the trainer's stored per-step metrics (x: training
// step, 1-based): full acceptance, mean R_out, the dead-group and
// dense-separated shares and the two advantage terms that the Probe-RPO
// paper's Figure 7 plots over training, KL and entropy. Panels whose metrics
// no run stored are left out. With one run each metric has its own colour;
// with several, each run has a colour and the second metric of a panel is
// dashed.
//
// Errors: ErrNoData (wrapped) when no run has a stored step.
func TrainingFigure(runs []TrainingRun) (*Figure, error) {
	f := &Figure{Name: "training", Title: "Training curves", Ref: "the Probe-RPO paper's Figure 7 over training", Cols: 3,
		PanelW: panelW, PanelH: panelH,
		Caption: "Per-step metrics the trainer stored (store step_metrics; docs/training.md): full acceptance and mean outcome reward R_out of the step's rollouts, the share of dead GRPO groups and of dead groups the dense term separates, the mean |A_out| and |λ·A_dense| over the step's turns (Probe-RPO paper, Figure 7a, c), and the KL to the reference policy and the policy entropy."}
	var shown []TrainingRun
	for _, r := range runs {
		if len(r.Steps) > 0 {
			shown = append(shown, r)
		}
	}
	if len(shown) == 0 {
		return nil, fmt.Errorf("report: training curves: %w: no stored step metrics", ErrNoData)
	}
	multi := len(shown) > 1
	if multi {
		runs := LegendGroup{Title: "run:"}
		for k, r := range shown {
			runs.Entries = append(runs.Entries, series(r.RunID, palette[k%len(palette)], k, false))
		}
		f.Legend = append(f.Legend, runs)
	}
	for _, tp := range trainingPanels {
		present := false
		for _, r := range shown {
			for _, s := range r.Steps {
				for _, m := range tp.metrics {
					_, ok := s.Metrics[m]
					present = present || ok
				}
			}
		}
		if !present {
			continue
		}
		p := newPanel(panelLetter(len(f.Panels))+tp.title, "training step", tp.ylabel)
		lo, hi := math.Inf(1), math.Inf(-1)
		maxStep := 1
		for k, r := range shown {
			for j, m := range tp.metrics {
				var e LegendEntry
				if multi {
					e = series(r.RunID+" "+tp.labels[j], palette[k%len(palette)], k, j == 1)
				} else {
					c := okBlue
					if j == 1 {
						c = okVermilion
					}
					e = series(tp.labels[j], c, j, false)
				}
				e.Glyph.Radius = 0 // many steps: lines only
				xs := make([]float64, len(r.Steps))
				ys := make([]float64, len(r.Steps))
				for i, s := range r.Steps {
					xs[i] = float64(s.Step + 1)
					ys[i] = math.NaN()
					v, ok := s.Metrics[m]
					if m == "separated_share" && s.Metrics["dead_share"] == 0 {
						// The trainer stores 0 when no group is dead: the
						// share is undefined there, not zero.
						ok = false
					}
					if ok {
						ys[i] = tp.scale * v
						lo, hi = math.Min(lo, ys[i]), math.Max(hi, ys[i])
					}
					maxStep = max(maxStep, s.Step+1)
				}
				if len(r.Steps) == 1 {
					e.Glyph = draw.GlyphStyle{Color: e.Line.Color, Radius: vg.Points(2.4), Shape: glyphs[j]}
				}
				addLine(p, xs, ys, e)
				f.Series = append(f.Series, tp.title+" / "+e.Label)
			}
		}
		if len(tp.metrics) > 1 && !multi {
			g := LegendGroup{Title: strings.TrimSpace(panelLetter(len(f.Panels))) + ":"}
			for j, l := range tp.labels {
				c := okBlue
				if j == 1 {
					c = okVermilion
				}
				g.Entries = append(g.Entries, LegendEntry{Label: l, Line: draw.LineStyle{Color: c, Width: vg.Points(1.6)}})
			}
			f.Legend = append(f.Legend, g)
		}
		p.X.Min, p.X.Max = 0.5, float64(maxStep)+0.5
		if maxStep <= 12 {
			p.X.Tick.Marker = intTicks(1, maxStep)
		}
		switch {
		case !math.IsNaN(tp.min) && !math.IsNaN(tp.max):
			p.Y.Min, p.Y.Max = tp.min-0.03*(tp.max-tp.min), tp.max+0.03*(tp.max-tp.min)
		case !math.IsNaN(tp.min):
			p.Y.Min, p.Y.Max = tp.min, headroom(hi)
		default:
			pad := 0.08 * math.Max(hi-lo, 0.1)
			p.Y.Min, p.Y.Max = lo-pad, hi+pad
		}
		f.Panels = append(f.Panels, p)
	}
	if len(f.Panels) == 0 {
		return nil, fmt.Errorf("report: training curves: %w: no known metric stored", ErrNoData)
	}
	f.Cols = min(3, len(f.Panels))
	if multi && len(f.Legend) > 1 {
		f.Legend = f.Legend[:1]
	}
	if multi {
		f.Legend = append(f.Legend, LegendGroup{Entries: []LegendEntry{
			{Label: "solid: first metric of a panel", Line: draw.LineStyle{Color: okBlack, Width: vg.Points(1.6)}},
			{Label: "dashed: second", Line: draw.LineStyle{Color: okBlack, Width: vg.Points(1.6), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}}}})
	}
	return f, nil
}

// trainingTable lists the stored metrics of the training figure per run
// and step.
func trainingTable(runs []TrainingRun) analysis.Table {
	t := analysis.Table{Title: "Stored per-step training metrics",
		Header: []string{"run", "step", "acc%", "R_out", "dead%", "separated|dead%", "|A_out|", "|λ·A_dense|", "KL", "entropy"}}
	get := func(s store.StepMetrics, name string, scale float64, prec int) string {
		v, ok := s.Metrics[name]
		if !ok || (name == "separated_share" && s.Metrics["dead_share"] == 0) {
			return "-"
		}
		return strconv.FormatFloat(scale*v, 'f', prec, 64)
	}
	for _, r := range runs {
		for _, s := range r.Steps {
			t.Rows = append(t.Rows, []string{r.RunID, strconv.Itoa(s.Step + 1), get(s, "accept", 100, 1), get(s, "mean_r_out", 1, 3),
				get(s, "dead_share", 100, 1), get(s, "separated_share", 100, 1), get(s, "mean_abs_a_out", 1, 3),
				get(s, "mean_abs_lambda_a_dense", 1, 3), get(s, "kl", 1, 4), get(s, "entropy", 1, 3)})
		}
	}
	t.Notes = []string{"steps are 1-based; dead and separated use the trainer's R_out (R_goal plus any strategy term) and package grpo's test of separation"}
	return t
}
