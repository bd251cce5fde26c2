package fidelity

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
)

// fake is a persuadee whose belief and decisions are scripted per
// scenario: beliefs[0] is B_0 and beliefs[k] the belief after its k-th
// reply; after a terminal decision it refuses to reply, as sim does.
type fake struct {
	beliefs   map[string][]float64
	decisions map[string][]decision.Decision
	// flip names probes answered with 1 - belief instead.
	flip map[string]bool
}

func (f *fake) Name() string { return "fake" }

func (f *fake) Start(_ context.Context, sc *scenario.Scenario, _ uint64) (episode.PersuadeeSession, error) {
	return &fakeSession{f: f, id: sc.ID}, nil
}

type fakeSession struct {
	f       *fake
	id      string
	replies int
	ended   bool
	seen    []int // transcript length seen at each reply
}

func (s *fakeSession) Reply(_ context.Context, tr []episode.Message) (episode.Reply, error) {
	if s.ended {
		return episode.Reply{}, errors.New("already decided")
	}
	s.seen = append(s.seen, len(tr))
	s.replies++
	d := decision.Continue
	if ds := s.f.decisions[s.id]; s.replies-1 < len(ds) && ds[s.replies-1] != "" {
		d = ds[s.replies-1]
	}
	s.ended = d.Terminal()
	return episode.Reply{Text: "ok", Decision: d}, nil
}

func (s *fakeSession) Probe(_ context.Context, _ []episode.Message, basis probe.Basis) ([]probe.Answer, error) {
	bs := s.f.beliefs[s.id]
	b := bs[min(s.replies, len(bs)-1)]
	out := make([]probe.Answer, len(basis))
	for k := range out {
		out[k] = probe.FromProbability(b)
		if s.f.flip[basis[k].ID] {
			out[k] = probe.FromProbability(1 - b)
		}
	}
	return out, nil
}

func sc(id string, split scenario.Split, donation float64, utts []string, acts [][]string) scenario.Scenario {
	return scenario.Scenario{ID: id, Split: split, Outcome: &scenario.Outcome{
		Donation: &donation, PersuaderUtterances: utts, PersuadeeActs: acts}}
}

