package analysis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/scenario"
)

// synthetic builds a deterministic run in store order (persuader,
// persuadee, scenario, rollout): three persuaders against two persuadees,
// 12 scenarios, 4 rollouts, every terminal state (failed and truncated
// too), unreadable probes, missing beliefs and dense rewards, an unknown
// family and resistance, and dead groups (every rollout of some scenarios
// ends the same way).
func synthetic() []*episode.Episode {
	rng := rand.New(rand.NewPCG(7, 11))
	terms := []decision.Terminal{decision.TermAccept, decision.TermConditional, decision.TermPending,
		decision.TermReject, decision.TermTruncated, decision.TermFailed}
	ress := []scenario.Resistance{EB, IT, scenario.Resistances[2], ""}
	fams := []scenario.Family{hc, ed, "zeta"}
	acts := []string{"diagnostic", "evidence", "plan", "commitment", "autonomy", "made-up"}
	var eps []*episode.Episode
	for _, per := range []string{"alpha", "beta", "gamma"} {
		for _, pee := range []string{"sim", "sim-hard"} {
			for s := range 12 {
				sc := fmt.Sprintf("s%02d", s)
				dead := s%3 == 0
				for r := range 4 {
					term := terms[rng.IntN(len(terms))]
					if dead {
						term = decision.TermPending
					}
					var ts []turnSpec
					for range 1 + rng.IntN(6) {
						var p [3]float64
						for k := range p {
							p[k] = float64(rng.IntN(11)) / 10
							if rng.IntN(9) == 0 {
								p[k] = u
							}
						}
						var as []string
						for _, a := range acts {
							if rng.IntN(3) == 0 {
								as = append(as, a)
							}
						}
						ts = append(ts, tt(p, as...))
					}
					ep := mk(per, pee, sc, r, ress[s%len(ress)], fams[s%len(fams)], term, same(0.5), ts...)
					if rng.IntN(7) == 0 && len(ep.Turns) > 1 {
						ep.Turns[1].Belief, ep.Turns[1].Dense = nil, nil
					}
					eps = append(eps, ep)
				}
			}
		}
	}
	return eps
}

// dump formats v with every float in its exact shortest form (NaN as
// NaN), so that two results compare equal only when every value is
// identical.
func dump(v any) string { return fmt.Sprintf("%+v", v) }

func streamOf(t *testing.T, eps []*episode.Episode, o StreamOptions) *Stream {
	t.Helper()
	s := NewStream(o)
	for _, ep := range eps {
		if err := s.Add(ep); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// TestStreamEqualsSlices: every streamed analysis equals the slice
// function on the same episodes, value for value.
func TestStreamEqualsSlices(t *testing.T) {
	step := func(ep *episode.Episode) int { return ep.Rollout/2 + 1 } // two steps of G = 2
	for name, eps := range map[string][]*episode.Episode{"handbuilt": handBuilt(), "synthetic": synthetic()} {
		for _, o := range []StreamOptions{{}, {Groups: GroupOptions{Step: step}}, {TraceScenario: "s03", TraceRollout: 1}, {TraceScenario: "s4"}} {
			s := streamOf(t, eps, o)
			check := func(what string, got, want any) {
				t.Helper()
				if g, w := dump(got), dump(want); g != w {
					t.Errorf("%s %+v %s:\nstream %s\nslice  %s", name, o.TraceScenario, what, g, w)
				}
			}
			check("table6", s.AcceptanceByProfile(), refAcceptanceByProfile(eps))
			check("table7", s.AcceptanceGrid(), refAcceptanceGrid(eps))
			check("table9", s.ConversionOf(), refConversionOf(eps))
			check("acts", s.ActsByTurn(), refActsByTurn(eps))
			check("beliefs", s.BeliefTrajectories(), refBeliefTrajectories(eps))
			check("deadgroups", s.DeadGroups(), refDeadGroups(eps, o.Groups))
			check("tables", s.DeadGroups().Table(), refDeadGroups(eps, o.Groups).Table())
			ep, err := s.LargestDenseAccepted()
			wep, werr := LargestDenseAccepted(eps, "")
			check("table8", fmt.Sprint(ep, err), fmt.Sprint(wep, werr))
			if o.TraceScenario != "" {
				ep, err := s.FindEpisode()
				wep, werr := FindEpisode(eps, "", o.TraceScenario, o.TraceRollout)
				check("find", fmt.Sprint(ep, err), fmt.Sprint(wep, werr))
			}
			if s.Episodes() != len(eps) {
				t.Errorf("%s: Episodes %d, want %d", name, s.Episodes(), len(eps))
			}
		}
	}
	// The synthetic run really exercises the dead-group path and the
	// multi-persuadee labels.
	st := DeadGroups(synthetic(), GroupOptions{})
	if st.Overall[0].Dead == 0 || !strings.Contains(st.Overall[0].Label, " vs ") {
		t.Errorf("synthetic run: %+v", st.Overall[0])
	}
}

// TestStreamEmptyAndFailed: a stream of failed episodes only gives the
// slice functions' empty results.
func TestStreamEmptyAndFailed(t *testing.T) {
	var eps []*episode.Episode
	for _, ep := range handBuilt() {
		if ep.Terminal == decision.TermFailed {
			eps = append(eps, ep)
		}
	}
	s := streamOf(t, eps, StreamOptions{})
	if g, w := dump(s.AcceptanceByProfile()), dump(refAcceptanceByProfile(eps)); g != w {
		t.Errorf("table6: %s, want %s", g, w)
	}
	if g, w := dump(s.BeliefTrajectories()), dump(refBeliefTrajectories(eps)); g != w {
		t.Errorf("beliefs: %s, want %s", g, w)
	}
	if _, err := s.LargestDenseAccepted(); err == nil {
		t.Error("LargestDenseAccepted of failed episodes: no error")
	}
}

// TestStreamRejectsUngroupedInput: a Figure 7 group that comes back after
// another started is an error, not a silently split group.
func TestStreamRejectsUngroupedInput(t *testing.T) {
	eps := synthetic()[:8] // alpha vs sim, s00 and s01, 4 rollouts each
	mixed := slices.Clone(eps)
	mixed[3], mixed[4] = mixed[4], mixed[3]
	s := NewStream(StreamOptions{})
	var err error
	for _, ep := range mixed {
		if e := s.Add(ep); e != nil && err == nil {
			err = e
		}
	}
	if err == nil || !strings.Contains(err.Error(), "s00") || !strings.Contains(err.Error(), "not grouped") {
		t.Errorf("err %v, want a misordered-group error naming s00", err)
	}
	// Ungrouped holds the groups instead and equals DeadGroups on any
	// order.
	shuffled := synthetic()
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	u := streamOf(t, shuffled, StreamOptions{Ungrouped: true})
	if g, w := dump(u.DeadGroups()), dump(refDeadGroups(shuffled, GroupOptions{})); g != w {
		t.Errorf("ungrouped:\nstream %s\nslice  %s", g, w)
	}
	if g, w := dump(u.BeliefTrajectories()), dump(refBeliefTrajectories(shuffled)); g != w {
		t.Errorf("ungrouped beliefs:\nstream %s\nslice  %s", g, w)
	}
}
