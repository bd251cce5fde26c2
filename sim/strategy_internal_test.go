package sim

import (
	"strings"
	"testing"

	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

func withStrategies(t tagger.Tags, ss ...tagger.Strategy) tagger.Tags {
	for _, s := range ss {
		t.Strategies = t.Strategies.With(s)
	}
	return t
}

// twin plays the same turn on two fresh sessions with the same seed, one
// with the strategies and one without, and returns both.
func twin(t *testing.T, c Config, r scenario.Resistance, base tagger.Tags, ss ...tagger.Strategy) (with, without *session) {
	t.Helper()
	with = start(t, c, fixture(r, -0.1))
	without = start(t, c, fixture(r, -0.1))
	with.observe(pcOf(withStrategies(base, ss...), touch(3)))
	without.observe(pcOf(base, touch(3)))
	return with, without
}

// Donation information adds Strategy.DonationInfo openness (scaled by
// receptivity / (1 + reactance), 1 here) and nothing else.
func TestStrategyDonationInfo(t *testing.T) {
	c := samePerson(HandConfig()) // with noise: both twins draw the same noise
	for _, r := range scenario.Resistances {
		w, wo := twin(t, c, r, acts(tagger.Evidence), tagger.DonationInformation)
		near(t, string(r)+" o", w.o-wo.o, 0.03/(1+w.rho)) // IT: the evidence backfires, rho > 0
		near(t, string(r)+" u", w.u, wo.u)
		near(t, string(r)+" rho", w.rho, wo.rho)
	}
	// Alone (no act) it is content: noise applies and IdleCost does not.
	w, wo := twin(t, c, scenario.AutonomyResistance, tagger.Tags{}, tagger.DonationInformation)
	if w.o-wo.o == 0.03 || w.o == wo.o {
		t.Errorf("donation information alone: o %v vs idle %v", w.o, wo.o)
	}
}

// Self-modelling and an amount request move the turn's move score by
// MoveSelfModel (+0.12) and MoveAskAmount (-0.34): q changes by QRate
// times that, openness not at all. (PEOpen and the types' MoveBad are
// zeroed so that the move score is not clamped at -1.)
func TestStrategyMoves(t *testing.T) {
	c := quiet()
	c.PEOpen = 0
	c.EB.MoveBad, c.IT.MoveBad, c.AR.MoveBad, c.AA.MoveBad = 0, 0, 0, 0
	for _, r := range scenario.Resistances {
		w, wo := twin(t, c, r, acts(tagger.Evidence), tagger.SelfModeling)
		near(t, string(r)+" self-model q", w.q-wo.q, c.QRate*0.12)
		near(t, string(r)+" self-model o", w.o, wo.o)
		w, wo = twin(t, c, r, acts(tagger.Commitment), tagger.AskAmount)
		near(t, string(r)+" amount q", w.q-wo.q, -c.QRate*0.34)
		near(t, string(r)+" amount o", w.o, wo.o)
		near(t, string(r)+" amount rho", w.rho, wo.rho)
	}
}

// Greeting, praise and thanks are content-free: a turn holding only them
// is exactly an empty turn (IdleCost, no noise); so is a turn with a
// strategy the simulator does not react to (the null ones at the hand-set
// values).
func TestStrategyContentFree(t *testing.T) {
	c := HandConfig()
	for _, r := range scenario.Resistances {
		for _, ss := range [][]tagger.Strategy{
			{tagger.Greeting}, {tagger.Praise, tagger.Thanks},
			{tagger.LogicalAppeal, tagger.EmotionAppeal, tagger.PersonalStory, tagger.CredibilityAppeal,
				tagger.FootInTheDoor, tagger.SourceInquiry, tagger.TaskInquiry, tagger.PersonalInquiry, tagger.Greeting},
		} {
			w, wo := twin(t, c, r, tagger.Tags{}, ss...)
			if w.o != wo.o || w.q != wo.q || w.u != wo.u {
				t.Errorf("%s %v: o %v q %v, empty turn o %v q %v", r, ss, w.o, w.q, wo.o, wo.q)
			}
			near(t, "idle cost", w.o, -0.1-c.IdleCost)
		}
	}
	// A negative MoveSocial lowers q on a social turn; it stays idle.
	c.Strategy.MoveSocial = -0.2
	c.Q0, c.PEOpen = 0.5, 0 // from q = 0.5 an idle turn's q falls to 0.375, with MoveSocial to 0.325
	w, wo := twin(t, c, scenario.EntrenchedBelief, tagger.Tags{}, tagger.Greeting)
	near(t, "q social", w.q, 0.325)
	near(t, "q idle", wo.q, 0.375)
	if w.o != wo.o {
		t.Errorf("MoveSocial -0.2: q %v vs %v, o %v vs %v", w.q, wo.q, w.o, wo.o)
	}
	// A fitted non-zero null strategy makes its turn content.
	c = HandConfig()
	c.Strategy.Logical = 0.05
	w, wo = twin(t, c, scenario.EntrenchedBelief, tagger.Tags{}, tagger.LogicalAppeal)
	if w.o == wo.o {
		t.Error("Logical 0.05 left the turn idle")
	}
}

func TestStrategyValidate(t *testing.T) {
	def := DefaultConfig()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		set  func(*StrategyParams)
		want string
	}{
		{func(p *StrategyParams) { p.MoveSocial = 0.1 }, "Strategy.MoveSocial = 0.1 outside [-1, 0]"},
		{func(p *StrategyParams) { p.DonationInfo = 0.5 }, "Strategy.DonationInfo = 0.5 outside [-0.2, 0.2]"},
		{func(p *StrategyParams) { p.MoveAskAmount = -2 }, "Strategy.MoveAskAmount = -2 outside [-1, 1]"},
		{func(p *StrategyParams) { p.Inquiry = -0.3 }, "Strategy.Inquiry = -0.3 outside"},
	} {
		cfg := DefaultConfig()
		c.set(&cfg.Strategy)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate: %v, want %q", err, c.want)
		}
	}
	if p := DefaultStrategyParams(); p.DonationInfo != 0.03 || p.MoveSelfModel != 0.12 || p.MoveAskAmount != -0.34 || p.Credibility != 0 || p.MoveSocial != 0 {
		t.Errorf("defaults %+v", p)
	}
}