func TestAUCOfFinalBelief(t *testing.T) {
	two := []string{"hello", "please give"}
	ss := []scenario.Scenario{
		sc("a", scenario.Heldout, 0, two, nil),
		sc("b", scenario.Heldout, 0, two, nil),
		sc("c", scenario.Heldout, 1.5, two, nil),
		sc("d", scenario.Train, 0.2, two, nil),
	}
	// Final beliefs 0.1, 0.4, 0.35, 0.8 against donated 0, 0, 1, 1: of the
	// four donor/non-donor pairs only (c 0.35 < b 0.4) is misordered, so
	// AUC = 3/4. Heldout (a, b, c): c beats a, loses to b: 1/2. B_0 is 0.5
	// for all: every pair tied, AUC 1/2.
	f := &fake{beliefs: map[string][]float64{
		"a": {0.5, 0.3, 0.1}, "b": {0.5, 0.45, 0.4}, "c": {0.5, 0.2, 0.35}, "d": {0.5, 0.6, 0.8},
	}}
	for _, workers := range []int{1, 3} {
		rep, err := Run(context.Background(), ss, f, Options{Seed: 5, Resamples: 2000, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		fin := rep.Final
		if fin.N != 4 || fin.Positives != 2 || fin.BaseRate != 0.5 || fin.AUC == nil || math.Abs(*fin.AUC-0.75) > 1e-12 {
			t.Errorf("final %+v, want n 4, 2 positives, AUC 0.75", fin)
		}
		if !(*fin.Lo <= 0.75 && 0.75 <= *fin.Hi) {
			t.Errorf("CI [%v, %v] misses 0.75", *fin.Lo, *fin.Hi)
		}
		// mean belief of donors (0.35+0.8)/2, non-donors (0.1+0.4)/2
		if math.Abs(*fin.MeanPos-0.575) > 1e-9 || math.Abs(*fin.MeanNeg-0.25) > 1e-9 {
			t.Errorf("means %v %v, want 0.575 0.25", *fin.MeanPos, *fin.MeanNeg)
		}
		if h := rep.Heldout; h.N != 3 || h.Positives != 1 || math.Abs(*h.AUC-0.5) > 1e-12 {
			t.Errorf("heldout %+v, want n 3, AUC 0.5", h)
		}
		if i := rep.Initial; math.Abs(*i.AUC-0.5) > 1e-12 {
			t.Errorf("initial AUC %v, want 0.5", *i.AUC)
		}
		if rep.Decisions[decision.Continue] != 4 || rep.Scenarios != 4 || rep.Failed != 0 {
			t.Errorf("decisions %v scenarios %d failed %d", rep.Decisions, rep.Scenarios, rep.Failed)
		}
	}
}

func TestAgreement(t *testing.T) {
	// Dialogue A: turn 2 has no persuader sentence and is skipped.
	//   real:  t0 greeting (0), t1 + , t2 + (skipped), t3 -, t4 tie (0)
	//   beliefs 0.5 -> t0 0.5 (r 0: 0), t1 0.6 (+), t3 0.65 (+), t4 0.645
	//   (r -0.005: -, but the real turn is a tie).
	// Dialogue B: real t0 -, t1 -, t2 +; sim t0 0.4 (r -0.1: -), t1 rejects
	//   (decision wins over r +0.05: -), then refuses to reply: t2 not
	//   replayed.
	// Both polar: A t1 (+,+), A t3 (-,+), B t0 (-,-), B t1 (-,-): 3 of 4
	// agree. Kappa: real (+,-,-,-), sim (+,+,-,-): p_o 0.75, p_e
	// 0.25*0.5 + 0.75*0.5 = 0.5, kappa 0.5.
	ss := []scenario.Scenario{
		sc("A", scenario.Train, 1, []string{"hi", "about", " ", "donate?", "thanks"},
			[][]string{{"greeting"}, {"positive-reaction-to-donation"}, {"agree-donation"}, {"disagree-donation"},
				{"agree-donation", "negative-reaction-to-donation"}}),
		sc("B", scenario.Train, 0, []string{"a", "b", "c"},
			[][]string{{"negative-reaction-to-donation"}, {"disagree-donation", "ask-org-info"}, {"agree-donation"}}),
		sc("C", scenario.Train, 0, []string{"x"}, nil), // not annotated
	}
	f := &fake{
		beliefs: map[string][]float64{
			"A": {0.5, 0.5, 0.6, 0.65, 0.645}, "B": {0.5, 0.4, 0.45}, "C": {0.5, 0.9},
		},
		decisions: map[string][]decision.Decision{"B": {"", decision.Reject}},
	}
	rep, err := Run(context.Background(), ss, f, Options{Seed: 1, Resamples: 100})
	if err != nil {
		t.Fatal(err)
	}
	a := rep.Agreement
	if a.Scenarios != 2 || a.RealPolar != 6 || a.SimPolar != 5 || a.Both != 4 || a.Agree != 3 {
		t.Errorf("agreement counts %+v, want scenarios 2, real 6, sim 5, both 4, agree 3", a)
	}
	if math.Abs(*a.Rate-0.75) > 1e-12 || math.Abs(*a.Kappa-0.5) > 1e-12 {
		t.Errorf("rate %v kappa %v, want 0.75 0.5", *a.Rate, *a.Kappa)
	}
	if a.Confusion != [2][2]int{{1, 0}, {1, 2}} {
		t.Errorf("confusion %v", a.Confusion)
	}
	// Wilson 95% for 3/4: [0.3006, 0.9544].
	if math.Abs(*a.RateLo-0.3006) > 1e-4 || math.Abs(*a.RateHi-0.9544) > 1e-4 {
		t.Errorf("Wilson [%v, %v], want [0.3006, 0.9544]", *a.RateLo, *a.RateHi)
	}
	var trB *Trace
	for _, tr := range rep.Traces {
		if tr.ScenarioID == "B" {
			trB = tr
		}
	}
	if trB == nil || !trB.Closed || trB.Decision != decision.Reject || trB.DecisionTurn != 1 || len(trB.Turns) != 2 ||
		math.Abs(*trB.BT-0.45) > 1e-9 {
		t.Errorf("trace B %+v", trB)
	}
	if rep.Decisions[decision.Reject] != 1 || rep.Closed != 1 {
		t.Errorf("decisions %v closed %d", rep.Decisions, rep.Closed)
	}
}

func TestReplayTranscript(t *testing.T) {
	// The persuadee sees persuader, own reply, persuader, ...: transcript
	// lengths 1, 3, 5 at its three replies (the empty turn is skipped).
	f := &fake{beliefs: map[string][]float64{"x": {0.5}}}
	s := sc("x", scenario.Val, 0, []string{"one", "", "two", "three"}, nil)
	var got *fakeSession
	g := &capture{f: f, out: &got}
	tr, err := Replay(context.Background(), &s, g, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Turns) != 3 || tr.Turns[1].Turn != 2 || got == nil || len(got.seen) != 3 || got.seen[0] != 1 || got.seen[1] != 3 || got.seen[2] != 5 {
		t.Errorf("turns %+v seen %v", tr.Turns, got.seen)
	}
	// No utterances: an error naming the scenario.
	empty := sc("e", scenario.Val, 0, nil, nil)
	if _, err := Replay(context.Background(), &empty, f, nil, 1); err == nil {
		t.Error("no utterances: no error")
	}
}

// capture wraps fake to expose the session it started.
type capture struct {
	f   *fake
	out **fakeSession
}

func (c *capture) Name() string { return "capture" }
func (c *capture) Start(ctx context.Context, s *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	sess, err := c.f.Start(ctx, s, seed)
	*c.out = sess.(*fakeSession)
	return sess, err
}

func TestPolarities(t *testing.T) {
	r := func(x float64) *float64 { return &x }
	cases := []struct {
		d    decision.Decision
		r    *float64
		want Polarity
	}{
		{decision.Accept, r(-0.5), Positive},
		{decision.Conditional, nil, Positive},
		{decision.Reject, r(0.3), Negative},
		{decision.Continue, r(0.01), Positive},
		{decision.Continue, r(0.0001), Positive},
		{decision.Continue, r(0), Neutral},
		{decision.Continue, r(-0.02), Negative},
		{decision.Continue, nil, Neutral},
	}
	for _, c := range cases {
		if got := SimPolarity(c.d, c.r); got != c.want {
			t.Errorf("SimPolarity(%s, %v) = %d, want %d", c.d, c.r, got, c.want)
		}
	}
	if ActPolarity([]string{"positive-reaction-to-donation", "negative-reaction-to-donation", "disagree-donation"}) != Negative ||
		ActPolarity([]string{"ask-org-info"}) != Neutral || ActPolarity(nil) != Neutral ||
		ActPolarity([]string{"agree-donation", "greeting"}) != Positive {
		t.Error("ActPolarity")
	}
}

// stating is a fake whose sessions state a polarity per reply.
type stating struct {
	fake
	stated []int
}

func (s *stating) Start(ctx context.Context, sc *scenario.Scenario, seed uint64) (episode.PersuadeeSession, error) {
	sess, err := s.fake.Start(ctx, sc, seed)
	return &statingSession{fakeSession: sess.(*fakeSession), stated: s.stated}, err
}

type statingSession struct {
	*fakeSession
	stated []int
}

func (s *statingSession) ReplyPolarity() int { return s.stated[s.replies-1] }

func TestStatedPolarityComesFirst(t *testing.T) {
	// Beliefs rise every turn (r_t > 0); the replies state -, 0, +: the
	// compared polarity is -, + (from r_t), +, and the dense-only one +, +, +.
	ss := []scenario.Scenario{sc("s", scenario.Train, 1, []string{"a", "b", "c"},
		[][]string{{"agree-donation"}, {"agree-donation"}, {"agree-donation"}})}
	f := &stating{fake: fake{beliefs: map[string][]float64{"s": {0.1, 0.2, 0.3, 0.4}}}, stated: []int{-1, 0, 1}}
	rep, err := Run(context.Background(), ss, f, Options{Seed: 1, Resamples: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []Polarity
	for _, tt := range rep.Traces[0].Turns {
		got = append(got, tt.Sim)
	}
	if len(got) != 3 || got[0] != Negative || got[1] != Positive || got[2] != Positive {
		t.Errorf("sim polarities %v, want - + +", got)
	}
	if rep.Agreement.Agree != 2 || rep.AgreementDense.Agree != 3 || rep.AgreementDense.Both != 3 {
		t.Errorf("agree %d, dense agree %d of %d", rep.Agreement.Agree, rep.AgreementDense.Agree, rep.AgreementDense.Both)
	}
}

func TestSources(t *testing.T) {
	two := []string{"hello", "please give"}
	typed := func(id string, r scenario.Resistance, donation float64) scenario.Scenario {
		s := sc(id, scenario.Train, donation, two, nil)
		s.Hidden.Resistance = r
		return s
	}
	ss := []scenario.Scenario{
		typed("e1", scenario.EntrenchedBelief, 1), typed("e2", scenario.EntrenchedBelief, 0), typed("e3", scenario.EntrenchedBelief, 0),
		typed("a1", scenario.AmbivalentAvoidance, 1), typed("a2", scenario.AmbivalentAvoidance, 0), typed("a3", scenario.AmbivalentAvoidance, 2),
	}
	// B_0 / B_T: e1 .6/.2 (donor), e2 .4/.1, e3 .5/.3; a1 .3/.9 (donor),
	// a2 .2/.8, a3 .1/.7 (donor).
	// Within types, B_T: EB e1 beats e2, loses to e3 (1 of 2); AA a1 beats
	// a2, a3 loses to it (1 of 2): 2/4 = 0.5. B_0: EB 2 of 2, AA 1 of 2:
	// 3/4 = 0.75. Pooled, B_T: donors .2, .9, .7 against .1, .3, .8 win
	// 1 + 3 + 2 of 9; B_0: .6, .3, .1 against .4, .5, .2 win 3 + 1 + 0 of 9.
	f := &fake{beliefs: map[string][]float64{
		"e1": {0.6, 0.4, 0.2}, "e2": {0.4, 0.3, 0.1}, "e3": {0.5, 0.4, 0.3},
		"a1": {0.3, 0.5, 0.9}, "a2": {0.2, 0.5, 0.8}, "a3": {0.1, 0.5, 0.7},
	}, flip: map[string]bool{"pe": true}}
	rep, err := Run(context.Background(), ss, f, Options{Seed: 1, Resamples: 200})
	if err != nil {
		t.Fatal(err)
	}
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-12 }
	// B = mean(b, 1-b, b) = (1+b)/3 is monotone in b: the pooled figures
	// are b's.
	if !near(rep.Final.AUC, 6.0/9) || !near(rep.Initial.AUC, 4.0/9) {
		t.Errorf("pooled AUC B_T %v, B_0 %v; want 6/9, 4/9", rep.Final.AUC, rep.Initial.AUC)
	}
	src := rep.Sources
	if !near(src.WithinBT.AUC, 0.5) || !near(src.WithinB0.AUC, 0.75) || !near(src.WithinDiff.Diff, -0.25) {
		t.Errorf("within B_T %v, B_0 %v, diff %v; want 0.5, 0.75, -0.25", src.WithinBT.AUC, src.WithinB0.AUC, src.WithinDiff.Diff)
	}
	if src.WithinBT.N != 6 || src.WithinBT.Lo == nil || src.WithinDiff.Lo == nil {
		t.Errorf("within: n %d, intervals %v %v", src.WithinBT.N, src.WithinBT.Lo, src.WithinDiff.Lo)
	}
	if len(src.Types) != 2 || src.Types[0].Type != scenario.EntrenchedBelief || src.Types[1].Type != scenario.AmbivalentAvoidance {
		t.Fatalf("types %+v, want EB then AA", src.Types)
	}
	eb, aa := src.Types[0], src.Types[1]
	if eb.N != 3 || aa.N != 3 || eb.Positives != 1 || !near(eb.B0, 1) || !near(eb.BT, 0.5) || aa.Positives != 2 || !near(aa.B0, 0.5) || !near(aa.BT, 0.5) {
		t.Errorf("EB %+v, AA %+v; want EB 1 donor, B_0 1, B_T 0.5; AA 2 donors, 0.5, 0.5", eb, aa)
	}
	// pe answers 1 - b: its AUCs are 1 - b's; ca and ac are b's.
	want := map[string][2]float64{"ca": {4.0 / 9, 6.0 / 9}, "pe": {5.0 / 9, 3.0 / 9}, "ac": {4.0 / 9, 6.0 / 9}}
	if len(src.Probes) != 3 {
		t.Fatalf("probes %+v, want ca, pe, ac", src.Probes)
	}
	for i, id := range []string{"ca", "pe", "ac"} {
		p := src.Probes[i]
		if p.Probe != id || !near(p.Initial, want[id][0]) || !near(p.Final.AUC, want[id][1]) {
			t.Errorf("probe %d %+v, want %s at t=0 %v, final %v", i, p, id, want[id][0], want[id][1])
		}
	}
	if strings.Join(rep.Basis, ",") != "ca,pe,ac" {
		t.Errorf("basis %v, want ca, pe, ac", rep.Basis)
	}
	if tab := rep.Table(); !strings.Contains(tab, "probes ca,pe,ac, seed 1") || !strings.Contains(tab, "(a2) where B_T gains or loses") || !strings.Contains(tab, "probe pe P(Yes) at B_T") {
		t.Errorf("table lacks the (a2) rows:\n%s", tab)
	}
	// A one-probe basis has no per-probe rows.
	rep, err = Run(context.Background(), ss, f, Options{Basis: probe.AgreementBasis, Seed: 1, Resamples: 10})
	if err != nil || len(rep.Sources.Probes) != 0 || !near(rep.Sources.WithinBT.AUC, 0.5) {
		t.Errorf("agreement basis: err %v, probes %+v, within %v", err, rep.Sources.Probes, rep.Sources.WithinBT.AUC)
	}
}
