package reward

import (
	"math"
	"testing"

	"github.com/persuarena/persuarena/decision"
)

// Seed 000 Table 5: terminal shares (Acc, Cond, Pend, Rej in %) and the
// reported mean R_goal of each persuader. The Probe-RPO paper: the map +3/+1/-1/-3
// reproduces the column (shares are rounded to 0.1 pp, so to ~±0.01).
func TestGoalReproducesTable5(t *testing.T) {
	rows := []struct{ acc, cond, pend, rej, rgoal float64 }{
		{52.5, 20.8, 17.5, 9.2, 1.33},
		{25.8, 35.8, 31.7, 6.7, 0.62},
		{25.0, 35.8, 33.3, 5.8, 0.60},
		{15.0, 20.0, 54.2, 10.8, -0.22},
		{9.2, 29.2, 52.5, 9.2, -0.23},
	}
	g := DefaultGoal
	for i, r := range rows {
		got := (r.acc*g.Goal(decision.TermAccept) + r.cond*g.Goal(decision.TermConditional) +
			r.pend*g.Goal(decision.TermPending) + r.rej*g.Goal(decision.TermReject)) / 100
		if math.Abs(got-r.rgoal) > 0.011 {
			t.Errorf("row %d: mean R_goal = %.4f, Table 5 says %+.2f", i, got, r.rgoal)
		}
	}
}

func TestGoalMap(t *testing.T) {
	g := DefaultGoal
	want := map[decision.Terminal]float64{
		decision.TermAccept: 3, decision.TermConditional: 1, decision.TermPending: -1,
		decision.TermReject: -3, decision.TermTruncated: -1,
	}
	for term, w := range want {
		if got := g.Goal(term); got != w {
			t.Errorf("Goal(%s) = %v, want %v", term, got, w)
		}
	}
	if !math.IsNaN(g.Goal(decision.TermFailed)) {
		t.Error("failed episodes must have no reward (NaN)")
	}
}

func TestOutcomeAndDense(t *testing.T) {
	if got := Outcome(3, -0.5, 1); got != 2.5 {
		t.Errorf("Outcome = %v, want 2.5", got)
	}
	if r, ok := Dense(0.725, 0.01, true, true); !ok || math.Abs(r-0.715) > 1e-12 {
		t.Errorf("Dense = %v, %v", r, ok)
	}
	if _, ok := Dense(0.7, 0, true, false); ok {
		t.Error("dense reward with a missing previous belief must be missing")
	}
}
