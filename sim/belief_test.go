package sim_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/analysis"
	"github.com/persuarena/persuarena/baseline"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
	"github.com/persuarena/persuarena/tagger"
)

// contentFree are persuader turns that carry no act, no pressure and touch
// no concern of the fixtures: filler, a keyboard mash and off-topic small
// talk (the tagger reads none of them; TestContentFreeIsUntagged).
var contentFree = []string{"ok", "Hmm.", "asdf qwer zxcv", "The weather is lovely today.", "I had pasta for lunch."}

// TestContentFreeIsUntagged guards the battery below: its lines must stay
// content-free in the tagger's reading, or the battery tests nothing.
func TestContentFreeIsUntagged(t *testing.T) {
	for _, sc := range fixtures() {
		for _, line := range contentFree {
			tg := tagger.Tag(line)
			if tg.Acts != 0 || tg.Pressure != 0 {
				t.Fatalf("%q tagged %v pressure %d", line, tg.Acts.Strings(), tg.Pressure)
			}
			cs := 0
			for _, c := range sc.Hidden.Concerns {
				for _, k := range c.Keywords {
					if strings.Contains(strings.ToLower(line), k) {
						cs++
					}
				}
			}
			if cs > 0 {
				t.Fatalf("%q touches a concern of %s", line, sc.ID)
			}
		}
	}
}

// prefixThen says the first k lines of pre, then filler forever.
type prefixThen struct {
	pre    []string
	k      int
	filler string
}

func (p *prefixThen) Name() string { return "prefix-then-filler" }
func (p *prefixThen) Start(context.Context, scenario.Public, uint64) (episode.PersuaderSession, error) {
	return &prefixSession{p: p}, nil
}

type prefixSession struct {
	p *prefixThen
	i int
}

func (s *prefixSession) Say(context.Context, []episode.Message) (episode.Utterance, error) {
	line := s.p.filler
	if s.i < s.p.k {
		line = s.p.pre[s.i%len(s.p.pre)]
	}
	s.i++
	return episode.Utterance{Text: line}, nil
}

// TestContentFreeNeverRaisesBelief is the content-free battery
// (docs/simulator/model.md, "One turn"): for every resistance type, the default, soft and hard
// settings, 100 seeds and five kinds of content-free turn, every content-free
// turn's dense reward r_t = B_t - B_{t-1} is <= 0 (exactly 0 allowed), both
// from the start of an episode and after 1-3 turns of real persuasion
// (informer-like or pushy lines) have moved the state.
func TestContentFreeNeverRaisesBelief(t *testing.T) {
	scs := fixtures()
	checked, raisedBefore := 0, 0
	for _, name := range sim.Names {
		cfg, _ := sim.ByName(name)
		pee := sim.New(cfg)
		for _, filler := range contentFree {
			for seed := uint64(0); seed < 100; seed++ {
				sc := scs[int(seed)%len(scs)]
				k := int(seed % 4)
				pre := informerLike.lines
				if seed%8 >= 4 {
					pre = asker.lines
				}
				ep := run(t, &prefixThen{pre: pre, k: k, filler: filler}, pee, sc, seed)
				for i, tr := range ep.Turns {
					if i < k {
						continue
					}
					checked++
					if tr.Dense == nil {
						t.Fatalf("%s %s seed %d turn %d: no dense reward", name, sc.ID, seed, tr.T)
					}
					if *tr.Dense > 0 {
						t.Fatalf("%s %s (%s) seed %d: content-free turn %d %q raised the belief by %+.6f (after %d real turns)",
							name, sc.ID, sc.Hidden.Resistance, seed, tr.T, filler, *tr.Dense, k)
					}
				}
				if k > 0 && len(ep.Turns) > k {
					raisedBefore++
				}
			}
		}
	}
	// the battery must have looked at many turns, including turns after
	// real persuasion
	if checked < 10000 || raisedBefore < 1000 {
		t.Fatalf("battery checked %d content-free turns, %d episodes after real turns; too few", checked, raisedBefore)
	}
}

