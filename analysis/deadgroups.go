package analysis

import (
	"fmt"
	"github.com/persuarena/persuarena/grpo"
	"math"
	"slices"
	"strconv"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/reward"
)

// GroupOptions configures DeadGroups.
type GroupOptions struct {
	// Step maps an episode to its training step; nil puts every episode at
	// step 0 (an eval run). The trainer supplies its step of each rollout.
	Step func(*episode.Episode) int
	// Outcome is the outcome reward R_out that decides whether a group is
	// dead; nil means ep.OutcomeReward(reward.DefaultStrategyWeight):
	// R_goal + w·R_strategy where the episode has a judge rating, else
	// R_goal (SPEC §1). A trainer with another weight passes its own.
	Outcome func(*episode.Episode) float64
}

// DeadGroupPoint counts the GRPO groups of one arm at one training step.
type DeadGroupPoint struct {
	Arm   Arm
	Label string
	// Step is the training step; -1 in DeadGroupStats.Overall (all steps).
	Step int
	// Groups counts groups of >= 2 scored rollouts; Dead those whose
	// rollouts all have exactly the same outcome; Separated the dead ones
	// whose process-supervised dense advantages differ at some turn
	// (grpo.GroupStats.Separated, the trainer's definition).
	Groups, Dead, Separated int
	// DeadShare is Dead/Groups and SeparatedShare Separated/Dead, in [0, 1];
	// NaN when the denominator is 0.
	DeadShare, SeparatedShare float64
}

// DeadGroupStats is seed 000 Figure 7's data: per arm and step (panel a)
// and over all steps (panel b), the share of dead groups and the share of
// dead groups the dense term still separates.
type DeadGroupStats struct {
	// Points are ordered by arm (first appearance), then step.
	Points []DeadGroupPoint
	// Overall has one point per arm, over all steps (Step = -1).
	Overall []DeadGroupPoint
	// Singletons counts groups with fewer than 2 scored rollouts, which
	// have no group advantage and are left out.
	Singletons int
	// Failed counts the failed episodes left out.
	Failed int
}

// DeadGroups computes Figure 7's dead-group and dense-separated shares
// (SPEC §2). A group is the scored rollouts of one scenario for one arm at
// one step; failed rollouts are dropped before grouping.
func DeadGroups(eps []*episode.Episode, o GroupOptions) DeadGroupStats {
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
				gs := groupStats(g, outcome)
				if gs.Dead {
					p.Dead++
					if gs.Separated {
						p.Separated++
					}
				}
			}
			all.Groups += p.Groups
			all.Dead += p.Dead
			all.Separated += p.Separated
			st.Points = append(st.Points, p.withShares())
		}
		st.Overall = append(st.Overall, all.withShares())
	}
	return st
}

func (p DeadGroupPoint) withShares() DeadGroupPoint {
	p.DeadShare = mean(float64(p.Dead), p.Groups)
	p.SeparatedShare = mean(float64(p.Separated), p.Dead)
	return p
}

// groupStats runs grpo.AnalyzeParts on one group (default config: only
// Dead and Separated are used, and neither depends on λ or ε).
func groupStats(g []*episode.Episode, outcome func(*episode.Episode) float64) grpo.GroupStats {
	rOut := make([]float64, len(g))
	dense := make([][]float64, len(g))
	for i, ep := range g {
		rOut[i] = outcome(ep)
		row := make([]float64, len(ep.Turns))
		for t, tr := range ep.Turns {
			row[t] = math.NaN()
			if tr.Dense != nil {
				row[t] = *tr.Dense
			}
		}
		dense[i] = row
	}
	parts, err := grpo.AnalyzeParts(rOut, dense, grpo.DefaultConfig())
	if err != nil { // only for infinite rewards, which stored episodes never hold
		return grpo.GroupStats{}
	}
	return parts.Stats
}

// Table renders Figure 7's data: one row per arm and step that has groups
// (and an "all" row per arm when there are several such steps).
func (st DeadGroupStats) Table() Table {
	t := Table{Title: "Dead GRPO groups and the share the dense term separates (seed 000 Figure 7)",
		Header: []string{"persuader", "step", "groups", "dead", "dead%", "separated", "separated|dead%"},
		Notes:  failedNote(st.Failed)}
	row := func(p DeadGroupPoint, step string) {
		t.Rows = append(t.Rows, []string{p.Label, step, strconv.Itoa(p.Groups), strconv.Itoa(p.Dead), pct(p.DeadShare),
			strconv.Itoa(p.Separated), pct(p.SeparatedShare)})
	}
	for _, o := range st.Overall {
		n := 0
		for _, p := range st.Points {
			if p.Arm == o.Arm && p.Groups > 0 {
				row(p, strconv.Itoa(p.Step))
				n++
			}
		}
		if n > 1 {
			row(o, "all")
		}
	}
	if len(t.Rows) == 0 {
		t.Notes = append(t.Notes, "no group has 2 or more scored rollouts")
	}
	t.Notes = append(t.Notes, "a group is the rollouts of one scenario; dead: all rollouts have the same R_out (R_goal, plus R_strategy where a judge rated); separated: their dense advantages (grpo, SPEC §2) differ at some turn")
	if st.Singletons > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d scenario group(s) with fewer than 2 scored rollouts left out (run eval with --rollouts 4 for G = 4 groups)", st.Singletons))
	}
	return t
}
