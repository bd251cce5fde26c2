package masp

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/persuarena/persuarena/bdi"
	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/sim"
)

func teacherScenario() *scenario.Scenario {
	return &scenario.Scenario{
		ID: "fx", Split: scenario.Heldout, Domain: "flu shots", Family: scenario.Healthcare,
		Proposal: "Get the seasonal flu shot at the staff clinic this week.", Closeness: scenario.Professional,
		Hidden: scenario.HiddenProfile{
			Resistance: scenario.EntrenchedBelief, InitialStance: -0.4,
			Concerns: []scenario.Concern{
				{ID: "side-effects", Description: "Last time the shot left me feverish.", Keywords: []string{"fever"}},
				{ID: "timing", Description: "The clinic is only open while I sleep.", Keywords: []string{"hours"}},
			},
		},
	}
}

// SimTeacher's formulas at t = 0 of a professional EB persuadee with
// stance -0.4: u = 0.15, r = 0, nothing voiced; the expected values are
// written with the hand-set parameters (sim.HandConfig: Accept 0.3).
func TestSimTeacherInitial(t *testing.T) {
	c := sim.HandConfig()
	sess, err := sim.New(c).Start(context.Background(), teacherScenario(), 1)
	if err != nil {
		t.Fatal(err)
	}
	lr, ok := sess.(sim.LatentReader)
	if !ok {
		t.Fatal("sim session is not a LatentReader")
	}
	s, err := SimTeacher{Reader: lr}.Label(context.Background(), bdi.P4G, "", teacherScenario().Proposal, nil)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "rho", s.Receptivity, 0.6/1.3, 1e-12)
	near(t, "c", s.Confidence, 0.4, 1e-12)
	near(t, "v", s.Valence, 0.4*(0.3-1)+0.3*-0.4, 1e-12)
	if s.Belief != "The user is not convinced that it is a good idea to get the seasonal flu shot at the staff clinic this week." ||
		s.Intention != "The user intends to decline or keep resisting." {
		t.Errorf("texts %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
	if _, err := (SimTeacher{}).Label(context.Background(), bdi.P4G, "", "", nil); err == nil {
		t.Error("nil reader accepted")
	}
}

func TestFromLatentCases(t *testing.T) {
	base := sim.Latent{AcceptAt: 0.3, ConditionalAt: 0, Guarded: 0.5, Rapport: 0.5, Decision: decision.Continue,
		Concerns: []sim.LatentConcern{{ID: "cost", Description: "It costs too much.", State: sim.ConcernVoiced},
			{ID: "trust", Description: "I don't trust them.", State: sim.ConcernAddressed}}}
	l := base
	l.Openness, l.Reactance = 0.6, 1
	s := FromLatent(l, "Donate $1.")
	near(t, "rho", s.Receptivity, 1.0/2, 1e-12) // clamp01(1.6/1.3) / (1 + 1)
	near(t, "c (half open)", s.Confidence, 0.6*0.75, 1e-12)
	near(t, "v", s.Valence, 0.3*0.6-0.5, 1e-12)
	if s.Belief != "The user still has doubts: It costs too much." || s.Desire != "The user wants to decide freely without being pressured." ||
		s.Intention != "The user is ready to agree if asked." {
		t.Errorf("texts %+v", s)
	}
	l = base
	l.Openness, l.Decision = 0.1, decision.Accept
	l.Concerns[0].State = sim.ConcernAddressed
	s = FromLatent(l, "Donate $1.")
	near(t, "c after accept", s.Confidence, 0.8, 0)
	if s.Intention != "The user intends to donate $1 now." || !strings.HasPrefix(s.Belief, "The user feels their worries about cost, trust have been answered") {
		t.Errorf("accept texts %+v", s)
	}
	l.Decision, l.Openness = decision.Conditional, -2 // clamps
	l.Concerns[0].State = sim.ConcernVoiced
	s = FromLatent(l, "Donate $1.")
	if s.Receptivity != 0 || s.Intention != "The user intends to go ahead only if this is settled: It costs too much." || math.Abs(s.Confidence-1) > 1e-12 {
		t.Errorf("conditional %+v", s)
	}
}