// heldOut plays persuader name against cfg on the held-out split of set,
// rollouts episodes per scenario, run seed 1 (as `persuarena eval`).
func heldOut(t testing.TB, set, name string, cfg sim.Config, rollouts int) []*episode.Episode {
	t.Helper()
	all, err := scenario.Resolve(set)
	if err != nil {
		t.Fatal(err)
	}
	held := scenario.Filter(all, scenario.Heldout)
	if len(held) < 100 {
		t.Skipf("%s has %d held-out scenarios; not generated yet", set, len(held))
	}
	per, err := baseline.New(name)
	if err != nil {
		t.Fatal(err)
	}
	pee := sim.New(cfg)
	var eps []*episode.Episode
	for i := range held {
		for k := 0; k < rollouts; k++ {
			ep, err := episode.Run(context.Background(), episode.Config{}, &held[i], per, pee, episode.Seed(1, held[i].ID, k))
			if err != nil || ep.Terminal == decision.TermFailed {
				t.Fatalf("%s/%s: %v %s", name, held[i].ID, err, ep.Error)
			}
			eps = append(eps, ep)
		}
	}
	return eps
}

// calibrationEval is the fixed eval of the calibration test: script and
// random against cfg on both held-out sets, three rollouts each (1,440
// episodes).
func calibrationEval(t testing.TB, cfg sim.Config) (all, script []*episode.Episode) {
	for _, set := range []string{"arena", "p4g"} {
		for _, name := range []string{"script", "random"} {
			eps := heldOut(t, set, name, cfg, 3)
			all = append(all, eps...)
			if name == "script" {
				script = append(script, eps...)
			}
		}
	}
	return all, script
}

func movedShare(eps []*episode.Episode) float64 {
	n := 0
	for _, ep := range eps {
		if b, ok := ep.FinalBelief(); ok && b > 0.5 {
			n++
		}
	}
	return float64(n) / float64(len(eps))
}

// TestAskCalibration (docs/simulator/probes.md): on the fixed eval the belief just
// before a commitment ask predicts the ask's answer (ECE <= 0.10 over ten
// bins), and script ends "moved" (B_T > 0.5) in 20-85 % of its episodes:
// neither a soft user nor a wall for a competent one-size persuader
// (docs/simulator/types.md: the types' optima conflict, so a
// persuader that plays one strategy for all moves fewer people than a
// planner that reads the replies).
func TestAskCalibration(t *testing.T) {
	all, script := calibrationEval(t, sim.DefaultConfig())
	r, err := analysis.AskReliabilityOf(all, 10)
	if err != nil {
		t.Fatal(err)
	}
	if r.N < 1000 {
		t.Fatalf("only %d asks in the eval", r.N)
	}
	if r.ECE > 0.10 {
		var b strings.Builder
		_ = r.Table().WriteText(&b)
		t.Errorf("ECE %.3f > 0.10:\n%s", r.ECE, b.String())
	}
	if m := movedShare(script); m < 0.20 || m > 0.85 {
		t.Errorf("script moved %.1f%%, want 20-85%%", 100*m)
	}
}

// firstAbove returns the first turn (0 = the read-out before turn 1) at
// which probe id reads p > 0.5, or -1.
func firstAbove(ep *episode.Episode, id string) int {
	above := func(rs []probe.Reading) bool {
		for _, r := range rs {
			if r.Probe == id && r.OK && r.P > 0.5 {
				return true
			}
		}
		return false
	}
	if above(ep.Initial) {
		return 0
	}
	for _, tr := range ep.Turns {
		if above(tr.Probes) {
			return tr.T
		}
	}
	return -1
}

