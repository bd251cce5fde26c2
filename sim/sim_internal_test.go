package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/perception"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// fixture returns a three-concern scenario of resistance r.
func fixture(r scenario.Resistance, stance float64) *scenario.Scenario {
	return &scenario.Scenario{
		ID: "fx", Split: scenario.Heldout, Domain: "flu vaccination for night-shift nurses",
		Family: scenario.Healthcare, Proposal: "Get the seasonal flu shot at the staff clinic this week.",
		Persuader: scenario.Party{Name: "Dana", Role: "infection-control lead"},
		Persuadee: scenario.Party{Name: "Sam", Role: "night-shift nurse"},
		Closeness: scenario.Professional,
		Hidden: scenario.HiddenProfile{
			Resistance: r, InitialStance: stance,
			Concerns: []scenario.Concern{
				{ID: "side-effects", Description: "Last time the shot left me feverish for two days.", Keywords: []string{"fever"}},
				{ID: "timing", Description: "The clinic is only open while I sleep.", Keywords: []string{"hours"}},
				{ID: "efficacy", Description: "I doubt this year's vaccine even matches the strain.", Keywords: []string{"strain"}},
			},
			Constraints: []string{"I work four nights a week"},
		},
	}
}

// quiet is the hand-set config (HandConfig) without noise, spontaneous
// decisions or per-person variation, so every update is hand-computable
// with the values these tests name.
func quiet() Config {
	c := samePerson(HandConfig())
	c.NoiseSD = 0
	c.Spontaneous = 0
	return c
}

// samePerson returns c without per-person variation (FirmShare,
// PersonSD and every PlanSpread 0): every person's gain and reactance
// factors are 1 and each needs its type's Plans.
func samePerson(c Config) Config {
	c.FirmShare, c.PersonSD = 0, 0
	c.EB.PlanSpread, c.IT.PlanSpread, c.AR.PlanSpread, c.AA.PlanSpread = 0, 0, 0, 0
	return c
}

func start(t *testing.T, c Config, sc *scenario.Scenario) *session {
	t.Helper()
	s, err := New(c).start(context.Background(), sc, 7)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func acts(as ...tagger.Act) tagger.Tags {
	var t tagger.Tags
	for _, a := range as {
		t.Acts = t.Acts.With(a)
	}
	return t
}

func touch(n int, idx ...int) []bool {
	out := make([]bool, n)
	for _, i := range idx {
		out[i] = true
	}
	return out
}

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("%s = %.15g, want %.15g", name, got, want)
	}
}

// One diagnostic question to an IT persuadee raises rapport by exactly
// RapportDiag and voices the most salient concern (the first).
func TestDiagnosticRaisesRapportAndVoices(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.IdentityThreat, -0.4))
	near(t, "u0", s.u, c.Rapport0[3]) // professional
	d := s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	if d != decision.Continue {
		t.Fatalf("decision %s", d)
	}
	near(t, "u", s.u, 0.15+0.20)
	if s.state[0] != voiced || s.state[1] != hidden || s.state[2] != hidden {
		t.Fatalf("states %v, want only the first concern voiced", s.state)
	}
	// o = -0.4 + GainDiag(IT) = -0.37; willing = o - Accept - ACBlock * 3
	// obstacles (one voiced, two hidden blocking concerns) = -2.02;
	// q = 0.75*(-0.5) + 0.25*clamp(MoveDiag(IT) 0.7 + PEOpen*willing, -1, 1)
	near(t, "o", s.o, -0.37)
	near(t, "q", s.q, 0.75*-0.5+0.25*max(-1, 0.7-2.02))
	if txt := s.render(); !strings.Contains(txt, "Last time the shot left me feverish for two days.") {
		t.Fatalf("reply %q does not voice the concern", txt)
	}
}

// EB: evidence on a voiced concern addresses it (+AddressTotal/n); evidence
// on nothing voiced is a bare assertion (-BadMove).
func TestEntrenchedBeliefEvidence(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, -0.4))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	near(t, "o after diag", s.o, -0.39) // GainDiag(EB) = 0.01
	s.observe(pcOf(acts(tagger.Evidence), touch(3, 0)))
	if s.state[0] != addressed {
		t.Fatalf("concern 0 state %d, want addressed", s.state[0])
	}
	near(t, "o after evidence", s.o, -0.39+1.0/3) // AddressTotal/n

	b := start(t, c, fixture(scenario.EntrenchedBelief, -0.4))
	b.observe(pcOf(acts(tagger.Evidence), touch(3)))
	near(t, "o after bare assertion", b.o, -0.4-0.08)
	if !b.ev.bad {
		t.Fatal("bare assertion not flagged")
	}
	// q = 0.75*(-0.5) + 0.25*clamp(MoveEvidence 0.3 + MoveBad -1 + willing -1.68) = -0.625
	near(t, "q", b.q, -0.625)
}

