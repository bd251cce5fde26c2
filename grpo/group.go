package grpo

import (
	"math"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

// Key names one GRPO group: the rollouts whose outcome rewards are
// normalised together in A_out_i = (R_out_i - mean_G R_out)/(std_G R_out
// + ε) (Probe-RPO paper, Eq. 3). A group is the rollouts of one scenario
// by one persuader against one persuadee, at one training step and in one
// rollout block.
//
// The trainer, the trajectory export, the Figure 7 analyses and the
// report's advantage terms all group episodes by Key, so a group means the
// same rollouts everywhere.
type Key struct {
	// Persuader, Persuadee and Scenario are the episode's role names and
	// scenario ID (episode.Episode.Persuader, Persuadee, ScenarioID).
	Persuader, Persuadee, Scenario string
	// Step is the training step the rollouts were drawn at, >= 0; 0 for
	// an eval run.
	Step int
	// Block is the rollout block, Rollout / group size when an eval run's
	// rollouts are cut into groups of a fixed size; 0 otherwise.
	Block int
}

// KeyOf returns the key of ep's group at training step step, block 0.
func KeyOf(ep *episode.Episode, step int) Key {
	return Key{Persuader: ep.Persuader, Persuadee: ep.Persuadee, Scenario: ep.ScenarioID, Step: step}
}

// Groups collects values (episodes, or their indices) by Key, remembering
// the order in which the keys first appeared so that iterating groups is
// deterministic (no map order). The zero value is empty and ready to use.
type Groups[T any] struct {
	keys    []Key
	members map[Key][]T
}

// Add appends v to k's group, opening the group when k is new.
func (g *Groups[T]) Add(k Key, v T) {
	if g.members == nil {
		g.members = map[Key][]T{}
	}
	if _, ok := g.members[k]; !ok {
		g.keys = append(g.keys, k)
	}
	g.members[k] = append(g.members[k], v)
}

// Keys returns the keys in order of first appearance. The slice is the
// collector's own: do not modify it.
func (g *Groups[T]) Keys() []Key { return g.keys }

// Members returns k's values in the order they were added (nil for an
// unknown key).
func (g *Groups[T]) Members(k Key) []T { return g.members[k] }

// Reset empties g.
func (g *Groups[T]) Reset() { g.keys, g.members = nil, nil }

// Outcome returns R_out of ep as the advantage functions read it: NaN for
// a failed episode (decision.TermFailed), which they leave out of its
// group, else ep.OutcomeReward(w) = R_goal + w·R_strategy (Probe-RPO
// paper, Eq. 1), or, when a reward spec scored the episode
// (Episode.Reward), its composed reward R (REPO paper).
func Outcome(ep *episode.Episode, w float64) float64 {
	if ep.Terminal == decision.TermFailed {
		return math.NaN()
	}
	if ep.Reward != nil {
		return ep.Reward.R
	}
	return ep.OutcomeReward(w)
}

// DenseRewards returns ep's per-turn dense rewards r_{i,t} (Probe-RPO
// paper, Eq. 2), one entry per turn, NaN for a turn without one (an
// unreadable probe), as DenseAdvantages reads them.
func DenseRewards(ep *episode.Episode) []float64 {
	row := make([]float64, len(ep.Turns))
	for t, tu := range ep.Turns {
		row[t] = math.NaN()
		if tu.Dense != nil {
			row[t] = *tu.Dense
		}
	}
	return row
}

// Inputs returns one group's arguments for Analyze and AnalyzeParts:
// rOut[i] = outcome(g[i]) and dense[i] = DenseRewards(g[i]), both with
// len(g) rows.
func Inputs(g []*episode.Episode, outcome func(*episode.Episode) float64) (rOut []float64, dense [][]float64) {
	rOut = make([]float64, len(g))
	dense = make([][]float64, len(g))
	for i, ep := range g {
		rOut[i] = outcome(ep)
		dense[i] = DenseRewards(ep)
	}
	return rOut, dense
}

// DeadTally sums the GroupStats of many groups, as the Probe-RPO paper's
// Figure 7 reports them: how many groups are dead, how many of those the
// dense term separates, and the turn-weighted mean sizes of the two
// advantage terms. The zero value is empty.
type DeadTally struct {
	// Groups counts the groups added; Dead those with GroupStats.Dead;
	// Separated the dead ones with GroupStats.Separated; Mixed the dead
	// ones with GroupStats.Mixed and ShortestTop those of them with
	// GroupStats.ShortestTop.
	Groups, Dead, Separated, Mixed, ShortestTop int
	// CorrSum sums GroupStats.LengthCorr over the dead groups where it is
	// defined (not NaN); CorrN counts them.
	CorrSum float64
	CorrN   int
	// Turns counts the scored turns added; SumAbsOut and SumAbsDense sum
	// |A_out_i| and |λ·A_dense_{i,t}| over them (GroupStats.MeanAbsOut
	// and MeanAbsDense weighted by each group's turns).
	Turns                  int
	SumAbsOut, SumAbsDense float64
}

// Add counts one group with statistics st and turns scored turns (the
// turns over which st.MeanAbsOut and st.MeanAbsDense are means).
func (c *DeadTally) Add(st GroupStats, turns int) {
	c.Groups++
	if st.Dead {
		c.Dead++
		if st.Separated {
			c.Separated++
		}
		if st.Mixed {
			c.Mixed++
			if st.ShortestTop {
				c.ShortestTop++
			}
		}
		if !math.IsNaN(st.LengthCorr) {
			c.CorrSum += st.LengthCorr
			c.CorrN++
		}
	}
	c.Turns += turns
	c.SumAbsOut += st.MeanAbsOut * float64(turns)
	c.SumAbsDense += st.MeanAbsDense * float64(turns)
}

// Merge adds o's counts and sums to c.
func (c *DeadTally) Merge(o DeadTally) {
	c.Groups += o.Groups
	c.Dead += o.Dead
	c.Separated += o.Separated
	c.Mixed += o.Mixed
	c.ShortestTop += o.ShortestTop
	c.CorrSum += o.CorrSum
	c.CorrN += o.CorrN
	c.Turns += o.Turns
	c.SumAbsOut += o.SumAbsOut
	c.SumAbsDense += o.SumAbsDense
}

// ratio is sum/n, NaN when n is 0.
func ratio(sum float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// DeadShare is Dead/Groups in [0, 1]; NaN without groups.
func (c DeadTally) DeadShare() float64 { return ratio(float64(c.Dead), c.Groups) }

// SeparatedShare is Separated/Dead in [0, 1]; NaN without dead groups.
func (c DeadTally) SeparatedShare() float64 { return ratio(float64(c.Separated), c.Dead) }

// ShortestTopShare is ShortestTop/Mixed in [0, 1]; NaN without mixed dead
// groups.
func (c DeadTally) ShortestTopShare() float64 { return ratio(float64(c.ShortestTop), c.Mixed) }

// LengthCorr is the mean of GroupStats.LengthCorr over the dead groups
// where it is defined, in [-1, 1]; NaN when there is none.
func (c DeadTally) LengthCorr() float64 { return ratio(c.CorrSum, c.CorrN) }

// MeanAbsOut is the mean |A_out_i| over the scored turns added, and
// MeanAbsDense the mean |λ·A_dense_{i,t}| (Figure 7c); NaN without turns.
func (c DeadTally) MeanAbsOut() float64 { return ratio(c.SumAbsOut, c.Turns) }

// MeanAbsDense: see MeanAbsOut.
func (c DeadTally) MeanAbsDense() float64 { return ratio(c.SumAbsDense, c.Turns) }
