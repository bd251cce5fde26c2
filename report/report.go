// Package report turns stored runs into figures and a self-contained HTML
// report: the Probe-RPO paper's Figures 5-7 and a terminal-state
// bar chart drawn with gonum/plot as SVG and PNG, and an index.html that
// holds the run metadata, the Table 5/9 summary, Tables 6-9, the figures
// (inline SVG) and the paired comparison of every persuader against a
// baseline. The numbers
// come from packages analysis and eval; this package only lays them out.
// The report loads nothing from the network, and the same episodes and
// options give the same bytes.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/internal/tablefmt"
	"github.com/persuarena/persuarena/stats"
	"github.com/persuarena/persuarena/store"
	"github.com/persuarena/persuarena/view"
)

// pct and num are the tables' number formats (package tablefmt, shared by
// eval, analysis and report).
var pct, num = tablefmt.Pct, tablefmt.Num

// RunInfo is one run's metadata as the report shows it (from store.Run
// and the run's episode count).
type RunInfo struct {
	ID, Kind, Status, Version string
	Seed                      uint64
	CreatedAt                 time.Time
	// Config is the run's stored configuration JSON; keys that name a
	// credential (store.ConfigSecrets) are shown as "[redacted]".
	Config json.RawMessage
	// Episodes counts the run's stored episodes, Failed the failed ones.
	Episodes, Failed int
}

// Options configures Build.
type Options struct {
	// Title heads the report; empty means "PersuArena report".
	Title string
	// Runs are the runs whose episodes are reported, in order.
	Runs []RunInfo
	// SetOf names the scenario set of a scenario id for the Table 5/9
	// summary; nil (or an empty name) puts every episode in set "all".
	SetOf func(scenarioID string) string
	// Sets orders the set names in the summary; sets not listed follow,
	// sorted.
	Sets []string
	// Groups gives Figure 7 the training step and outcome of each rollout
	// (analysis.GroupOptions); zero value: step 0 and R_goal.
	Groups analysis.GroupOptions
	// Training holds the stored per-step metrics of training runs
	// (store.DB.Metrics); runs with steps get the training-curves figure.
	Training []TrainingRun
	// GRPO is the advantage configuration for Figure 7(c); nil means
	// grpo.DefaultConfig() (λ = 0.5, as the Probe-RPO paper).
	GRPO *grpo.Config
	// CompareSeed and Resamples set the paired bootstrap of the comparison
	// section (analysis.CompareOptions); Resamples 0 means
	// analysis.DefaultResamples.
	CompareSeed uint64
	Resamples   int
	// Baseline is the persuader every other persuader is compared against
	// (paired, per persuadee); empty means the first persuader in episode
	// order. A name not among the report's persuaders is an error.
	Baseline string
	// ViewAddr, when set (host:port of a running persuarena view), links
	// each run ID and the Table 8 episode to its viewer page.
	ViewAddr string
	// Generator names what built the report (e.g. "persuarena v1.2
	// (abc123)"); Generated is an optional "generated at" line. Both are
	// left out when empty, so that by default two reports of the same
	// runs are byte-identical.
	Generator, Generated string
	// Progress, when set, is told the name of each step as it starts.
	Progress func(step string)
}

// Section is one table of the report with its anchor.
type Section struct {
	// ID is the HTML anchor, e.g. "table6".
	ID string
	// Heading is the section's heading; Intro a sentence under it.
	Heading, Intro string
	Table          analysis.Table
	// Figure, when set, names the figure (Figure.Name) whose data the
	// table holds; the HTML shows it collapsed under that figure.
	Figure string
	// Caption shows Table.Title above the table (where it says more than
	// the heading, e.g. which episode a trace shows).
	Caption bool
	// Link, when set, is the address of the section's episode in a
	// running viewer (Options.ViewAddr).
	Link string
}

// Report is everything the HTML report shows, built by Build.
type Report struct {
	Title                string
	Generator, Generated string
	Runs                 []RunInfo
	// Persuaders and Persuadees are the names present, in episode order.
	Persuaders, Persuadees []string
	// Episodes and Failed count the reported episodes.
	Episodes, Failed int
	// Summary holds eval.Summarize per persuader × persuadee × set.
	Summary []eval.Summary
	// Tables are the report's tables in order (summary, Tables 6-9,
	// figure data, comparisons).
	Tables []Section
	// Figures are the figures that have data, in order: terminal bars,
	// Figures 5, 6 and 7, training curves.
	Figures []*Figure
	// Skipped lists what could not be shown and why (e.g. Figure 7
	// without groups, Table 8 without an accepted episode).
	Skipped []string
	// Baseline is the persuader the comparisons are against (Options.Baseline
	// or the first persuader); empty with fewer than two persuaders.
	Baseline string
	// ViewAddr is Options.ViewAddr: run IDs link to a running viewer.
	ViewAddr string
	// Comparisons holds the paired comparisons (A = each other persuader,
	// B = Baseline) per persuadee, persuadees outermost, when at least two
	// persuaders are present.
	Comparisons []analysis.Comparison
}