// EB (Dilution): evidence that addresses a voiced concern beside plan
// detail weighs half, beside plan detail and autonomy support a third; a
// question beside it takes nothing, and an autonomy phrase taken back by
// a manipulation cue still dilutes. Each gain is the turn's openness
// with the concern answered less the same turn's without, undamped by
// reactance (BadMove 0, so the unanswered turn's misstep costs nothing).
func TestDilution(t *testing.T) {
	c := quiet()
	c.EB.BadMove = 0
	gain := func(tg tagger.Tags, cues perception.CueSet) float64 {
		o := [2]float64{}
		var s *session
		for k, answered := range []bool{true, false} {
			s = start(t, c, fixture(scenario.EntrenchedBelief, -0.4))
			s.observe(pcOf(acts(tagger.Diagnostic), touch(3))) // voices concern 0
			pc := pcOf(tg, touch(3))
			if answered {
				pc = pcOf(tg, touch(3, 0))
			}
			pc.Cues = cues
			s.observe(pc)
			if answered && s.state[0] != addressed {
				t.Fatalf("%v: concern 0 not addressed", tg.Acts.Strings())
			}
			o[k] = s.o
		}
		return (o[0] - o[1]) * (1 + s.rho) / s.trust
	}
	whole := gain(acts(tagger.Evidence), 0)
	near(t, "evidence alone", whole, 1.0/3) // AddressTotal/n
	for _, x := range []struct {
		name  string
		tags  tagger.Tags
		cues  perception.CueSet
		share float64
	}{
		{"evidence + question", acts(tagger.Diagnostic, tagger.Evidence), 0, 1},
		{"evidence + plan", acts(tagger.Evidence, tagger.Plan), 0, 1.0 / 2},
		{"evidence + plan + autonomy", acts(tagger.Evidence, tagger.Plan, tagger.Autonomy), 0, 1.0 / 3},
		{"evidence + autonomy, with a cue", acts(tagger.Evidence, tagger.Autonomy), perception.CueSet(0).With(perception.Urgency), 1.0 / 2},
	} {
		near(t, x.name, gain(x.tags, x.cues), x.share*whole)
	}
}

// Touching a concern in the same turn it is voiced does not address it: the
// persuader must answer what it has heard.
func TestTouchVoicesButDoesNotAddress(t *testing.T) {
	s := start(t, quiet(), fixture(scenario.EntrenchedBelief, 0))
	s.observe(pcOf(acts(tagger.Evidence), touch(3, 2)))
	if s.state[2] != voiced {
		t.Fatalf("state %d, want voiced", s.state[2])
	}
	if txt := s.render(); !strings.Contains(txt, "strain") {
		t.Fatalf("reply %q does not voice the touched concern", txt)
	}
}

// IT: a challenge before rapport reaches Understood backfires; after two
// diagnostic questions the same evidence addresses the concern.
func TestIdentityThreatBackfire(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.IdentityThreat, -0.4))
	s.observe(pcOf(acts(tagger.Evidence), touch(3)))
	// o = -0.4 - BadMove 0.15 - ReactLeak 0.06 * ReactBackfire 0.2
	near(t, "o", s.o, -0.4-0.15-0.06*0.2)
	near(t, "rho", s.rho, 0.2)

	s2 := start(t, c, fixture(scenario.IdentityThreat, -0.4))
	s2.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s2.observe(pcOf(acts(tagger.Evidence), touch(3, 0))) // u = 0.35 < 0.45: backfire, not addressed
	if s2.state[0] != voiced || !s2.ev.bad {
		t.Fatalf("low-rapport evidence: state %d bad %v", s2.state[0], s2.ev.bad)
	}
	s3 := start(t, c, fixture(scenario.IdentityThreat, -0.4))
	s3.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s3.observe(pcOf(acts(tagger.Diagnostic), touch(3))) // u = 0.55
	near(t, "u", s3.u, 0.55)
	o := s3.o
	s3.observe(pcOf(acts(tagger.Evidence), touch(3, 0)))
	if s3.state[0] != addressed || s3.ev.bad {
		t.Fatalf("understood evidence: state %d bad %v", s3.state[0], s3.ev.bad)
	}
	// + AddressTotal/3 + GainEvidence(IT) 0.03, rapport echo does not move o
	near(t, "o gain", s3.o-o, 1.0/3+0.03)
}

