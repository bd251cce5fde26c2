package bayespersuasion

import (
	"math"
	"testing"
)

func TestBuiltinClaims(t *testing.T) {
	cs, err := Claims()
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) < 60 {
		t.Fatalf("%d claims, want at least 60", len(cs))
	}
	domains := map[string]int{}
	three := 0
	for _, c := range cs {
		domains[c.Domain]++
		if len(c.States) == 3 {
			three++
		}
		b, err := Optimum(c)
		if err != nil {
			t.Fatal(err)
		}
		// Every claim leaves the sender something to gain, and the
		// benchmarks are ordered as theory says.
		if b.OptimalGain() < 0.05 {
			t.Errorf("%s: optimal gain %.3f, want a claim worth persuading on", c.ID, b.OptimalGain())
		}
		if b.Full > b.Optimal+1e-9 || b.Prior > b.Full+1e-9 || b.PoolAll > b.PoolBest+1e-9 || b.Prior > b.PoolBest+1e-9 {
			t.Errorf("%s: benchmarks out of order: %+v", c.ID, b)
		}
		if math.IsNaN(b.Share(b.OptimalGain())) {
			t.Errorf("%s: share undefined", c.ID)
		}
	}
	for _, d := range []string{"health", "money", "home", "travel", "work", "tech", "food", "environment"} {
		if domains[d] < 4 {
			t.Errorf("domain %s has %d claims, want at least 4", d, domains[d])
		}
	}
	if three < 3 {
		t.Errorf("%d three-state claims, want at least 3", three)
	}
}