// Source gives BuildStream the reported episodes without holding them.
type Source struct {
	// Each calls fn with every episode of the report, one at a time, in
	// the order analysis.Concat joins the runs' episodes (Build's eps
	// order), stopping at fn's first error and returning it. fn keeps at
	// most one Figure 7 group and the Table 8 candidate.
	Each func(fn func(*episode.Episode) error) error
	// Outcomes returns the outcomes of one arm (persuader as Each names
	// it), failed episodes included, and the run they come from; an empty
	// slice when the arm has no episodes. It is called only when the
	// report holds two or more persuaders (the paired comparisons).
	Outcomes func(persuader, persuadee string) (runID string, os []episode.Outcome, err error)
	// Ungrouped says that a Figure 7 group's rollouts may come apart
	// (analysis.StreamOptions.Ungrouped): SliceSource sets it; a store
	// source in store order does not need it.
	Ungrouped bool
}

// SliceSource is the Source of episodes held in memory.
func SliceSource(eps []*episode.Episode) Source {
	return Source{
		Each: func(fn func(*episode.Episode) error) error {
			for _, ep := range eps {
				if err := fn(ep); err != nil {
					return err
				}
			}
			return nil
		},
		Outcomes: func(per, pee string) (string, []episode.Outcome, error) {
			var run string
			var os []episode.Outcome
			for _, ep := range eps {
				if ep.Persuader == per && ep.Persuadee == pee {
					if len(os) == 0 {
						run = ep.RunID
					}
					os = append(os, ep.Outcome())
				}
			}
			return run, os, nil
		},
		Ungrouped: true,
	}
}

// Build computes every table and figure of the report over eps (the
// runs' episodes, as analysis.Concat joins them): BuildStream over
// SliceSource(eps).
//
// Errors: BuildStream's.
func Build(eps []*episode.Episode, o Options) (*Report, error) {
	return BuildStream(SliceSource(eps), o)
}

// BuildStream computes every table and figure of the report from src in
// one pass over its episodes (analysis.Stream and eval.Accumulator: memory
// for counts and sums, one Figure 7 group and one episode, plus 8 bytes
// per fully accepted episode for the top-two share's median), then, for
// exactly two persuaders, their outcomes per persuadee. The result equals
// what the in-memory computation over the same episodes gave, byte for
// byte once written.
//
// Errors: src holds no episodes; src's errors; episodes not grouped for
// Figure 7 (analysis.Stream); a figure fails to build for a reason other
// than missing data (ErrNoData); the GRPO configuration is invalid.
func BuildStream(src Source, o Options) (*Report, error) {
	step := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	r := &Report{Title: o.Title, Generator: o.Generator, Generated: o.Generated, Runs: o.Runs, ViewAddr: o.ViewAddr}
	if r.Title == "" {
		r.Title = "PersuArena report"
	}
	cfg := grpo.DefaultConfig()
	if o.GRPO != nil {
		cfg = *o.GRPO
	}
	step("summary (Tables 5 and 9)") // one pass computes every table
	sum := newSummaryAcc(o)
	adv := newAdvantageAcc(o.Groups, cfg)
	top := map[analysis.Arm]*topTwoAcc{}
	st := analysis.NewStream(analysis.StreamOptions{Groups: o.Groups, Group: adv.add, Ungrouped: src.Ungrouped})
	err := src.Each(func(ep *episode.Episode) error {
		r.Episodes++
		if !slices.Contains(r.Persuaders, ep.Persuader) {
			r.Persuaders = append(r.Persuaders, ep.Persuader)
		}
		if !slices.Contains(r.Persuadees, ep.Persuadee) {
			r.Persuadees = append(r.Persuadees, ep.Persuadee)
		}
		sum.add(ep)
		if ep.Terminal == decision.TermAccept {
			a := analysis.ArmOf(ep)
			if top[a] == nil {
				top[a] = &topTwoAcc{}
			}
			top[a].accepted++
			if s := analysis.TraceOf(ep).TopTwoShare; !math.IsNaN(s) {
				top[a].shares = append(top[a].shares, s)
			}
		}
		return st.Add(ep)
	})
	if err != nil {
		return nil, err
	}
	if r.Episodes == 0 {
		return nil, errors.New("report: no episodes")
	}
	st.Flush()
	if adv.err != nil {
		return nil, adv.err
	}
	r.Failed = st.Failed()
	r.Summary = sum.summaries()
	largest, largestErr := st.LargestDenseAccepted()
	if err := r.assemble(o, step, analyses{
		byProfile: st.AcceptanceByProfile, grid: st.AcceptanceGrid,
		largest: largest, largestErr: largestErr, topTwo: func() analysis.Table { return topTwoTable(st, top) },
		conversion: st.ConversionOf, acts: st.ActsByTurn, trajectories: st.BeliefTrajectories, dead: st.DeadGroups,
		terms: func() AdvantageTerms { return adv.terms(st.Arms()) },
	}); err != nil {
		return nil, err
	}
	if err := r.compare(o, src.Outcomes, step); err != nil {
		return nil, err
	}
	return r, nil
}