// AR: an ask without autonomy support builds reactance ReactAsk and costs
// BadMove; autonomy support then calms it by Calm after decay.
func TestAutonomyReactance(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.AutonomyResistance, -0.4))
	d := s.observe(pcOf(acts(tagger.Commitment), touch(3)))
	near(t, "rho", s.rho, 0.35)
	near(t, "u", s.u, 0.15-0.05)
	near(t, "o", s.o, -0.4-0.05-0.06*0.35)
	if d != decision.Continue {
		t.Fatalf("decision %s, want continue", d)
	}
	if s.state[0] != voiced {
		t.Fatal("an ask should surface the most salient concern")
	}
	s.observe(pcOf(acts(tagger.Autonomy), touch(3)))
	near(t, "rho calmed", s.rho, 0.35*0.85*0.5)

	// pressure: 2 markers and an ask, twice, reaches RejectReactance
	p := start(t, c, fixture(scenario.AutonomyResistance, 0.5))
	tg := acts(tagger.Commitment)
	tg.Pressure = 2
	if d := p.observe(pcOf(tg, touch(3))); d != decision.Continue {
		t.Fatalf("first pushy turn: %s", d)
	}
	near(t, "rho", p.rho, 0.35+0.6)
	if d := p.observe(pcOf(tg, touch(3))); d != decision.Reject {
		t.Fatalf("second pushy turn: %s (rho %g), want reject", d, p.rho)
	}
}

// AA: asks are deflected until two turns with plan detail; then, with no
// open concern and enough openness, it accepts. Each step hand-computed.
func TestAmbivalentNeedsPlan(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.AmbivalentAvoidance, 0.6))
	if d := s.observe(pcOf(acts(tagger.Commitment), touch(3))); d != decision.Continue {
		t.Fatalf("ask without plan: %s, want continue", d)
	}
	if s.countState(hidden) != 3 {
		t.Fatal("an AA persuadee should not surface concerns on an ask")
	}
	// - BadMove 0.03 - ReactLeak 0.06 * rho (ReactAsk 0.35 * Reactance 0.3)
	rho := 0.35 * 0.3
	o := 0.6 - 0.03 - 0.06*rho
	near(t, "o", s.o, o)
	planAsk := acts(tagger.Plan, tagger.Commitment)
	if d := s.observe(pcOf(planAsk, touch(3))); d != decision.Continue {
		t.Fatalf("ask with one plan: %s, want continue", d)
	}
	rho = rho*0.85 + 0.105
	o += 0.12/(1+rho) - 0.06*rho // GainPlan scaled by 1/(1+rho); the second ask is within FatigueFree
	near(t, "o after one plan", s.o, o)
	if d := s.observe(pcOf(planAsk, touch(3))); d != decision.Accept {
		t.Fatalf("ask with two plans: %s (o %g), want accept", d, s.o)
	}
	rho = rho*0.85 + 0.105
	o += 0.12/(1+rho) - 0.06*rho - 0.04 // third ask: fatigue 0.04
	near(t, "o after two plans and the yes", s.o, math.Min(o+c.CommitGain, 1))
}

// AA: plan detail resolves the most salient voiced concern it touches
// (acknowledges or answers), even without answering it; not one it does
// not touch or dismisses, and none when it comes with a manipulation cue.
func TestAmbivalentPlanResolves(t *testing.T) {
	s := start(t, quiet(), fixture(scenario.AmbivalentAvoidance, 0))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s.observe(pcOf(acts(tagger.Evidence), touch(3, 0))) // evidence does not address AA concerns
	if s.state[0] != voiced {
		t.Fatalf("evidence addressed an AA concern: %v", s.state)
	}
	s.observe(pcOf(acts(tagger.Plan), touch(3)))
	if s.state[0] != voiced {
		t.Fatalf("a plan that does not touch the open concern resolved it: %v", s.state)
	}
	ack := func(cues perception.CueSet) *perception.Perception {
		pc := pcOf(acts(tagger.Plan), touch(3))
		pc.Concerns[0], pc.Cues = perception.Acknowledged, cues
		return pc
	}
	o := s.o
	s.observe(ack(0))
	if s.state[0] != addressed {
		t.Fatalf("a plan that touches the open concern did not resolve it: %v", s.state)
	}
	near(t, "o gain", s.o-o, 1.0/3+0.12)

	s = start(t, quiet(), fixture(scenario.AmbivalentAvoidance, 0))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s.observe(ack(perception.CueSet(0).With(perception.Urgency)))
	if s.state[0] != voiced {
		t.Fatalf("a plan with a manipulation cue resolved the open concern: %v", s.state)
	}

	// a dismissed worry is not settled by the plan beside the dismissal
	s = start(t, quiet(), fixture(scenario.AmbivalentAvoidance, 0))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	pc := pcOf(acts(tagger.Plan), touch(3))
	pc.Concerns[0] = perception.Dismissed
	s.observe(pc)
	if s.state[0] != voiced {
		t.Fatalf("a plan that dismisses the open concern resolved it: %v", s.state)
	}

	// two voiced worries touched: the plan settles the more salient one
	s = start(t, quiet(), fixture(scenario.AmbivalentAvoidance, 0))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	if s.state[0] != voiced || s.state[1] != voiced {
		t.Fatalf("two questions voiced %v, want concerns 0 and 1", s.state)
	}
	pc = pcOf(acts(tagger.Plan), touch(3))
	pc.Concerns[0], pc.Concerns[1] = perception.Acknowledged, perception.Acknowledged
	s.observe(pc)
	if s.state[0] != addressed || s.state[1] != voiced {
		t.Fatalf("a plan touching both voiced concerns left %v, want only concern 0 settled", s.state)
	}
}

