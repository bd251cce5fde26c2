package episode

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// perProbe is a persuadee whose read-outs give each probe its own p (NaN:
// that probe unreadable), one row per read-out (t = 0 first), or fail
// with errs[i] when set; it counts its read-outs.
type perProbe struct {
	decisions []decision.Decision
	rows      [][]float64
	errs      map[int]error
	probes    int
}

func (p *perProbe) Name() string { return "per-probe" }
func (p *perProbe) Start(context.Context, *scenario.Scenario, uint64) (PersuadeeSession, error) {
	return &perProbeSession{p: p}, nil
}

type perProbeSession struct {
	p        *perProbe
	turn, ri int
}

func (s *perProbeSession) Reply(context.Context, []Message) (Reply, error) {
	d := s.p.decisions[s.turn]
	s.turn++
	return Reply{Text: fmt.Sprintf("reply %d", s.turn), Decision: d}, nil
}

func (s *perProbeSession) Probe(_ context.Context, _ []Message, b probe.Basis) ([]probe.Answer, error) {
	i := s.ri
	s.ri++
	s.p.probes++
	if err := s.p.errs[i]; err != nil {
		return nil, err
	}
	out := make([]probe.Answer, len(b))
	for k := range out {
		if p := s.p.rows[i][k]; math.IsNaN(p) {
			out[k] = probe.Answer{Top: []probe.TokenLogprob{{Token: "<think>", ID: -1, Logprob: -0.05}}}
		} else {
			out[k] = probe.FromProbability(p)
		}
	}
	return out, nil
}

func cont(n int, last decision.Decision) []decision.Decision {
	ds := make([]decision.Decision, n)
	for i := range ds {
		ds[i] = decision.Continue
	}
	ds[n-1] = last
	return ds
}

var nan = math.NaN()

// B_T is the belief after the last turn or missing: never B0 nor an
// earlier turn's (issue 47 item 2: on 3b48d04 FinalBelief fell back to
// the last readable belief, then to B0, so an episode whose probes all
// failed after B0 = 0.8 counted as moved).
func TestFinalBeliefNeverCarriedForward(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows [][]float64
	}{
		{"every turn unreadable", [][]float64{{.8, .8, .8}, {nan, nan, nan}, {nan, nan, nan}}},
		{"last turn unreadable", [][]float64{{.2, .2, .2}, {.7, .7, .7}, {nan, nan, nan}}},
	} {
		pee := &perProbe{decisions: cont(2, decision.Continue), rows: tc.rows}
		ep, err := Run(context.Background(), Config{Tmax: 2}, sc, &echoPersuader{}, pee, 1)
		if err != nil {
			t.Fatal(err)
		}
		if b, ok := ep.FinalBelief(); ok {
			t.Errorf("%s: B_T = %v, want missing", tc.name, b)
		}
		if o := ep.Outcome(); o.BFinal != nil {
			t.Errorf("%s: outcome B_T = %v, want missing", tc.name, *o.BFinal)
		}
	}
	if b, ok := (&Episode{B0: new(float64)}).FinalBelief(); ok {
		t.Errorf("an episode without turns has B_T %v, want missing", b)
	}
}

// r_t compares only the probes readable at both t-1 and t (issue 47 item
// 4: on 3b48d04 a probe turning unreadable moved the mean, so no probe
// moving gave r_1 = -0.15 here).
func TestDenseOverProbesReadableAtBoth(t *testing.T) {
	pee := &perProbe{decisions: cont(3, decision.Continue), rows: [][]float64{
		{.2, .8, .5},  // B0 = 0.5
		{.2, nan, .5}, // pe unreadable: ca, ac unchanged
		{.3, .8, .5},  // pe back: r over ca, ac only
		{.3, .8, .75}, // all three readable at both
	}}
	ep, err := Run(context.Background(), Config{Tmax: 3}, sc, &echoPersuader{}, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		dense float64
		n     int
	}{{0, 2}, {0.05, 2}, {0.25 / 3, 0}}
	for i, w := range want {
		tr := ep.Turns[i]
		if tr.Dense == nil || math.Abs(*tr.Dense-w.dense) > 1e-9 || tr.DenseProbes != w.n {
			t.Errorf("turn %d: dense %v over %d probes, want %v over %d (0: all)", tr.T, tr.Dense, tr.DenseProbes, w.dense, w.n)
		}
	}
	// With all three probes readable the reward is B_t - B_{t-1} exactly.
	if d := *ep.Turns[2].Dense; d != *ep.Turns[2].Belief-*ep.Turns[1].Belief {
		t.Errorf("r_3 = %v, want B_3 - B_2 = %v bit for bit", d, *ep.Turns[2].Belief-*ep.Turns[1].Belief)
	}
}

// A probe fork that outgrows the context window costs that turn's belief,
// never the turn or its decision (issue 47 item 5: on 3b48d04 the episode
// ended truncated with R_goal -1 and the accepting turn dropped).
func TestProbeOverflowKeepsTheDecision(t *testing.T) {
	over := fmt.Errorf("llm: HTTP 400: %w", ErrTruncated)
	pee := &perProbe{decisions: cont(2, decision.Accept), rows: [][]float64{{.2, .2, .2}, {.4, .4, .4}}, errs: map[int]error{2: over}}
	ep, err := Run(context.Background(), Config{}, sc, &echoPersuader{}, pee, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Terminal != decision.TermAccept || ep.RGoal != 3 || len(ep.Turns) != 2 || ep.Error != "" {
		t.Fatalf("terminal %s, R_goal %v, %d turns, error %q; want accept, +3, 2 turns", ep.Terminal, ep.RGoal, len(ep.Turns), ep.Error)
	}
	last := ep.Turns[1]
	if last.Decision != decision.Accept || last.Belief != nil || last.Dense != nil || len(last.Probes) != 3 {
		t.Fatalf("last turn %+v: want the accept with a missing belief", last)
	}
	for _, r := range last.Probes {
		if r.OK || r.Reason != overflowedReason {
			t.Errorf("reading %+v: want unreadable, %q", r, overflowedReason)
		}
	}
	// The t = 0 read-out overflowing leaves B0 missing and the episode on.
	pee = &perProbe{decisions: cont(1, decision.Reject), rows: [][]float64{nil, {.4, .4, .4}}, errs: map[int]error{0: over}}
	ep, err = Run(context.Background(), Config{}, sc, &echoPersuader{}, pee, 1)
	if err != nil || ep.Terminal != decision.TermReject || ep.B0 != nil || len(ep.Initial) != 3 || ep.Turns[0].Dense != nil {
		t.Fatalf("t = 0 overflow: %+v, %v", ep, err)
	}
}

// Config.NoProbes plays outcome-only episodes: no read-out is asked for
// and every belief and dense reward is missing (--probes none).
func TestNoProbesConfig(t *testing.T) {
	pee := &perProbe{decisions: cont(2, decision.Accept)}
	ep, err := Run(context.Background(), Config{NoProbes: true}, sc, &echoPersuader{}, pee, 1)
	if err != nil || ep.Terminal != decision.TermAccept || len(ep.Turns) != 2 {
		t.Fatalf("%+v, %v", ep, err)
	}
	if pee.probes != 0 || ep.B0 != nil || ep.Initial != nil {
		t.Errorf("%d read-outs, B0 %v; want none", pee.probes, ep.B0)
	}
	for _, tr := range ep.Turns {
		if tr.Probes != nil || tr.Belief != nil || tr.Dense != nil {
			t.Errorf("turn %d: %+v", tr.T, tr)
		}
	}
}