// analyses are what a report's sections are made of, however they were
// computed: in one streamed pass (BuildStream), or over a slice in the
// tests' reference. Each is computed when assemble asks for it, in the
// order of the sections.
type analyses struct {
	byProfile    func() analysis.ProfileAcceptance
	grid         func() analysis.Grid
	largest      *episode.Episode // Table 8's episode, unless largestErr
	largestErr   error
	topTwo       func() analysis.Table
	conversion   func() analysis.Conversion
	acts         func() analysis.ActCurves
	trajectories func() analysis.Trajectories
	dead         func() analysis.DeadGroupStats
	terms        func() AdvantageTerms
}

// assemble appends r's sections and figures after its summary (r.Summary
// set), in the report's order, with their headings and intros: the one
// place they are written. Errors: a figure that fails for a reason other
// than missing data (ErrNoData).
func (r *Report) assemble(o Options, step func(string), a analyses) error {
	r.Tables = append(r.Tables, Section{ID: "summary", Heading: "Outcomes per persuader, persuadee and set (Probe-RPO paper, Tables 5 and 9)",
		Intro: "Terminal shares, mean R_goal and turns (Probe-RPO paper, Table 5) and final-belief conversion (Table 9), per scenario set.",
		Table: summaryTable(r.Summary)})
	r.Tables = append(r.Tables, terminalCISection(r.Summary))
	fig := func(f *Figure, err error) error {
		if errors.Is(err, ErrNoData) {
			r.Skipped = append(r.Skipped, strings.TrimPrefix(err.Error(), "report: "))
			return nil
		}
		if err != nil {
			return err
		}
		r.Figures = append(r.Figures, f)
		return nil
	}
	step("terminal bars")
	if err := fig(TerminalBars(r.Summary)); err != nil {
		return err
	}

	step("Table 6")
	r.Tables = append(r.Tables, Section{ID: "table6", Heading: "Full acceptance by resistance type and family (Probe-RPO paper, Table 6)",
		Intro: "Full-acceptance rate per hidden resistance type (EB, IT, AR, AA) and domain family, with n per cell.",
		Table: a.byProfile().Table()})
	step("Table 7")
	r.Tables = append(r.Tables, Section{ID: "table7", Heading: "Persuader × persuadee grid (Probe-RPO paper, Table 7)",
		Intro: "Full-acceptance rate per persuader (rows) and persuadee (columns).",
		Table: a.grid().Table()})
	step("Table 8")
	if a.largestErr != nil {
		r.Skipped = append(r.Skipped, "table 8: "+a.largestErr.Error())
	} else {
		ep := a.largest
		tr := analysis.TraceOf(ep)
		intro := "The fully accepted episode with the largest Σ|r_dense| (earliest on a tie): per turn, the tagged acts, each probe state s = 2p − 1, belief B_t, dense reward r_t and the persuadee's decision."
		if len(o.Runs) > 1 {
			intro += " Run " + ep.RunID + "."
		}
		if !math.IsNaN(tr.TopTwoShare) {
			intro += fmt.Sprintf(" Its two largest turns carry %s%% of Σ|r_dense| (the Probe-RPO paper's example: 95.9%%).", pct(tr.TopTwoShare))
		}
		sec := Section{ID: "table8", Heading: "Probe trace of one episode (Probe-RPO paper, Table 8)", Intro: intro, Table: tr.Table(), Caption: true}
		if o.ViewAddr != "" {
			sec.Link = view.EpisodeURL(o.ViewAddr, ep.RunID, episode.KeyOf(ep))
		}
		r.Tables = append(r.Tables, sec)
		r.Tables = append(r.Tables, Section{ID: "table8-shares", Heading: "Top-two share over accepted episodes",
			Intro: "How concentrated the dense signal is in every fully accepted episode, not only the one traced above: the share of Σ|r_dense| carried by the episode's two largest turns.",
			Table: a.topTwo()})
	}
	step("Table 9")
	r.Tables = append(r.Tables, Section{ID: "table9", Heading: "Final belief and conversion (Probe-RPO paper, Table 9)",
		Intro: "Mean final belief B_T, share moved (B_T > 0.5) and share of moved episodes closed, pooled over sets.",
		Table: a.conversion().Table()})

	step("Figure 5")
	acts := a.acts()
	if err := fig(Figure5(acts)); err != nil {
		return err
	}
	step("Figure 6")
	traj := a.trajectories()
	if err := fig(Figure6(traj)); err != nil {
		return err
	}
	step("Figure 7")
	dead := a.dead()
	terms := a.terms()
	if err := fig(Figure7(dead, terms)); err != nil {
		return err
	}
	hasSteps := false
	for _, tr := range o.Training {
		hasSteps = hasSteps || len(tr.Steps) > 0
	}
	if hasSteps {
		step("training curves")
		if err := fig(TrainingFigure(o.Training)); err != nil {
			return err
		}
		r.Tables = append(r.Tables, Section{ID: "training-data", Heading: "Training data", Table: trainingTable(o.Training), Figure: "training", Caption: true})
	}
	r.Tables = append(r.Tables,
		Section{ID: "figure5-data", Heading: "Figure 5 data", Table: acts.Table(), Figure: "figure5", Caption: true},
		Section{ID: "figure6-data", Heading: "Figure 6 data", Table: traj.Table(), Figure: "figure6", Caption: true},
		Section{ID: "figure7-data", Heading: "Figure 7 data", Table: dead.Table(), Figure: "figure7", Caption: true})
	if len(terms.Overall) > 0 {
		r.Tables = append(r.Tables, Section{ID: "figure7c-data", Heading: "Figure 7(c) data", Table: terms.Table(), Figure: "figure7", Caption: true})
	}

	return nil
}