// Decisions on an ask: conditional names the open concern; accept needs
// every voiced concern addressed.
func TestConditionalNamesConcern(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, 0.5))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	d := s.observe(pcOf(acts(tagger.Evidence, tagger.Commitment), touch(3)))
	if d != decision.Conditional || s.ev.condition != 0 {
		t.Fatalf("decision %s condition %d, want conditional on concern 0", d, s.ev.condition)
	}
	if txt := s.render(); !strings.Contains(txt, "feverish") {
		t.Fatalf("conditional reply %q does not name the condition", txt)
	}

	a := start(t, c, fixture(scenario.EntrenchedBelief, 0.5))
	a.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	a.observe(pcOf(acts(tagger.Evidence), touch(3, 0)))
	c.Blocking = 0
	a.cfg = &c
	if d := a.observe(pcOf(acts(tagger.Autonomy, tagger.Commitment), touch(3))); d != decision.Accept {
		t.Fatalf("decision %s (o %g), want accept", d, a.o)
	}
	if txt := a.render(); !strings.Contains(txt, "get the seasonal flu shot at the staff clinic this week") {
		t.Fatalf("accept reply %q does not restate the proposal", txt)
	}
}

// Repeated pressure at low openness ends in rejection.
func TestPressureAtLowOpennessRejects(t *testing.T) {
	s := start(t, quiet(), fixture(scenario.EntrenchedBelief, -0.5))
	tg := acts(tagger.Commitment)
	tg.Pressure = 1
	if d := s.observe(pcOf(tg, touch(3))); d != decision.Continue {
		t.Fatalf("first: %s", d)
	}
	if d := s.observe(pcOf(tg, touch(3))); d != decision.Reject || s.ev.rejectWhy != rejectPressure {
		t.Fatalf("second: %s why %d, want reject for pressure", d, s.ev.rejectWhy)
	}
}

// Probes at t = 0 are low and follow the documented formulas.
func TestProbeValues(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, -0.4))
	ca, pe, ac := s.probs()
	// nothing addressed, three hidden blocking concerns (3 obstacles)
	near(t, "ca0", ca, sigmoid(10*(0.3*0.15-0.75))) // CAWeight 0.3
	near(t, "pe0", pe, sigmoid(6*(-0.5-0.3)))
	near(t, "ac0", ac, sigmoid(2*(-0.4-0.3-0.45*3-0.2))) // ACK 2, ACC 0.2
	if b := (ca + pe + ac) / 3; b > 0.1 {
		t.Fatalf("B0 = %g, want low (< 0.1)", b)
	}
	ans, err := s.Probe(context.Background(), nil, append(probe.Default, probe.Probe{ID: "mine", Question: "?"}))
	if err != nil || len(ans) != 4 {
		t.Fatal(err, len(ans))
	}
	for k, want := range []float64{ca, pe, ac, (ca + pe + ac) / 3} {
		r := probe.Read("x", ans[k])
		if !r.OK || math.Abs(r.P-want) > 1e-9 {
			t.Errorf("probe %d: p %g ok %v, want %g", k, r.P, r.OK, want)
		}
		ref := probe.FromProbability(want)
		for j := range ref.Top {
			if ans[k].Top[j] != ref.Top[j] {
				t.Errorf("probe %d entry %d: %+v, want FromProbability's %+v", k, j, ans[k].Top[j], ref.Top[j])
			}
		}
	}
	// after addressing the one voiced concern, the two still-hidden
	// blocking concerns count as unaddressed: share 1/3, two obstacles
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s.observe(pcOf(acts(tagger.Evidence), touch(3, 0)))
	ca, _, ac = s.probs()
	near(t, "ca", ca, sigmoid(10*(0.3*s.u+0.7/3-0.75)))
	near(t, "ac", ac, sigmoid(2*(s.o-0.3-0.45*2-0.2)))
}

// CA counts hidden blocking concerns as unaddressed; non-blocking hidden
// ones count only once voiced; AA counts the plan turns it still needs.
func TestAddressedShareAndObstacles(t *testing.T) {
	c := quiet()
	c.Blocking = 2
	s := start(t, c, fixture(scenario.EntrenchedBelief, 0))
	near(t, "share0", s.addressedShare(), 0)
	if n := s.obstacles(); n != 2 {
		t.Fatalf("obstacles %d, want 2 (hidden blocking)", n)
	}
	s.state = []concernState{addressed, hidden, hidden}
	near(t, "share 1 of 2 blocking", s.addressedShare(), 0.5)
	s.state = []concernState{addressed, addressed, voiced}
	near(t, "share with a voiced non-blocking concern", s.addressedShare(), 2.0/3)
	if n := s.obstacles(); n != 0 {
		t.Fatalf("obstacles %d, want 0 (the open concern is not blocking)", n)
	}

	a := start(t, quiet(), fixture(scenario.AmbivalentAvoidance, 0))
	// AA raises nothing on an ask: hidden concerns are not obstacles, the
	// two missing plan turns are (and count in CA's denominator)
	if n := a.obstacles(); n != 2 {
		t.Fatalf("AA obstacles %d, want 2 (plans)", n)
	}
	a.state = []concernState{addressed, hidden, hidden}
	near(t, "AA share", a.addressedShare(), 1.0/(1+2+2))
	a.plans = 1
	near(t, "AA share, one plan", a.addressedShare(), 1.0/(1+2+1))
}

