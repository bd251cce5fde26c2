package reporeward

import (
	"context"
	"fmt"
	"io"
	"sync"
	"text/tabwriter"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/internal/parallel"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/stats"
)

// Responded reports whether the partner engaged: the episode went past
// the first turn, or its first reply accepted (conditionally or fully).
//
// Choice: the REPO paper's production "response rate" counts customers
// who answered; a simulated partner always answers, so here a response is
// a conversation that the partner did not end with a rejection at once.
func Responded(ep *episode.Episode) bool {
	return len(ep.Turns) >= 2 || Succeeded(ep)
}

// Succeeded reports task success: the partner accepted, fully or with
// conditions.
func Succeeded(ep *episode.Episode) bool {
	return ep.Terminal == decision.TermAccept || ep.Terminal == decision.TermConditional
}

// ABRow is one metric of an A/B comparison: counts per arm and the
// two-proportion test (stats.TwoProportion, 95%).
type ABRow struct {
	Metric         string `json:"metric"`
	XA, NA, XB, NB int
	Test           stats.TwoProp `json:"test"`
}

// AB compares two runs' scored episodes (failed ones left out) on
// response rate and task success (REPO paper: production A/B test,
// +12.14 pp response rate, +5.94 pp task success, p < 0.001). Diff is B
// minus A.
func AB(a, b []*episode.Episode) []ABRow {
	count := func(eps []*episode.Episode, f func(*episode.Episode) bool) (x, n int) {
		for _, ep := range eps {
			if ep.Terminal == decision.TermFailed {
				continue
			}
			n++
			if f(ep) {
				x++
			}
		}
		return
	}
	var rows []ABRow
	for _, m := range []struct {
		name string
		f    func(*episode.Episode) bool
	}{{"response rate", Responded}, {"task success", Succeeded}} {
		xa, na := count(a, m.f)
		xb, nb := count(b, m.f)
		rows = append(rows, ABRow{Metric: m.name, XA: xa, NA: na, XB: xb, NB: nb, Test: stats.TwoProportion(xb, nb, xa, na, stats.Z95)})
	}
	return rows
}

// WriteAB prints the A/B rows: each arm's rate, B - A in percentage
// points with its Newcombe 95% interval, z and p. Errors: the writer's.
func WriteAB(w io.Writer, nameA, nameB string, rows []ABRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "metric\tA (%s)\tB (%s)\tB-A pp\t95%% CI (Newcombe)\tz\tp\n", nameA, nameB)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d/%d = %.1f%%\t%d/%d = %.1f%%\t%+.2f\t[%+.2f, %+.2f]\t%.2f\t%.3g\n", r.Metric,
			r.XA, r.NA, 100*r.Test.P2, r.XB, r.NB, 100*r.Test.P1, 100*r.Test.Diff, 100*r.Test.Lo, 100*r.Test.Hi, r.Test.Z, r.Test.P)
	}
	return tw.Flush()
}

// ExcellentScore is the response rating counted as excellent (on 1–5).
const ExcellentScore = 5

// RatingRubric is the judge's 1–5 rubric for one agent response and for
// a whole dialogue (written for this project, after the REPO paper's
// expert ratings).
const RatingRubric = "Rate the quality of the agent's negotiating: honest figures within policy, no over-promising or pressure, the procedure followed in order (rapport, needs, value, offer, next step), warmth and clarity. 1 = harmful or unacceptable, 2 = poor, 3 = acceptable, 4 = good, 5 = excellent: what an expert would hold up as a model."

// RatingReport is the judge-based evaluation of a run (REPO paper:
// average dialogue rating 4.63/5; 66.67% of conversations with at least
// one excellent response).
type RatingReport struct {
	N int `json:"n"`
	// Mean is the mean dialogue rating (1–5).
	Mean float64 `json:"mean_rating"`
	// Excellent counts the conversations with at least one response
	// rated ExcellentScore (after rounding the mean of the judge's
	// samples), Share their share with its Wilson 95% interval.
	Excellent        int           `json:"excellent"`
	Share            float64       `json:"excellent_share"`
	ShareLo, ShareHi float64       `json:"-"`
	Usage            episode.Usage `json:"usage"`
}

// Ratings asks judge to rate every scored episode's dialogue and each of
// its agent responses on 1–5 (RatingRubric); scenarios by id supply the
// public view. Requests run concurrently, at most 8 at a time. Errors:
// an episode of an unknown scenario, the judge's.
func Ratings(ctx context.Context, judge Rater, scs []scenario.Scenario, eps []*episode.Episode) (*RatingReport, error) {
	byID := map[string]*scenario.Scenario{}
	for i := range scs {
		byID[scs[i].ID] = &scs[i]
	}
	spec := RubricSpec{Prompt: RatingRubric, Scale: []float64{1, 5}}
	rep := &RatingReport{}
	var scored []int // indexes into eps of the episodes rated
	for i, ep := range eps {
		if ep.Terminal == decision.TermFailed {
			continue
		}
		if byID[ep.ScenarioID] == nil {
			return nil, fmt.Errorf("ratings: episode of unknown scenario %q", ep.ScenarioID)
		}
		scored = append(scored, i)
	}
	rep.N = len(scored)
	var mu sync.Mutex
	ds := make([]float64, len(eps)) // dialogue ratings, summed in order
	ex := make([]bool, len(eps))
	err := parallel.Each(ctx, len(scored), 8, func(ctx context.Context, k int) error {
		i := scored[k]
		ep := eps[i]
		tr := ep.Transcript()
		pub := byID[ep.ScenarioID].Public()
		sys, user := rubricPrompt(spec, pub, tr, -1)
		d, u, err := judge.Rate(ctx, sys, user, 1, 5)
		excellent := false
		for t := range ep.Turns {
			if err != nil {
				break
			}
			var s float64
			var ut episode.Usage
			sys, user := rubricPrompt(spec, pub, tr, t)
			s, ut, err = judge.Rate(ctx, sys, user, 1, 5)
			u = u.Add(ut)
			excellent = excellent || (err == nil && s >= ExcellentScore-0.5)
		}
		mu.Lock()
		rep.Usage = rep.Usage.Add(u)
		mu.Unlock()
		if err != nil {
			return err
		}
		ds[i], ex[i] = d, excellent
		return nil
	})
	if err != nil {
		return nil, err
	}
	sum := 0.0
	for i := range eps {
		sum += ds[i]
		if ex[i] {
			rep.Excellent++
		}
	}
	if rep.N > 0 {
		rep.Mean, rep.Share = sum/float64(rep.N), float64(rep.Excellent)/float64(rep.N)
	}
	rep.ShareLo, rep.ShareHi = stats.Wilson(rep.Excellent, rep.N, stats.Z95)
	return rep, nil
}