// compare adds the paired comparison of every persuader against the
// baseline (o.Baseline, else the first persuader), per persuadee, with
// outcomes from outcomes (Source.Outcomes). Fewer than two persuaders add
// nothing. Errors: o.Baseline names no persuader of r; outcomes' errors.
func (r *Report) compare(o Options, outcomes func(per, pee string) (string, []episode.Outcome, error), step func(string)) error {
	if len(r.Persuaders) < 2 {
		return nil
	}
	base := o.Baseline
	if base == "" {
		base = r.Persuaders[0]
	}
	if !slices.Contains(r.Persuaders, base) {
		return fmt.Errorf("report: baseline %q is not a persuader of the report (have %s)", base, strings.Join(r.Persuaders, ", "))
	}
	r.Baseline = base
	step("paired comparisons against " + base)
	many := len(r.Persuadees) > 1 || len(r.Persuaders) > 2
	for _, pee := range r.Persuadees {
		runB, b, err := outcomes(base, pee)
		if err != nil {
			return err
		}
		for _, per := range r.Persuaders {
			if per == base {
				continue
			}
			runA, a, err := outcomes(per, pee)
			if err != nil {
				return err
			}
			if len(a) == 0 || len(b) == 0 {
				r.Skipped = append(r.Skipped, fmt.Sprintf("comparison %s − %s against %s: only one of them played it", per, base, pee))
				continue
			}
			// Choice: compare on the shared (scenario, rollout) keys
			// rather than refuse as persuarena compare does: a report
			// should show what it can, and the table says how many keys
			// were left out.
			c, err := analysis.CompareOutcomes(runA, a, runB, b, analysis.CompareOptions{Intersection: true, Seed: o.CompareSeed, Resamples: o.Resamples})
			if err != nil {
				r.Skipped = append(r.Skipped, fmt.Sprintf("comparison %s − %s against %s: %v", per, base, pee, err))
				continue
			}
			r.Comparisons = append(r.Comparisons, c)
			id := "compare"
			if many {
				id += "-" + strconv.Itoa(len(r.Comparisons))
			}
			r.Tables = append(r.Tables, Section{ID: id,
				Heading: fmt.Sprintf("Paired comparison: %s − %s against %s (Probe-RPO paper, Table 5)", per, base, pee),
				Intro:   "Episodes paired on (scenario, rollout): Δ full acceptance, win/loss and McNemar's exact test, the Wilcoxon signed-rank test on R_goal, and paired bootstrap intervals (Probe-RPO paper, Table 5). B is the baseline " + base + ".",
				Table:   c.Table()})
		}
	}
	return nil
}