// A content-free turn costs IdleCost openness, adds no noise, and never
// raises perceived persuasiveness.
func TestContentFreeTurn(t *testing.T) {
	c := DefaultConfig() // with noise
	c.Spontaneous = 0
	s := start(t, c, fixture(scenario.AutonomyResistance, -0.2))
	o, q := s.o, s.q
	s.observe(pcOf(tagger.Tags{}, touch(3)))
	near(t, "o", s.o, o-c.IdleCost)
	// m = MoveIdle 0 + PEOpen * willing(<0) pulls q down
	w := o - c.IdleCost - c.Accept - c.ACBlock*3
	near(t, "q", s.q, (1-c.QRate)*q+c.QRate*clamp(c.PEOpen*w, -1, 1))
	// from a high q, a content-free turn lowers it; it never rises
	s.q = -1
	s.observe(pcOf(tagger.Tags{}, touch(3)))
	near(t, "q from the floor", s.q, -1)
}

// A conditional yes raises openness by CommitGain and its condition stops
// counting as an obstacle.
func TestConditionalCommits(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, 0.2))
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	o := s.o
	if n := s.obstacles(); n != 3 {
		t.Fatalf("obstacles %d, want 3", n)
	}
	d := s.observe(pcOf(acts(tagger.Autonomy, tagger.Commitment), touch(3)))
	if d != decision.Conditional || s.ev.condition != 0 {
		t.Fatalf("decision %s condition %d", d, s.ev.condition)
	}
	// autonomy: + GainAutonomy(EB) 0.01; then + CommitGain
	near(t, "o", s.o, o+0.01+c.CommitGain)
	if n := s.obstacles(); n != 2 {
		t.Fatalf("obstacles after the conditional %d, want 2 (concern 1 surfaced by the ask, concern 2 hidden)", n)
	}
}

// Traits: absent traits give unit multipliers; P4G scores move them.
func TestTraits(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, 0))
	for name, v := range map[string]float64{"recv": s.recv, "evW": s.evW, "rapW": s.rapW, "planW": s.planW, "reactW": s.reactW} {
		near(t, name, v, 1)
	}
	sc := fixture(scenario.EntrenchedBelief, 0)
	sc.Hidden.Traits = map[string]float64{"agreeable": 5, "rational": 1, "self_direction": 6, "freedom": 6, "conform": 1, "neurotic": 4}
	s = start(t, c, sc)
	near(t, "recv", s.recv, 1.15)
	near(t, "evW", s.evW, 0.7)
	near(t, "reactW", s.reactW, 1+0.3+0.2)
	near(t, "accept", s.accept, 0.30+0.05*0.5)
	near(t, "noise", s.noiseSD, 0)
}

// Probing reads state only: a probed twin and an unprobed twin of one
// session stay identical in state and wording.
func TestProbeDoesNotChangeState(t *testing.T) {
	a := start(t, DefaultConfig(), fixture(scenario.AutonomyResistance, 0))
	b := start(t, DefaultConfig(), fixture(scenario.AutonomyResistance, 0))
	steps := []tagger.Tags{acts(tagger.Diagnostic, tagger.Evidence), acts(tagger.Plan), acts(tagger.Commitment), acts(tagger.Autonomy)}
	for i, tg := range steps {
		for k := 0; k < 3; k++ {
			if _, err := a.Probe(context.Background(), nil, probe.Default); err != nil {
				t.Fatal(err)
			}
		}
		da, db := a.observe(pcOf(tg, touch(3, i%3))), b.observe(pcOf(tg, touch(3, i%3)))
		ta, tb := a.render(), b.render()
		if da != db || ta != tb || a.o != b.o || a.u != b.u || a.rho != b.rho || a.q != b.q {
			t.Fatalf("turn %d: probed %s %q o=%g, unprobed %s %q o=%g", i, da, ta, a.o, db, tb, b.o)
		}
	}
}

