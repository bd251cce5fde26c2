package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
)

// TraceRow is one turn of a probe trace.
type TraceRow struct {
	// T is the persuader turn, 0 for the read-out before the first turn.
	T int
	// Acts are the tagged persuader acts of turn T (none at T = 0).
	Acts []string
	// States holds s_{t,k} = 2 p_k - 1 in [-1, 1] per probe, in
	// Trace.Probes order; NaN where the probe was unreadable or absent.
	States []float64
	// Belief is B_t in [0, 1]; NaN when missing.
	Belief float64
	// Dense is r_t = B_t - B_{t-1}; NaN at T = 0 and when missing.
	Dense float64
	// Decision is the persuadee's decision after turn T ("" at T = 0).
	Decision decision.Decision
}

// Trace is the Probe-RPO paper's Table 8: one episode's probe states, belief
// and dense reward per turn.
type Trace struct {
	RunID, Persuader, Persuadee, ScenarioID string
	Rollout                                 int
	Terminal                                decision.Terminal
	RGoal                                   float64
	// Probes are the probe ids in basis order.
	Probes []string
	// Rows run from t = 0 to the last turn.
	Rows []TraceRow
	// SumAbsDense is sum_t |r_t| over turns with a dense reward.
	SumAbsDense float64
	// TopTwoShare is the share of SumAbsDense carried by the two turns with
	// the largest |r_t| (Probe-RPO paper, Table 8: 95.9%), in [0, 1]; NaN when
	// SumAbsDense is 0.
	TopTwoShare float64
	// TopTurns are those two turns' T, the larger |r_t| first (fewer when
	// fewer turns have a dense reward).
	TopTurns []int
}

// probeIDs lists the probe ids of ep's readings in first-seen order (basis
// order, since every read-out follows the basis).
func probeIDs(ep *episode.Episode) []string {
	var ids []string
	add := func(rs []probe.Reading) {
		for _, r := range rs {
			if !slices.Contains(ids, r.Probe) {
				ids = append(ids, r.Probe)
			}
		}
	}
	add(ep.Initial)
	for _, t := range ep.Turns {
		add(t.Probes)
	}
	return ids
}

