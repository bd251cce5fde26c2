package sim_test

import (
	"context"
	"math"
	"testing"

	"github.com/persuarena/persuarena/episode"
	"github.com/persuarena/persuarena/probe"
	"github.com/persuarena/persuarena/sim"
)

// The agreement probe reads openness as (1 + o)/2: before any message it
// is the fixture's (1 + initial_stance)/2 exactly, the default basis is
// answered as before, and the map clamps to [0, 1].
func TestAgreementProbe(t *testing.T) {
	ctx := context.Background()
	basis := probe.Basis{probe.Agreement, probe.Default[0], probe.Default[1], probe.Default[2]}
	for i, sc := range fixtures() {
		s, err := sim.New(sim.DefaultConfig()).Start(ctx, sc, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		pp := s.(episode.ProbabilityProber)
		got := pp.ProbeProbabilities(nil, basis)
		want := (1 + sc.Hidden.InitialStance) / 2
		if math.Abs(got[0]-want) > 1e-12 {
			t.Errorf("%s: agreement %v, want (1 + %v)/2 = %v", sc.ID, got[0], sc.Hidden.InitialStance, want)
		}
		def := pp.ProbeProbabilities(nil, probe.Default)
		for k := range def {
			if got[k+1] != def[k] {
				t.Errorf("%s: default probe %d %v beside agreement, %v alone", sc.ID, k, got[k+1], def[k])
			}
		}
	}
	for _, c := range []struct{ o, want float64 }{{-1, 0}, {0, 0.5}, {0.5, 0.75}, {1, 1}, {1.5, 1}, {-2, 0}} {
		if got := sim.Agreement(c.o); got != c.want {
			t.Errorf("Agreement(%v) = %v, want %v", c.o, got, c.want)
		}
	}
}