// Replies never repeat consecutively and never leak the type label, over
// long random act sequences for every type.
func TestRepliesVaryAndDoNotLeak(t *testing.T) {
	c := DefaultConfig()
	c.Spontaneous = 0
	banned := []string{"identity", "autonomy", "ambivalen", "entrenched", "reactance", "resistance",
		" EB", " IT ", " AR ", " AA", "neurotic", "agreeable"}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range scenario.Resistances {
		for ep := 0; ep < 200; ep++ {
			sc := fixture(r, rng.Float64()*2-1)
			if ep%2 == 0 {
				sc.Persuader.Name = ""
				sc.Hidden.Constraints = nil
			}
			s := start(t, c, sc)
			prev := ""
			for turn := 0; turn < 10; turn++ {
				tg := tagger.Tags{Acts: tagger.ActSet(rng.IntN(32))}
				if rng.IntN(4) == 0 {
					tg.Pressure = 1
				}
				if tg.Acts.Has(tagger.Commitment) && rng.IntN(2) == 0 {
					tg.Acts &^= 1 << tagger.Commitment
				}
				tc := touch(3)
				for i := range tc {
					tc[i] = rng.IntN(4) == 0
				}
				d := s.observe(pcOf(tg, tc))
				txt := s.render()
				if txt == prev {
					t.Fatalf("%s ep %d turn %d: reply repeated: %q", r, ep, turn, txt)
				}
				if txt == "" || strings.Contains(txt, "{") || strings.Contains(txt, "  ") {
					t.Fatalf("bad reply %q", txt)
				}
				if strings.Count(txt, "Dana, ") > 1 {
					t.Fatalf("persuader addressed twice in one reply: %q", txt)
				}
				for _, b := range banned {
					if strings.Contains(strings.ToLower(txt), strings.ToLower(b)) && !strings.Contains(b, " ") ||
						strings.Contains(txt, b) && strings.Contains(b, " ") {
						t.Fatalf("reply leaks %q: %q", b, txt)
					}
				}
				prev = txt
				if d.Terminal() {
					break
				}
			}
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, name := range Variants {
		c, err := Variant(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := Variant("nope"); err == nil {
		t.Fatal("unknown variant accepted")
	}
	c := DefaultConfig()
	c.QRate = 0
	if _, err := New(c).Start(context.Background(), fixture(scenario.EntrenchedBelief, 0), 1); err == nil || !strings.Contains(err.Error(), "QRate") {
		t.Fatalf("invalid config: err %v, want one naming QRate", err)
	}
	for _, d := range []float64{-1, math.NaN(), math.Inf(1)} {
		c := DefaultConfig()
		c.IT.Dilution = d
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "IT.Dilution") {
			t.Errorf("IT.Dilution %v: err %v, want one naming IT.Dilution", d, err)
		}
	}
	for _, k := range []int{-1, 2} { // AA.Plans is 2, so at most 1
		c := DefaultConfig()
		c.AA.PlanSpread = k
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "AA.PlanSpread") {
			t.Errorf("AA.PlanSpread %d: err %v, want one naming AA.PlanSpread", k, err)
		}
	}
	sc := fixture("XX", 0)
	if _, err := New(Config{}).Start(context.Background(), sc, 1); err == nil || !strings.Contains(err.Error(), "hidden.resistance") {
		t.Fatalf("bad type: err %v", err)
	}
	if New(Config{}).Name() != "sim" || New(Soft()).Name() != "sim-soft" {
		t.Fatal("names")
	}
}

func TestFingerprint(t *testing.T) {
	d := New(DefaultConfig()).Fingerprint()
	if !strings.HasPrefix(d, "sim/v7/") || len(d) != len("sim/v7/")+16 {
		t.Fatalf("fingerprint %q", d)
	}
	if New(DefaultConfig()).Fingerprint() != d {
		t.Fatal("fingerprint not deterministic")
	}
	c := DefaultConfig()
	c.IdleCost += 0.001
	if New(c).Fingerprint() == d {
		t.Fatal("a changed parameter keeps the fingerprint")
	}
}

// pcOf is the perception of a message with tags tg that answers the
// concerns touched marks (and engages no other, with no claim, cue,
// echo or repeat): what the dynamics tests feed observe.
func pcOf(tg tagger.Tags, touched []bool) *perception.Perception {
	p := &perception.Perception{Acts: tg.Acts, Strategies: tg.Strategies, Pressure: tg.Pressure, Relevance: 1,
		Concerns: make([]perception.Engagement, len(touched))}
	for i, t := range touched {
		if t {
			p.Concerns[i] = perception.Answered
		}
	}
	return p
}

// AR (DirectivePlan): plan detail without autonomy support is a directive:
// it builds ReactAsk reactance and costs BadMove, as an ask would; with
// autonomy support it is a plain plan gain. Hand-computed from HandConfig.
func TestDirectivePlan(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.AutonomyResistance, -0.4))
	s.observe(pcOf(acts(tagger.Plan), touch(3)))
	rho := 0.35 * 1.0 // ReactAsk * AR.Reactance
	near(t, "rho", s.rho, rho)
	if !s.ev.bad {
		t.Error("a plan without autonomy support should be AR's misstep")
	}
	// + GainPlan 0.03 / (1 + rho) - BadMove 0.05 - ReactLeak 0.06 * rho
	near(t, "o", s.o, -0.4+0.03/(1+rho)-0.05-0.06*rho)

	w := start(t, c, fixture(scenario.AutonomyResistance, -0.4))
	w.observe(pcOf(acts(tagger.Plan, tagger.Autonomy), touch(3)))
	near(t, "rho with autonomy", w.rho, 0)
	near(t, "o with autonomy", w.o, -0.4+0.03+0.06) // GainPlan + GainAutonomy
	// EB reads the same plan as a plan
	e := start(t, c, fixture(scenario.EntrenchedBelief, -0.4))
	e.observe(pcOf(acts(tagger.Plan), touch(3)))
	near(t, "EB rho", e.rho, 0)
}

