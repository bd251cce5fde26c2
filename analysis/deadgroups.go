package analysis

import (
	"fmt"
	"math"
	"strconv"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/grpo"
)

// GroupOptions configures DeadGroups.
type GroupOptions struct {
	// Step maps an episode to its training step; nil puts every episode at
	// step 0 (an eval run). The trainer supplies its step of each rollout.
	Step func(*episode.Episode) int
	// Outcome is the outcome reward R_out that decides whether a group is
	// dead; nil means ep.OutcomeReward(reward.DefaultStrategyWeight):
	// R_goal + w·R_strategy where the episode has a judge rating, else
	// R_goal (Probe-RPO paper). A trainer with another weight passes its own.
	Outcome func(*episode.Episode) float64
	// Config is the GRPO configuration whose dense mode, λ and separation
	// threshold decide Separated and the length figures; nil means
	// grpo.DefaultConfig() (scaled, λ 0.5, threshold 0.1).
	Config *grpo.Config
}

// DeadGroupPoint counts the GRPO groups of one arm at one training step.
type DeadGroupPoint struct {
	Arm   Arm
	Label string
	// Step is the training step; -1 in DeadGroupStats.Overall (all steps).
	Step int
	// Groups counts groups of >= 2 scored rollouts; Dead those whose
	// rollouts all have exactly the same outcome; Separated the dead ones
	// whose λ-weighted turn-1 dense advantages differ by more than the
	// threshold (grpo.GroupStats.Separated, the trainer's definition).
	Groups, Dead, Separated int
	// Mixed counts dead groups whose rollouts differ in length and
	// ShortestTop those of them whose shortest rollout gets the top turn-1
	// dense advantage (grpo.GroupStats.ShortestTop).
	Mixed, ShortestTop int
	// DeadShare is Dead/Groups, SeparatedShare Separated/Dead and
	// ShortestTopShare ShortestTop/Mixed, in [0, 1]; LengthCorr the mean
	// over dead groups of grpo.GroupStats.LengthCorr (corr of turn-1 dense
	// advantage and length, in [-1, 1]). NaN when undefined.
	DeadShare, SeparatedShare, ShortestTopShare, LengthCorr float64
	corrSum                                                 float64
	corrN                                                   int
}

// DeadGroupStats is the Probe-RPO paper's Figure 7 data: per arm and step (panel a)
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
// (Probe-RPO paper). A group is the scored rollouts of one scenario for one arm at
// one step; failed rollouts are dropped before grouping.
func DeadGroups(eps []*episode.Episode, o GroupOptions) DeadGroupStats {
	return sliceStream(eps, StreamOptions{Groups: o, Ungrouped: true}).DeadGroups()
}

// deadPoint is the point of arm a (labelled label) at step (-1: all
// steps) with the counts of c.
func deadPoint(a Arm, label string, step int, c grpo.DeadTally) DeadGroupPoint {
	p := DeadGroupPoint{Arm: a, Label: label, Step: step, Groups: c.Groups, Dead: c.Dead, Separated: c.Separated,
		Mixed: c.Mixed, ShortestTop: c.ShortestTop, corrSum: c.CorrSum, corrN: c.CorrN}
	return p.withShares()
}

// withShares fills p's shares from its counts (grpo.DeadTally's).
func (p DeadGroupPoint) withShares() DeadGroupPoint {
	c := grpo.DeadTally{Groups: p.Groups, Dead: p.Dead, Mixed: p.Mixed, Separated: p.Separated,
		ShortestTop: p.ShortestTop, CorrSum: p.corrSum, CorrN: p.corrN}
	p.DeadShare, p.SeparatedShare = c.DeadShare(), c.SeparatedShare()
	p.ShortestTopShare, p.LengthCorr = c.ShortestTopShare(), c.LengthCorr()
	return p
}

// groupStats runs grpo.AnalyzeParts on one group with cfg.
func groupStats(g []*episode.Episode, outcome func(*episode.Episode) float64, cfg grpo.Config) grpo.GroupStats {
	rOut, dense := grpo.Inputs(g, outcome)
	parts, err := grpo.AnalyzeParts(rOut, dense, cfg)
	if err != nil { // only for infinite rewards or a bad cfg (checked by callers)
		return grpo.GroupStats{LengthCorr: math.NaN()}
	}
	return parts.Stats
}

// Table renders Figure 7's data: one row per arm and step that has groups
// (and an "all" row per arm when there are several such steps).
func (st DeadGroupStats) Table() Table {
	t := Table{Title: "Dead GRPO groups and the share the dense term separates (Probe-RPO paper, Figure 7)",
		Header: []string{"persuader", "step", "groups", "dead", "dead%", "separated", "separated|dead%", "corr(A_dense,len)|dead", "shortest-top|mixed dead%"},
		Notes:  failedNote(st.Failed)}
	row := func(p DeadGroupPoint, step string) {
		t.Rows = append(t.Rows, []string{p.Label, step, strconv.Itoa(p.Groups), strconv.Itoa(p.Dead), pct(p.DeadShare),
			strconv.Itoa(p.Separated), pct(p.SeparatedShare), num(p.LengthCorr, 2, true), pct(p.ShortestTopShare)})
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
	t.Notes = append(t.Notes, "a group is the rollouts of one scenario; dead: all rollouts have the same R_out (R_goal, plus R_strategy where a judge rated); separated: their λ-weighted turn-1 dense advantages differ by more than the threshold (grpo.GroupStats)",
		"corr(A_dense,len): mean over dead groups of the correlation between the turn-1 dense advantage and episode length; shortest-top: share of mixed-length dead groups whose shortest rollout gets the top dense advantage (separation by length, not belief)")
	if st.Singletons > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d scenario group(s) with fewer than 2 scored rollouts left out (run eval with --rollouts 4 for G = 4 groups)", st.Singletons))
	}
	return t
}