// terminalCISection is the summary's terminal shares with 95% Wilson score
// intervals (stats.Wilson), one row per persuader × persuadee × set.
func terminalCISection(ss []eval.Summary) Section {
	t := analysis.Table{Title: "Terminal shares (%) with 95% Wilson intervals",
		Header: []string{"persuader", "persuadee", "set", "n", "accept", "conditional", "pending", "reject", "truncated"},
		Notes:  []string{"share [lo, hi] over scored episodes; Wilson score interval at z = 1.96 (Wilson 1927; Newcombe 1998, method 3)"}}
	ci := func(share float64, n int) string {
		if n == 0 || share != share {
			return "-"
		}
		k := int(math.Round(share * float64(n)))
		lo, hi := stats.Wilson(k, n, stats.Z95)
		return pct(share) + " [" + pct(lo) + ", " + pct(hi) + "]"
	}
	for _, s := range ss {
		t.Rows = append(t.Rows, []string{s.Persuader, s.Persuadee, s.Set, strconv.Itoa(s.N),
			ci(s.Accept, s.N), ci(s.Conditional, s.N), ci(s.Pending, s.N), ci(s.Reject, s.N), ci(s.Truncated, s.N)})
	}
	return Section{ID: "terminal-ci", Heading: "Terminal shares with 95% confidence intervals",
		Intro: "The summary's terminal shares with Wilson score intervals, which stay inside [0, 1] and keep their coverage for small n and shares near 0 or 1.",
		Table: t}
}

// summaryTable renders eval summaries with eval's columns.
func summaryTable(ss []eval.Summary) analysis.Table {
	t := analysis.Table{Title: "Outcomes per persuader, persuadee and set (Probe-RPO paper, Tables 5 and 9)",
		Header: []string{"persuader", "persuadee", "set", "n", "acc%", "cond%", "pend%", "rej%", "R_goal", "turns", "B_T", "moved%", "closed|moved%", "failed"},
		Notes:  []string{"shares over scored episodes; failed episodes are counted apart; B_T: mean final belief; moved: B_T > 0.5; closed|moved: moved episodes ending in full acceptance"}}
	trunc := false
	for _, s := range ss {
		t.Rows = append(t.Rows, []string{s.Persuader, s.Persuadee, s.Set, strconv.Itoa(s.N), pct(s.Accept), pct(s.Conditional),
			pct(s.Pending), pct(s.Reject), num(s.MeanRGoal, 2, true), num(s.MeanTurns, 1, false),
			num(s.MeanBT, 2, false), pct(s.Moved), pct(s.ClosedGivenMoved), strconv.Itoa(s.Failed)})
		trunc = trunc || s.Truncated > 0
	}
	if trunc {
		t.Notes = append(t.Notes, "some episodes were truncated (context window exceeded): they score as pending but are not in pend%")
	}
	return t
}

// Table renders Figure 7(c)'s data: one row per arm and step.
func (a AdvantageTerms) Table() analysis.Table {
	t := analysis.Table{Title: "Mean absolute advantage terms (Probe-RPO paper, Figure 7c)",
		Header: []string{"persuader", "step", "groups", "turns", "|A_out|", "|λ·A_dense|"},
		Notes:  []string{fmt.Sprintf("λ = %g; means over every rollout turn of the groups (package grpo, Probe-RPO paper, Eq. 3)", a.Lambda)}}
	for _, o := range a.Overall {
		n := 0
		for _, p := range a.Points {
			if p.Arm == o.Arm {
				t.Rows = append(t.Rows, []string{p.Label, strconv.Itoa(p.Step), strconv.Itoa(p.Groups), strconv.Itoa(p.Turns),
					num(p.MeanAbsOut, 3, false), num(p.MeanAbsDense, 3, false)})
				n++
			}
		}
		if n > 1 {
			t.Rows = append(t.Rows, []string{o.Label, "all", strconv.Itoa(o.Groups), strconv.Itoa(o.Turns),
				num(o.MeanAbsOut, 3, false), num(o.MeanAbsDense, 3, false)})
		}
	}
	return t
}

// redactedConfig returns the run config pretty-printed, with every
// credential-like key (store.ConfigSecrets) replaced by "[redacted]";
// invalid JSON is shown as stored.
func redactedConfig(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	red, secrets, err := store.RedactConfig(raw)
	switch {
	case err != nil:
		return string(raw)
	case len(secrets) == 0:
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") != nil {
			return string(raw)
		}
		return b.String()
	}
	return string(red)
}