// AA (Conflict): evidence and autonomy support each add one turn of
// plan detail needed before an ask gets an answer, so the two plan turns
// that are enough alone (TestAmbivalentNeedsPlan) are not enough after
// them; MaxConflict caps the extra need.
func TestConflict(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.AmbivalentAvoidance, 0.6))
	if s.need != 2 {
		t.Fatalf("need %d at the start, want AA.Plans 2", s.need)
	}
	s.observe(pcOf(acts(tagger.Evidence), touch(3)))
	s.observe(pcOf(acts(tagger.Autonomy), touch(3)))
	if s.need != 4 {
		t.Fatalf("need %d after evidence and autonomy, want 4", s.need)
	}
	planAsk := acts(tagger.Plan, tagger.Commitment)
	for i := range 2 {
		if d := s.observe(pcOf(planAsk, touch(3))); d != decision.Continue {
			t.Fatalf("plan+ask %d with need 4: %s, want continue", i+1, d)
		}
	}
	if n := s.obstacles(); n != 2 {
		t.Errorf("obstacles %d, want the 2 plan turns still needed", n)
	}
	c.AA.MaxConflict = 1
	m := start(t, c, fixture(scenario.AmbivalentAvoidance, 0.6))
	for range 3 {
		m.observe(pcOf(acts(tagger.Evidence), touch(3)))
	}
	if m.need != 3 {
		t.Errorf("need %d with MaxConflict 1, want 3", m.need)
	}
	// evidence and autonomy support in one turn add one each
	b := start(t, quiet(), fixture(scenario.AmbivalentAvoidance, 0.6))
	b.observe(pcOf(acts(tagger.Evidence, tagger.Plan, tagger.Autonomy), touch(3)))
	if b.need != 4 || b.plans != 1 {
		t.Errorf("need %d, plans %d after one e+p+a turn, want 4 and 1", b.need, b.plans)
	}
	// the other types take evidence as evidence
	e := start(t, c, fixture(scenario.EntrenchedBelief, 0.6))
	e.observe(pcOf(acts(tagger.Evidence), touch(3)))
	if e.need != 0 {
		t.Errorf("EB need %d, want 0", e.need)
	}
}

// EB (RehearseCost): a diagnostic question with no hidden concern left to
// voice costs RehearseCost; while one is left, it gains GainDiag.
func TestRehearse(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, 0))
	for i := range 3 { // each voices one of the three concerns
		o := s.o
		s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
		near(t, fmt.Sprintf("diagnostic %d gain", i+1), s.o-o, 0.01) // EB.GainDiag
	}
	o := s.o
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	if !s.ev.nothing {
		t.Fatal("the fourth question should find nothing left to voice")
	}
	near(t, "rehearsal", s.o-o, 0.01-0.05) // GainDiag - RehearseCost
}

// Per-person variation: FirmShare 1 scales every positive gain by
// FirmGain; the factors follow the seed alone.
func TestPersonDraw(t *testing.T) {
	c := quiet()
	c.FirmShare, c.PersonSD = 1, 0
	s := start(t, c, fixture(scenario.AutonomyResistance, -0.4))
	near(t, "person", s.person, c.FirmGain)
	s.observe(pcOf(acts(tagger.Plan, tagger.Autonomy), touch(3)))
	near(t, "firm gain", s.o, -0.4+(0.03+0.06)*c.FirmGain)

	c = HandConfig()
	draw := func(seed uint64) (float64, float64) {
		p, err := New(c).start(context.Background(), fixture(scenario.AutonomyResistance, 0), seed)
		if err != nil {
			t.Fatal(err)
		}
		return p.person, p.reactW
	}
	g1, r1 := draw(1)
	g1b, r1b := draw(1)
	g2, r2 := draw(2)
	if g1 != g1b || r1 != r1b {
		t.Errorf("seed 1 drew (%g, %g) then (%g, %g)", g1, r1, g1b, r1b)
	}
	if g1 == g2 || r1 == r2 {
		t.Errorf("seeds 1 and 2 drew the same person (%g, %g)", g1, r1)
	}
	// over many seeds, about FirmShare of the people are firm
	firm := 0
	for seed := range uint64(2000) {
		if g, _ := draw(seed); g < c.FirmGain*math.Exp(2*c.PersonSD) && g < 0.5 {
			firm++
		}
	}
	if share := float64(firm) / 2000; share < 0.35 || share > 0.5 {
		t.Errorf("firm share %.3f, want about FirmShare %.2f", share, c.FirmShare)
	}
}

