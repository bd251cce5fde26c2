package sim

import (
	"testing"

	"github.com/persuarena/persuarena/decision"
	"github.com/persuarena/persuarena/scenario"
	"github.com/persuarena/persuarena/tagger"
)

// Latent mirrors the session's fields exactly and reading it changes
// nothing.
func TestLatentSnapshot(t *testing.T) {
	c := quiet()
	s := start(t, c, fixture(scenario.EntrenchedBelief, -0.4))
	l := s.Latent()
	if l.Turn != 0 || l.Decision != decision.Continue || l.Openness != -0.4 || l.Openness0 != -0.4 ||
		l.Rapport != c.Rapport0[3] || l.Count(ConcernHidden) != 3 || l.AcceptAt != c.Accept {
		t.Fatalf("initial latent %+v", l)
	}
	s.observe(pcOf(acts(tagger.Diagnostic), touch(3)))
	s.observe(pcOf(acts(tagger.Evidence), touch(3, 0)))
	l = s.Latent()
	if l.Turn != 2 || l.AddressedNow != 1 || l.Concerns[0].State != ConcernAddressed ||
		l.Concerns[1].State != ConcernHidden || l.Openness != s.o || l.Reactance != s.rho || l.Persuasiveness != s.q {
		t.Fatalf("latent after two turns %+v (o %v)", l, s.o)
	}
	if l.Concerns[0].ID != "side-effects" || l.Count(ConcernAddressed) != 1 {
		t.Fatalf("concerns %+v", l.Concerns)
	}
	o, q := s.o, s.q
	_ = s.Latent()
	if s.o != o || s.q != q {
		t.Fatal("Latent changed the state")
	}
}
