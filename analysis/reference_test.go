package analysis

// The slice implementations the analyses had before they ran on Stream,
// kept as the independent reference TestStreamEqualsSlices compares
// Stream with (the exported slice functions now delegate to Stream).

import (
	"math"
	"slices"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/reward"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// refAcceptanceByProfile is the slice implementation AcceptanceByProfile had before it ran on
// Stream: the reference TestStreamEqualsSlices holds Stream to.
func refAcceptanceByProfile(eps []*episode.Episode) ProfileAcceptance {
	eps, failed := Scored(eps)
	arms, labels, groups := byArm(eps)
	out := ProfileAcceptance{Arms: arms, Labels: labels, Failed: failed}
	row := func(dim, value string, match func(*episode.Episode) bool) {
		r := ProfileRow{Dimension: dim, Value: value}
		for _, g := range groups {
			var sub []*episode.Episode
			for _, ep := range g {
				if match(ep) {
					sub = append(sub, ep)
				}
			}
			r.Cells = append(r.Cells, acceptRate(sub))
		}
		out.Rows = append(out.Rows, r)
	}
	row("all", "all", func(*episode.Episode) bool { return true })
	dims := []struct {
		name  string
		known []string
		get   func(*episode.Episode) string
	}{
		{"resistance", strs(scenario.Resistances), func(ep *episode.Episode) string { return string(ep.Resistance) }},
		{"family", strs(scenario.Families), func(ep *episode.Episode) string { return string(ep.Family) }},
	}
	for _, d := range dims {
		present := map[string]bool{}
		for _, ep := range eps {
			present[label(d.get(ep))] = true
		}
		var values []string
		for _, v := range d.known {
			if present[v] {
				values = append(values, v)
				delete(present, v)
			}
		}
		var rest []string
		for v := range present {
			rest = append(rest, v)
		}
		slices.Sort(rest)
		for _, v := range append(values, rest...) {
			row(d.name, v, func(ep *episode.Episode) bool { return label(d.get(ep)) == v })
		}
	}
	return out
}

// refAcceptanceGrid is the slice implementation AcceptanceGrid had before it ran on
// Stream: the reference TestStreamEqualsSlices holds Stream to.
func refAcceptanceGrid(eps []*episode.Episode) Grid {
	eps, failed := Scored(eps)
	g := Grid{Failed: failed}
	for _, ep := range eps {
		if !slices.Contains(g.Persuaders, ep.Persuader) {
			g.Persuaders = append(g.Persuaders, ep.Persuader)
		}
		if !slices.Contains(g.Persuadees, ep.Persuadee) {
			g.Persuadees = append(g.Persuadees, ep.Persuadee)
		}
	}
	g.Cells = make([][]Rate, len(g.Persuaders))
	for i, per := range g.Persuaders {
		for _, pee := range g.Persuadees {
			var sub []*episode.Episode
			for _, ep := range eps {
				if ep.Persuader == per && ep.Persuadee == pee {
					sub = append(sub, ep)
				}
			}
			g.Cells[i] = append(g.Cells[i], acceptRate(sub))
		}
	}
	return g
}

// refConversionOf is the slice implementation ConversionOf had before it ran on
// Stream: the reference TestStreamEqualsSlices holds Stream to.
func refConversionOf(eps []*episode.Episode) Conversion {
	arms, _, groups := byArm(eps)
	c := Conversion{Arms: arms}
	for i, a := range arms {
		c.Rows = append(c.Rows, eval.Summarize(a.Persuader, a.Persuadee, "", groups[i]))
	}
	return c
}

// refActsByTurn is the slice implementation ActsByTurn had before it ran on
// Stream: the reference TestStreamEqualsSlices holds Stream to.
func refActsByTurn(eps []*episode.Episode) ActCurves {
	eps, failed := Scored(eps)
	c := ActCurves{Failed: failed}
	for _, a := range tagger.Acts {
		c.Acts = append(c.Acts, a.String())
	}
	arms, labels, groups := byArm(eps)
	for i, a := range arms {
		s := ActSeries{Arm: a, Label: labels[i]}
		byT := map[int]*ActPoint{}
		tmax := 0
		for _, ep := range groups[i] {
			for _, t := range ep.Turns {
				p := byT[t.T]
				if p == nil {
					p = &ActPoint{T: t.T, Count: make([]int, len(tagger.Acts))}
					byT[t.T] = p
				}
				p.N++
				var set tagger.ActSet
				for _, name := range t.Acts {
					if act, ok := tagger.ParseAct(name); ok {
						set = set.With(act)
					}
				}
				for k, act := range tagger.Acts {
					if set.Has(act) {
						p.Count[k]++
					}
				}
				tmax = max(tmax, t.T)
			}
		}
		for t := 1; t <= tmax; t++ {
			if p := byT[t]; p != nil {
				p.Share = make([]float64, len(p.Count))
				for k, n := range p.Count {
					p.Share[k] = float64(n) / float64(p.N)
				}
				s.Points = append(s.Points, *p)
			}
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// refBeliefTrajectories is the slice implementation BeliefTrajectories had before it ran on
// Stream: the reference TestStreamEqualsSlices holds Stream to.
func refBeliefTrajectories(eps []*episode.Episode) Trajectories {
	eps, failed := Scored(eps)
	tr := Trajectories{Failed: failed}
	for _, ep := range eps {
		for _, id := range probeIDs(ep) {
			if !slices.Contains(tr.Probes, id) {
				tr.Probes = append(tr.Probes, id)
			}
		}
	}
	for _, term := range append(slices.Clone(decision.Terminals), decision.TermTruncated) {
		var sub []*episode.Episode
		for _, ep := range eps {
			if ep.Terminal == term {
				sub = append(sub, ep)
			}
		}
		if len(sub) > 0 {
			tr.ByTerminal = append(tr.ByTerminal, trajectory(string(term), sub, tr.Probes))
			tr.ByTerminal[len(tr.ByTerminal)-1].Terminal = term
		}
	}
	arms, labels, groups := byArm(eps)
	for i, a := range arms {
		c := trajectory(labels[i], groups[i], tr.Probes)
		c.Arm = a
		tr.ByArm = append(tr.ByArm, c)
	}
	return tr
}

// refDeadGroups is the slice implementation DeadGroups had before it ran on
// Stream: the reference TestStreamEqualsSlices holds Stream to.
func refDeadGroups(eps []*episode.Episode, o GroupOptions) DeadGroupStats {
	eps, failed := Scored(eps)
	st := DeadGroupStats{Failed: failed}
	step := o.Step
	if step == nil {
		step = func(*episode.Episode) int { return 0 }
	}
	outcome := o.Outcome
	if outcome == nil {
		outcome = func(ep *episode.Episode) float64 { return ep.OutcomeReward(reward.DefaultStrategyWeight) }
	}
	cfg := grpo.DefaultConfig()
	if o.Config != nil {
		cfg = *o.Config
	}
	type key struct {
		arm      Arm
		step     int
		scenario string
	}
	groups := map[key][]*episode.Episode{}
	var order []key
	for _, ep := range eps {
		k := key{ArmOf(ep), step(ep), ep.ScenarioID}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ep)
	}
	arms, labels := Arms(eps)
	for i, a := range arms {
		var steps []int
		for _, k := range order {
			if k.arm == a && !slices.Contains(steps, k.step) {
				steps = append(steps, k.step)
			}
		}
		slices.Sort(steps)
		all := DeadGroupPoint{Arm: a, Label: labels[i], Step: -1}
		for _, s := range steps {
			p := DeadGroupPoint{Arm: a, Label: labels[i], Step: s}
			for _, k := range order {
				if k.arm != a || k.step != s {
					continue
				}
				g := groups[k]
				if len(g) < 2 {
					st.Singletons++
					continue
				}
				p.Groups++
				// Dead and separated are grpo's definitions (one function
				// each, shared with the trainer and the export).
				gs := groupStats(g, outcome, cfg)
				if gs.Dead {
					p.Dead++
					if gs.Separated {
						p.Separated++
					}
					if gs.Mixed {
						p.Mixed++
						if gs.ShortestTop {
							p.ShortestTop++
						}
					}
					if !math.IsNaN(gs.LengthCorr) {
						p.corrSum += gs.LengthCorr
						p.corrN++
					}
				}
			}
			all.Groups += p.Groups
			all.Dead += p.Dead
			all.Separated += p.Separated
			all.Mixed += p.Mixed
			all.ShortestTop += p.ShortestTop
			all.corrSum += p.corrSum
			all.corrN += p.corrN
			st.Points = append(st.Points, p.withShares())
		}
		st.Overall = append(st.Overall, all.withShares())
	}
	return st
}

// byArm groups eps by arm, in the order of arms.
func byArm(eps []*episode.Episode) (arms []Arm, labels []string, groups [][]*episode.Episode) {
	arms, labels = Arms(eps)
	idx := map[Arm]int{}
	for i, a := range arms {
		idx[a] = i
	}
	groups = make([][]*episode.Episode, len(arms))
	for _, ep := range eps {
		i := idx[ArmOf(ep)]
		groups[i] = append(groups[i], ep)
	}
	return arms, labels, groups
}
