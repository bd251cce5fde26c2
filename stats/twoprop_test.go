package stats

import (
	"math"
	"testing"
)

// Newcombe (1998), Table II example (a): 56/70 vs 48/80, method 10 gives
// 0.0524 to 0.3339; the pooled z by hand is 0.2 / 0.0754665 = 2.65017,
// two-sided p = 0.008045.
func TestTwoProportionNewcombeExample(t *testing.T) {
	r := TwoProportion(56, 70, 48, 80, Z95)
	if math.Abs(r.Diff-0.2) > 1e-12 || math.Abs(r.Lo-0.0524) > 5e-5 || math.Abs(r.Hi-0.3339) > 5e-5 {
		t.Errorf("diff %v [%v, %v], want 0.2 [0.0524, 0.3339]", r.Diff, r.Lo, r.Hi)
	}
	if math.Abs(r.Z-2.65017) > 1e-5 || math.Abs(r.P-0.008045) > 1e-6 {
		t.Errorf("z %v p %v, want 2.65017, 0.008045", r.Z, r.P)
	}
	if r := TwoProportion(0, 10, 0, 12, Z95); r.Z != 0 || r.P != 1 || r.Diff != 0 {
		t.Errorf("no variation: %+v", r)
	}
	if r := TwoProportion(1, 0, 1, 5, Z95); !math.IsNaN(r.Diff) || r.P != 1 {
		t.Errorf("empty arm: %+v", r)
	}
}
