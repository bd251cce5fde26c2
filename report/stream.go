package report

import (
	"slices"
	"sort"
	"strconv"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/reward"
)

// summaryAcc gathers eval's Table 5/9 columns per persuader × persuadee ×
// set from streamed episodes.
type summaryAcc struct {
	o          Options
	pers, pees []string
	groups     map[eval.GroupKey]*eval.Accumulator
}

func newSummaryAcc(o Options) *summaryAcc {
	return &summaryAcc{o: o, groups: map[eval.GroupKey]*eval.Accumulator{}}
}

// setOf names an episode's set: o.SetOf's name, "all" when it has none
// (a run without a stored scenario list still gets a summary).
func (s *summaryAcc) setOf(id string) string {
	if s.o.SetOf != nil {
		if name := s.o.SetOf(id); name != "" {
			return name
		}
	}
	return "all"
}

func (s *summaryAcc) add(ep *episode.Episode) {
	if !slices.Contains(s.pers, ep.Persuader) {
		s.pers = append(s.pers, ep.Persuader)
	}
	if !slices.Contains(s.pees, ep.Persuadee) {
		s.pees = append(s.pees, ep.Persuadee)
	}
	k := eval.GroupKey{Persuader: ep.Persuader, Persuadee: ep.Persuadee, Set: s.setOf(ep.ScenarioID)}
	if s.groups[k] == nil {
		s.groups[k] = &eval.Accumulator{}
	}
	s.groups[k].Add(ep.Outcome())
}

// summaries returns eval's summary of every persuader × persuadee × set
// group, persuadees outermost (as eval prints), then persuaders in episode
// order, then sets in o.Sets order (others sorted); groups without
// episodes are left out.
func (s *summaryAcc) summaries() []eval.Summary {
	present := map[string]bool{}
	for k := range s.groups {
		present[k.Set] = true
	}
	var sets []string
	for _, name := range s.o.Sets {
		if present[name] && !slices.Contains(sets, name) {
			sets = append(sets, name)
		}
	}
	var rest []string
	for name := range present {
		if !slices.Contains(sets, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	sets = append(sets, rest...)
	var out []eval.Summary
	for _, pee := range s.pees {
		for _, per := range s.pers {
			for _, set := range sets {
				if a := s.groups[eval.GroupKey{Persuader: per, Persuadee: pee, Set: set}]; a != nil {
					out = append(out, a.Summary(per, pee, set))
				}
			}
		}
	}
	return out
}

// topTwoAcc holds one arm's fully accepted episodes' top-two shares.
type topTwoAcc struct {
	accepted int
	shares   []float64
}

// topTwoTable summarises TraceOf's top-two share over the fully accepted
// episodes of each arm (the stream's scored arms, in order): how many have
// a dense signal, and the mean, median and range of the share.
func topTwoTable(st *analysis.Stream, top map[analysis.Arm]*topTwoAcc) analysis.Table {
	t := analysis.Table{Title: "Share of Σ|r_dense| carried by the two largest turns, fully accepted episodes",
		Header: []string{"persuader", "accepted", "with dense", "mean%", "median%", "min%", "max%"},
		Notes:  []string{"with dense: accepted episodes whose Σ|r_dense| > 0 (the share is undefined otherwise)"}}
	arms, labels := st.Arms()
	for i, a := range arms {
		acc := top[a]
		if acc == nil {
			acc = &topTwoAcc{}
		}
		shares := acc.shares
		row := []string{labels[i], strconv.Itoa(acc.accepted), strconv.Itoa(len(shares)), "-", "-", "-", "-"}
		if len(shares) > 0 {
			slices.Sort(shares)
			sum := 0.0
			for _, x := range shares {
				sum += x
			}
			n := len(shares)
			med := shares[n/2]
			if n%2 == 0 {
				med = (shares[n/2-1] + shares[n/2]) / 2
			}
			row = []string{labels[i], strconv.Itoa(acc.accepted), strconv.Itoa(n), pct(sum / float64(n)), pct(med), pct(shares[0]), pct(shares[n-1])}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// advantageAcc computes Advantages from the groups analysis.Stream closes
// (StreamOptions.Group), in the same order and with the same sums.
type advantageAcc struct {
	outcome func(*episode.Episode) float64
	cfg     grpo.Config
	points  map[analysis.Arm]map[int]*grpo.DeadTally
	err     error
}

func newAdvantageAcc(o analysis.GroupOptions, cfg grpo.Config) *advantageAcc {
	a := &advantageAcc{outcome: o.Outcome, cfg: cfg, points: map[analysis.Arm]map[int]*grpo.DeadTally{}}
	if a.outcome == nil {
		a.outcome = func(ep *episode.Episode) float64 { return ep.OutcomeReward(reward.DefaultStrategyWeight) }
	}
	return a
}

func (a *advantageAcc) add(arm analysis.Arm, step int, g []*episode.Episode) {
	if a.points[arm] == nil {
		a.points[arm] = map[int]*grpo.DeadTally{}
	}
	p := a.points[arm][step]
	if p == nil {
		p = &grpo.DeadTally{}
		a.points[arm][step] = p
	}
	if len(g) < 2 || a.err != nil {
		return
	}
	rOut, dense := grpo.Inputs(g, a.outcome)
	_, st, err := grpo.Analyze(rOut, dense, a.cfg)
	if err != nil {
		a.err = err
		return
	}
	turns := 0
	for _, ep := range g {
		turns += len(ep.Turns)
	}
	p.Add(st, turns)
}

// terms returns Figure 7(c)'s data for arms (with their labels), as
// Advantages gives it.
func (a *advantageAcc) terms(arms []analysis.Arm, labels []string) AdvantageTerms {
	out := AdvantageTerms{Lambda: a.cfg.Lambda}
	for i, arm := range arms {
		var steps []int
		for s := range a.points[arm] {
			steps = append(steps, s)
		}
		slices.Sort(steps)
		var all grpo.DeadTally
		for _, s := range steps {
			c := *a.points[arm][s]
			all.Merge(c)
			if c.Groups > 0 {
				out.Points = append(out.Points, advantagePoint(arm, labels[i], s, c))
			}
		}
		if all.Groups > 0 {
			out.Overall = append(out.Overall, advantagePoint(arm, labels[i], -1, all))
		}
	}
	return out
}

// advantagePoint is the point of arm a (labelled label) at step (-1:
// all steps) with c's groups, turns and mean terms.
func advantagePoint(a analysis.Arm, label string, step int, c grpo.DeadTally) AdvantagePoint {
	return AdvantagePoint{Arm: a, Label: label, Step: step, Groups: c.Groups, Turns: c.Turns,
		MeanAbsOut: c.MeanAbsOut(), MeanAbsDense: c.MeanAbsDense()}
}