// TestBeliefReport prints the figures (SIM_REPORT=1 go
// test -run BeliefReport -v ./sim/): per setting, the content-free drift
// after ten filler turns, script's mean first turn above 0.5 per probe, B_T
// by outcome and moved share, and the reliability diagram of the fixed
// calibration eval.
func TestBeliefReport(t *testing.T) {
	if os.Getenv("SIM_REPORT") == "" {
		t.Skip("set SIM_REPORT=1 to print the belief report")
	}
	var b strings.Builder
	for _, name := range sim.Names {
		cfg, _ := sim.ByName(name)
		pee := sim.New(cfg)
		fmt.Fprintf(&b, "\n=== %s\n", name)
		// (a) content-free drift: B_10 - B_0 and the largest single-turn r_t
		for _, filler := range contentFree[:3] {
			fmt.Fprintf(&b, "content-free %-16q", filler)
			for _, r := range scenario.Resistances {
				sum, maxR, n := 0.0, math.Inf(-1), 0
				for _, sc := range fixtures() {
					if sc.Hidden.Resistance != r {
						continue
					}
					for seed := uint64(0); seed < 100; seed++ {
						ep := run(t, &cycler{name: "filler", lines: []string{filler}}, pee, sc, seed)
						bT, _ := ep.FinalBelief()
						sum += bT - *ep.B0
						n++
						for _, tr := range ep.Turns {
							maxR = math.Max(maxR, *tr.Dense)
						}
					}
				}
				fmt.Fprintf(&b, "  %s ΔB %+.3f max r %+.4f", r, sum/float64(n), maxR)
			}
			b.WriteString("\n")
		}
		// (d) first turn above 0.5 per probe, script, both held-out sets
		for _, set := range []string{"arena", "p4g"} {
			eps := heldOut(t, set, "script", cfg, 3)
			fmt.Fprintf(&b, "script %-5s first p>0.5:", set)
			for _, id := range []string{"ca", "pe", "ac"} {
				sum, n := 0, 0
				for _, ep := range eps {
					if f := firstAbove(ep, id); f >= 0 {
						sum += f
						n++
					}
				}
				fmt.Fprintf(&b, "  %s %.2f (%.0f%% reach)", id, float64(sum)/math.Max(1, float64(n)), 100*float64(n)/float64(len(eps)))
			}
			var all [4]float64 // episodes where all three cross: sums of ca, pe, ac turns, count
			for _, ep := range eps {
				c, p, a := firstAbove(ep, "ca"), firstAbove(ep, "pe"), firstAbove(ep, "ac")
				if c >= 0 && p >= 0 && a >= 0 {
					all = [4]float64{all[0] + float64(c), all[1] + float64(p), all[2] + float64(a), all[3] + 1}
				}
			}
			fmt.Fprintf(&b, "\n             all three cross (n %d): ca %.2f pe %.2f ac %.2f", int(all[3]), all[0]/all[3], all[1]/all[3], all[2]/all[3])
			bt := map[decision.Terminal][2]float64{}
			for _, ep := range eps {
				v, _ := ep.FinalBelief()
				x := bt[ep.Terminal]
				bt[ep.Terminal] = [2]float64{x[0] + v, x[1] + 1}
			}
			fmt.Fprintf(&b, "\n             B_T by outcome:")
			for _, term := range []decision.Terminal{decision.TermAccept, decision.TermConditional, decision.TermPending, decision.TermReject} {
				x := bt[term]
				fmt.Fprintf(&b, "  %s %.3f (n %d)", term, x[0]/math.Max(1, x[1]), int(x[1]))
			}
			fmt.Fprintf(&b, "  moved %.1f%%\n", 100*movedShare(eps))
		}
		// (e) reliability of the belief before an ask
		all, script := calibrationEval(t, cfg)
		r, err := analysis.AskReliabilityOf(all, 10)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.Table().WriteText(&b)
		fmt.Fprintf(&b, "script (both sets) moved %.1f%%\n", 100*movedShare(script))
	}
	t.Log(b.String())
}