// states returns the probe states of rs per id (NaN where unreadable or
// absent).
func states(rs []probe.Reading, ids []string) []float64 {
	out := make([]float64, len(ids))
	for i, id := range ids {
		out[i] = math.NaN()
		for _, r := range rs {
			if r.Probe == id && r.OK {
				out[i] = probe.State(r.P)
				break
			}
		}
	}
	return out
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// TraceOf computes the probe trace of one episode (Probe-RPO paper, Table 8).
func TraceOf(ep *episode.Episode) Trace {
	tr := Trace{RunID: ep.RunID, Persuader: ep.Persuader, Persuadee: ep.Persuadee, ScenarioID: ep.ScenarioID,
		Rollout: ep.Rollout, Terminal: ep.Terminal, RGoal: ep.RGoal, Probes: probeIDs(ep)}
	tr.Rows = append(tr.Rows, TraceRow{T: 0, States: states(ep.Initial, tr.Probes), Belief: deref(ep.B0), Dense: math.NaN()})
	type turnAbs struct {
		t   int
		abs float64
	}
	var abs []turnAbs
	for _, t := range ep.Turns {
		tr.Rows = append(tr.Rows, TraceRow{T: t.T, Acts: t.Acts, States: states(t.Probes, tr.Probes),
			Belief: deref(t.Belief), Dense: deref(t.Dense), Decision: t.Decision})
		if t.Dense != nil {
			a := math.Abs(*t.Dense)
			abs = append(abs, turnAbs{t.T, a})
			tr.SumAbsDense += a
		}
	}
	// Stable: ties keep turn order.
	slices.SortStableFunc(abs, func(x, y turnAbs) int {
		switch {
		case x.abs > y.abs:
			return -1
		case x.abs < y.abs:
			return 1
		}
		return 0
	})
	top := 0.0
	for i := 0; i < len(abs) && i < 2; i++ {
		top += abs[i].abs
		tr.TopTurns = append(tr.TopTurns, abs[i].t)
	}
	tr.TopTwoShare = math.NaN()
	if tr.SumAbsDense > 0 {
		tr.TopTwoShare = top / tr.SumAbsDense
	}
	return tr
}

// sumAbsDense is sum_t |r_t| of ep.
func sumAbsDense(ep *episode.Episode) float64 {
	s := 0.0
	for _, t := range ep.Turns {
		if t.Dense != nil {
			s += math.Abs(*t.Dense)
		}
	}
	return s
}

// LargestDenseAccepted picks the episode Table 8 shows by default: among
// the fully accepted episodes of eps (of persuader only, when it is not
// empty), the one with the largest sum_t |r_t|; ties go to the earliest in
// eps.
//
// Choice: the Probe-RPO paper shows one hand-picked accepted episode; the largest
// total dense movement is a reproducible stand-in for "an instructive one".
//
// Errors: no accepted episode (of that persuader).
func LargestDenseAccepted(eps []*episode.Episode, persuader string) (*episode.Episode, error) {
	var best *episode.Episode
	bestSum := -1.0
	for _, ep := range Filter(eps, persuader) {
		if ep.Terminal != decision.TermAccept {
			continue
		}
		if s := sumAbsDense(ep); s > bestSum {
			best, bestSum = ep, s
		}
	}
	if best == nil {
		who := ""
		if persuader != "" {
			who = " of persuader " + persuader
		}
		return nil, fmt.Errorf("no fully accepted episode%s to trace; choose one with --scenario and --rollout", who)
	}
	return best, nil
}

// FindEpisode returns the episode of eps with the given scenario id and
// rollout, of persuader when it is not empty.
//
// Errors: no such episode; or several (different persuaders or
// persuadees), listing them so the caller can narrow with a persuader.
func FindEpisode(eps []*episode.Episode, persuader, scenarioID string, rollout int) (*episode.Episode, error) {
	var found []*episode.Episode
	for _, ep := range Filter(eps, persuader) {
		if ep.ScenarioID == scenarioID && ep.Rollout == rollout {
			found = append(found, ep)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no episode of scenario %q rollout %d%s", scenarioID, rollout, ofPersuader(persuader))
	case 1:
		return found[0], nil
	}
	var arms []string
	for _, ep := range found {
		arms = append(arms, ArmOf(ep).String())
	}
	return nil, fmt.Errorf("scenario %q rollout %d has %d episodes (%s): choose one with --persuader",
		scenarioID, rollout, len(found), strings.Join(arms, "; "))
}

func ofPersuader(p string) string {
	if p == "" {
		return ""
	}
	return " for persuader " + p
}

// Table renders Table 8: t, acts, one column per probe state, B_t and r_t,
// with the top-two share as a note. Missing values print as "-".
func (tr Trace) Table() Table {
	t := Table{Title: fmt.Sprintf("Probe trace: %s vs %s, scenario %s rollout %d, %s (Probe-RPO paper, Table 8)",
		tr.Persuader, tr.Persuadee, tr.ScenarioID, tr.Rollout, tr.Terminal),
		Header: []string{"t", "acts"}}
	t.Header = append(t.Header, tr.Probes...)
	t.Header = append(t.Header, "B_t", "r_dense", "decision")
	for _, r := range tr.Rows {
		acts := strings.Join(r.Acts, ",")
		if r.T > 0 && acts == "" {
			acts = "-"
		}
		cells := []string{strconv.Itoa(r.T), acts}
		for _, s := range r.States {
			cells = append(cells, num(s, 2, true))
		}
		cells = append(cells, num(r.Belief, 3, false), num(r.Dense, 3, true), string(r.Decision))
		t.Rows = append(t.Rows, cells)
	}
	if !math.IsNaN(tr.TopTwoShare) {
		turns := make([]string, len(tr.TopTurns))
		for i, x := range tr.TopTurns {
			turns[i] = strconv.Itoa(x)
		}
		which := "turns " + strings.Join(turns, " and ") + " carry"
		if len(turns) == 1 {
			which = "turn " + turns[0] + " carries"
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%s %s%% of sum |r_dense| = %s",
			which, pct(tr.TopTwoShare), num(tr.SumAbsDense, 3, false)))
	} else {
		t.Notes = append(t.Notes, "no dense reward moved in this episode")
	}
	return t
}
