package episode

import (
	"slices"
	"testing"
)

func TestRisesAndFalls(t *testing.T) {
	for _, c := range []struct {
		bs   []float64
		want bool
	}{
		{[]float64{0.5, 0.55, 0.52}, true},
		{[]float64{0.2, 0.7, 0.7, 0.7, 0.6}, true},
		{[]float64{0.5, 0.51, 0.5}, false}, // within RiseFallStep both ways
		{[]float64{0.2, 0.5, 0.9}, false},  // rises only
		{[]float64{0.9, 0.5, 0.4}, false},  // falls only
		{[]float64{0.5}, false},
		{nil, false},
	} {
		if got := RisesAndFalls(c.bs, RiseFallStep); got != c.want {
			t.Errorf("RisesAndFalls(%v) = %v, want %v", c.bs, got, c.want)
		}
	}
}

func TestBeliefs(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	e := &Episode{B0: f(0.1), Turns: []Turn{{Belief: f(0.3)}, {}, {Belief: f(0.2)}}}
	if got := e.Beliefs(); !slices.Equal(got, []float64{0.1, 0.3, 0.2}) {
		t.Errorf("beliefs %v, want [0.1 0.3 0.2] (the unreadable turn skipped)", got)
	}
	if !RisesAndFalls(e.Beliefs(), RiseFallStep) {
		t.Error("0.1 0.3 0.2 rises and falls by more than 0.02")
	}
	if got := (&Episode{Turns: []Turn{{Belief: f(0.3)}}}).Beliefs(); got != nil {
		t.Errorf("beliefs without B0 %v, want nil", got)
	}
}
