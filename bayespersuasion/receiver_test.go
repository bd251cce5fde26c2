package bayespersuasion

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
)

func TestDisclosed(t *testing.T) {
	c := prosecutor()
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"Look at [E1].", []int{0}},
		{"e1 and e2: both matter", []int{0, 1}},
		{"a neighbour saw the defendant at home, that night!", []int{1}},
		{"e12 is not an item, nor is be1", nil},
	} {
		if got := Disclosed(c, tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Disclosed(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestReceiverVerifiesAndDecides(t *testing.T) {
	c := prosecutor()
	c.Evidence[0].Likelihood = []float64{0.9, 0.2}
	r := NewReceiver([]*Claim{c}, 2)
	s := r.Session(c, World{State: 0, Holds: []bool{true, false}})
	ctx := context.Background()
	tr := []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "See e2, the alibi."}}
	rep, _ := s.Reply(ctx, tr)
	// e2 does not hold: ignored, nothing new, so the receiver decides now.
	if rep.Decision != decision.Reject || s.Posterior()[0] != 0.3 {
		t.Errorf("unverifiable item: decision %s, belief %g; want reject at the prior 0.3", rep.Decision, s.Posterior()[0])
	}
	s = r.Session(c, World{State: 0, Holds: []bool{true, false}})
	rep, _ = s.Reply(ctx, []episode.Message{{Speaker: episode.PersuaderSpeaker, Text: "[e1]"}})
	if rep.Decision != decision.Continue {
		t.Errorf("turn 1 of 2 with new evidence: decision %s, want continue", rep.Decision)
	}
	if got := s.ProbeProbabilities(nil, Basis)[0]; math.Abs(got-0.27/0.41) > 1e-12 {
		t.Errorf("probe = %g, want %g", got, 0.27/0.41)
	}
	if s.Likert() != 5 { // 1 + round(6·0.6585) = 5
		t.Errorf("Likert = %d, want 5", s.Likert())
	}
	tr = append(tr, episode.Message{Speaker: episode.PersuadeeSpeaker, Text: rep.Text},
		episode.Message{Speaker: episode.PersuaderSpeaker, Text: "that is all"})
	if rep, _ = s.Reply(ctx, tr); rep.Decision != decision.Accept {
		t.Errorf("final: decision %s, want accept (P(guilty) = 0.66 ≥ 0.5)", rep.Decision)
	}
}

func TestPlayProsecutor(t *testing.T) {
	c := prosecutor()
	b, err := Optimum(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The optimal-signal sender convicts whenever guilty (e1 always holds
	// then) and, when innocent, when it draws "convict" (3/7) and e1 holds
	// (3/7): mean 0.3 + 0.7·9/49 ≈ 0.4286, below the optimum 0.6 because
	// the pool's item is not coupled to the sender's draw. Full disclosure
	// approaches PoolAll = 0.30 and is exact per world.
	var opt, full float64
	const n = 400
	for k := range n {
		seed := EpisodeSeed(1, c, k)
		w := DrawWorld(c, episode.Mix(seed^3))
		ro, err := Play(ctx, c, b, StrategySender(OptimalSignal(map[string]Benchmarks{c.ID: b})), BayesRole{}, Static, seed)
		if err != nil {
			t.Fatal(err)
		}
		rf, _ := Play(ctx, c, b, StrategySender(FullDisclosure), BayesRole{}, Static, seed)
		wantOpt := ro.Gain
		if w.State == 0 || !w.Holds[0] {
			wantOpt = map[bool]float64{true: 1, false: 0}[w.Holds[0]] // e1 alone takes P(guilty) to 0.5
		}
		wantFull := 0.0
		if w.Holds[0] && !w.Holds[1] {
			wantFull = 1
		}
		if ro.Gain != wantOpt || rf.Gain != wantFull {
			t.Fatalf("world %+v: gains optimal %g full %g, want %g %g", w, ro.Gain, rf.Gain, wantOpt, wantFull)
		}
		if (ro.Terminal == decision.TermAccept) != (wantOpt == 1) || ro.Turns != 1 {
			t.Fatalf("world %+v: terminal %s after %d turns", w, ro.Terminal, ro.Turns)
		}
		opt += ro.Gain
		full += rf.Gain
	}
	if math.Abs(opt/n-(0.3+0.7*9.0/49)) > 0.06 || math.Abs(full/n-0.3) > 0.06 {
		t.Errorf("mean gains: optimal %.3f (want ≈ 0.43), full %.3f (want ≈ 0.3)", opt/n, full/n)
	}
}