// PlanSpread: an avoider needs Plans - 1, Plans or Plans + 1 turns of plan
// detail (AA: 1, 2 or 3), about a third each, drawn from the seed alone
// as the fourth draw of the person stream, after the firm draw and the two
// Gaussian factors, which it leaves as they were; its conflict rises to
// its own need + MaxConflict.
func TestPlanSpread(t *testing.T) {
	c := HandConfig()
	if c.AA.Plans != 2 || c.AA.PlanSpread != 1 || c.AA.MaxConflict != 10 {
		t.Fatalf("AA Plans, PlanSpread, MaxConflict = %d, %d, %d; this test is written for 2, 1, 10", c.AA.Plans, c.AA.PlanSpread, c.AA.MaxConflict)
	}
	draw := func(c Config, seed uint64) *session {
		s, err := New(c).start(context.Background(), fixture(scenario.AmbivalentAvoidance, 0), seed)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var n [5]int
	const seeds = 3000
	for seed := range uint64(seeds) {
		s := draw(c, seed)
		if s.plans0 < 0 || s.plans0 > 4 || s.need != s.plans0 {
			t.Fatalf("seed %d: plans0 %d, need %d; want need = plans0 in [1, 3]", seed, s.plans0, s.need)
		}
		n[s.plans0]++
		// the person stream replayed by hand: firm, two factors, then the need
		var src rand.PCG
		src.Seed(seed, 0x73696d2d70736e) // "sim-psn"
		r := rand.New(&src)
		firm := r.Float64() < c.FirmShare
		zg, zr := r.NormFloat64(), r.NormFloat64()
		want := 1 + int(3*r.Float64())
		gain := math.Exp(c.PersonSD * zg)
		if firm {
			gain *= c.FirmGain
		}
		if s.plans0 != want || s.firm != firm || s.person != gain || s.reactW != draw(samePersonGains(c), seed).reactW*math.Exp(c.PersonSD*zr) {
			t.Fatalf("seed %d: (need, firm, gain) (%d, %v, %g), want (%d, %v, %g) from the stream's fourth, first and second draws",
				seed, s.plans0, s.firm, s.person, want, firm, gain)
		}
	}
	if n[0] != 0 || n[4] != 0 {
		t.Errorf("needs drawn %v, want only 1, 2 or 3", n)
	}
	for k := 1; k <= 3; k++ {
		// a third of 3000 is 1000, binomial s.d. about 26
		if n[k] < 900 || n[k] > 1100 {
			t.Errorf("%d of %d people need %d plan turns, want about a third", n[k], seeds, k)
		}
	}
	// the cap is the person's own need + MaxConflict
	for _, need := range []int{1, 3} {
		var s *session
		for seed := uint64(0); s == nil || s.plans0 != need; seed++ {
			if seed == 100 {
				t.Fatalf("no person needing %d plan turns in 100 seeds", need)
			}
			s = draw(samePersonGains(c), seed)
		}
		for range 15 {
			s.observe(pcOf(acts(tagger.Evidence, tagger.Autonomy), touch(3)))
		}
		if s.need != need+10 {
			t.Errorf("need %d after 15 evidence and autonomy turns of a person needing %d, want its cap %d + 10", s.need, need, need)
		}
	}
}

// samePersonGains returns c with no per-person gain or reactance factor
// (FirmShare and PersonSD 0) but its plan spreads.
func samePersonGains(c Config) Config {
	c.FirmShare, c.PersonSD = 0, 0
	return c
}

// FirmCap: a firm person's openness never rises more than FirmCap above
// its start, however many gains it meets; a person who is not firm is not
// capped.
func TestFirmCap(t *testing.T) {
	c := quiet()
	c.FirmShare, c.PersonSD, c.FirmGain, c.FirmCap = 1, 0, 1, 0.3
	s := start(t, c, fixture(scenario.AutonomyResistance, -0.4))
	for range 12 {
		s.observe(pcOf(acts(tagger.Plan, tagger.Autonomy), touch(3)))
	}
	near(t, "capped openness", s.o, -0.4+0.3)
	c.FirmShare = 0
	s = start(t, c, fixture(scenario.AutonomyResistance, -0.4))
	for range 12 {
		s.observe(pcOf(acts(tagger.Plan, tagger.Autonomy), touch(3)))
	}
	if s.o <= -0.4+0.3 {
		t.Errorf("openness %.3f of a person who is not firm, want above the cap %.2f", s.o, -0.4+0.3)
	}
}
