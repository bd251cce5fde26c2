package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/persuarena/persuarena/episode"
)

// DenseTieTolerance is how far apart two rollouts' summed dense rewards
// must be for the dense term to separate them: |diff| > 1e-12.
//
// Choice: dense sums are float sums of belief differences, so exactly
// equal trajectories can differ by rounding; 1e-12 is far below any real
// belief movement (probes are read to ~1e-6).
const DenseTieTolerance = 1e-12

// GroupOptions configures DeadGroups.
type GroupOptions struct {
	// Step maps an episode to its training step; nil puts every episode at
	// step 0 (an eval run). The trainer supplies its step of each rollout.
	Step func(*episode.Episode) int
	// Outcome is the outcome reward R_out that decides whether a group is
	// dead; nil means ep.RGoal.
	//
	// Choice: stored episodes carry R_goal only; a trainer that adds the
	// strategy term (R_out = R_goal + w R_strategy, SPEC §1) passes it here.
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
	// whose summed dense rewards are not all equal (|diff| > DenseTieTolerance).
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
		outcome = func(ep *episode.Episode) float64 { return ep.RGoal }
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
				if !allEqual(g, outcome, 0) {
					continue
				}
				p.Dead++
				if !allEqual(g, sumDense, DenseTieTolerance) {
					p.Separated++
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

// allEqual reports whether f is the same on every episode of g: exactly
// when tol is 0, else max - min <= tol.
func allEqual(g []*episode.Episode, f func(*episode.Episode) float64, tol float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, ep := range g {
		v := f(ep)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if tol == 0 {
		return lo == hi
	}
	return hi-lo <= tol
}

// sumDense is sum_t r_t over ep's turns with a dense reward.
func sumDense(ep *episode.Episode) float64 {
	s := 0.0
	for _, t := range ep.Turns {
		if t.Dense != nil {
			s += *t.Dense
		}
	}
	return s
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
	t.Notes = append(t.Notes, "a group is the rollouts of one scenario; dead: all rollouts have the same R_goal; separated: their summed dense rewards differ")
	if st.Singletons > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d scenario group(s) with fewer than 2 scored rollouts left out (run eval with --rollouts 4 for G = 4 groups)", st.Singletons))
	}
	return t
}
