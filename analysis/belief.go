package analysis

import (
	"math"
	"slices"
	"strconv"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/eval"
	"github.com/persuarena/persuarena/probe"
)

// Conversion is the Probe-RPO paper's Table 9: per arm, the terminal shares,
// mean turns, mean final belief B_T, the share moved (B_T > 0.5) and the
// share of moved episodes closed (full acceptance), as eval.Summarize
// computes them.
type Conversion struct {
	Arms []Arm
	// Rows holds one eval.Summary per arm (Set empty).
	Rows []eval.Summary
}

// ConversionOf computes Table 9 per arm (Probe-RPO paper, Table 9) with
// eval.Summarize; failed episodes are counted in each row's Failed.
func ConversionOf(eps []*episode.Episode) Conversion {
	return sliceStream(eps, StreamOptions{Ungrouped: true}).ConversionOf()
}

// Table renders Table 9's columns.
func (c Conversion) Table() Table {
	t := Table{Title: "Final belief and conversion (Probe-RPO paper, Table 9)",
		Header: []string{"persuader", "persuadee", "n", "acc%", "cond%", "pend%", "rej%", "turns", "B_T", "moved%", "closed|moved%", "failed"},
		Notes:  []string{"B_T: mean final belief; moved: B_T > 0.5; closed|moved: share of moved episodes ending in full acceptance"}}
	for _, s := range c.Rows {
		t.Rows = append(t.Rows, []string{s.Persuader, s.Persuadee, strconv.Itoa(s.N), pct(s.Accept), pct(s.Conditional),
			pct(s.Pending), pct(s.Reject), num(s.MeanTurns, 1, false), num(s.MeanBT, 2, true), pct(s.Moved),
			pct(s.ClosedGivenMoved), strconv.Itoa(s.Failed)})
	}
	return t
}

// TrajectoryPoint is the mean read-out at one turn of a Trajectory.
type TrajectoryPoint struct {
	// T is the turn, 0 for the read-out before the first persuader turn.
	T int
	// N counts the group's episodes that reached turn T (all at T = 0).
	N int
	// States holds the mean probe state s_{t,k} per probe (Trajectories.Probes
	// order) over episodes with a readable probe at T; NaN when none.
	States []float64
	// StateN counts the readings behind each mean in States.
	StateN []int
	// Belief is the mean B_t over episodes with a belief at T; NaN when none.
	Belief float64
	// BeliefN counts the beliefs behind Belief.
	BeliefN int
}

// Trajectory is one curve family of Figure 6: a group of episodes and its
// mean read-outs by turn.
type Trajectory struct {
	// Label names the group: a terminal state, or an arm label.
	Label string
	// Terminal is the group's terminal state; empty for an arm's curve.
	Terminal decision.Terminal
	// Arm is the group's arm; zero for the pooled terminal curves.
	Arm Arm
	// Episodes counts the group's episodes.
	Episodes int
	// Points run from t = 0 to the longest episode's last turn.
	Points []TrajectoryPoint
}

// Trajectories is the Probe-RPO paper's Figure 6: mean probe states and
// belief by turn, pooled over arms and split by terminal state (panel c), and
// per arm over all terminal states (panels a, b).
type Trajectories struct {
	// Probes are the probe ids, in basis order.
	Probes []string
	// ByTerminal has one curve per terminal state present, in
	// decision.Terminals order (accept, conditional, pending, reject) then
	// truncated.
	ByTerminal []Trajectory
	// ByArm has one curve per arm.
	ByArm []Trajectory
	// Failed counts the failed episodes left out.
	Failed int
}

// BeliefTrajectories computes Figure 6 over eps (Probe-RPO paper, Figure 6).
// Unreadable probes and missing beliefs are left out of the means (never read
// as 0); each point carries its counts.
func BeliefTrajectories(eps []*episode.Episode) Trajectories {
	return sliceStream(eps, StreamOptions{Ungrouped: true}).BeliefTrajectories()
}

func trajectory(label string, eps []*episode.Episode, ids []string) Trajectory {
	c := Trajectory{Label: label, Episodes: len(eps)}
	tmax := 0
	for _, ep := range eps {
		for _, t := range ep.Turns {
			tmax = max(tmax, t.T)
		}
	}
	for t := 0; t <= tmax; t++ {
		p := TrajectoryPoint{T: t, States: make([]float64, len(ids)), StateN: make([]int, len(ids))}
		var bsum float64
		for _, ep := range eps {
			rs, b, ok := readoutAt(ep, t)
			if !ok {
				continue
			}
			p.N++
			for k, s := range states(rs, ids) {
				if !math.IsNaN(s) {
					p.States[k] += s
					p.StateN[k]++
				}
			}
			if b != nil {
				bsum += *b
				p.BeliefN++
			}
		}
		for k := range p.States {
			p.States[k] = mean(p.States[k], p.StateN[k])
		}
		p.Belief = mean(bsum, p.BeliefN)
		c.Points = append(c.Points, p)
	}
	return c
}

// readoutAt returns ep's probe readings and belief after turn t (t = 0:
// the initial read-out); ok is false when the episode has no turn t.
func readoutAt(ep *episode.Episode, t int) (rs []probe.Reading, b *float64, ok bool) {
	if t == 0 {
		return ep.Initial, ep.B0, true
	}
	for i := range ep.Turns {
		if ep.Turns[i].T == t {
			return ep.Turns[i].Probes, ep.Turns[i].Belief, true
		}
	}
	return nil, nil, false
}

func mean(sum float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Table renders Figure 6's data: one row per curve and turn with n, the
// mean state of each probe and the mean belief.
func (tr Trajectories) Table() Table {
	t := Table{Title: "Mean probe states and belief by turn (Probe-RPO paper, Figure 6)",
		Header: []string{"group", "t", "n"}, Notes: failedNote(tr.Failed)}
	t.Header = append(t.Header, tr.Probes...)
	t.Header = append(t.Header, "B_t")
	for _, c := range append(slices.Clone(tr.ByTerminal), tr.ByArm...) {
		group := "terminal=" + c.Label
		if c.Terminal == "" {
			group = "persuader=" + c.Label
		}
		for _, p := range c.Points {
			cells := []string{group, strconv.Itoa(p.T), strconv.Itoa(p.N)}
			for _, s := range p.States {
				cells = append(cells, num(s, 2, true))
			}
			t.Rows = append(t.Rows, append(cells, num(p.Belief, 3, false)))
		}
	}
	t.Notes = append(t.Notes, "states s = 2p-1 in [-1, 1]; n counts episodes that reached turn t; unreadable probes are left out of the means")
	return t
}
