package bayespersuasion

import (
	"math"
	"strings"
	"testing"
)

// prosecutor is Kamenica & Gentzkow's example: prior P(guilty) = 0.3, the
// judge convicts iff P(guilty) >= 0.5, the prosecutor gets 1 per
// conviction. Item e1 holds always when guilty and with probability 3/7
// when innocent (the optimal signal); e2 is an alibi, bad for the sender.
func prosecutor() *Claim {
	return &Claim{
		ID: "prosecutor", Domain: "law", Text: "The defendant is guilty.",
		States: []string{"guilty", "innocent"}, Holds: []bool{true, false},
		Prior: []float64{0.3, 0.7},
		Actions: []Action{
			{ID: "acquit", Text: "acquit", Utility: []float64{0, 0}, Sender: 0},
			{ID: "convict", Text: "convict", Utility: []float64{1, -1}, Sender: 1},
		},
		Evidence: []Evidence{
			{ID: "e1", Text: "The fingerprints on the handle match the defendant.", Likelihood: []float64{1, 3.0 / 7}},
			{ID: "e2", Text: "A neighbour saw the defendant at home that night.", Likelihood: []float64{0.2, 0.8}},
		},
	}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

func TestProsecutorBenchmarks(t *testing.T) {
	b, err := Optimum(prosecutor())
	if err != nil {
		t.Fatal(err)
	}
	near(t, "optimal", b.Optimal, 0.6)
	near(t, "full", b.Full, 0.3)
	near(t, "none", b.Prior, 0)
	// Disclosing everything that holds: convicted only when e1 holds and e2
	// does not: 0.3·1·0.8 + 0.7·(3/7)·0.2 = 0.30. Hiding the alibi: 0.6.
	near(t, "pool all", b.PoolAll, 0.30)
	near(t, "pool best", b.PoolBest, 0.6)
	// The optimal signal: always "convict" when guilty, 3/7 when innocent.
	near(t, "π(convict|guilty)", b.Signal[0][1], 1)
	near(t, "π(convict|innocent)", b.Signal[1][1], 3.0/7)
	near(t, "share of half the gain", b.Share(0.3), 0.5)
}

func TestPosteriorHandComputed(t *testing.T) {
	c := prosecutor()
	c.Evidence[0].Likelihood = []float64{0.9, 0.2}
	p, err := c.Posterior([]int{0})
	if err != nil {
		t.Fatal(err)
	}
	// 0.3·0.9 / (0.3·0.9 + 0.7·0.2) = 0.27 / 0.41.
	near(t, "P(guilty | e1)", p[0], 0.27/0.41)
	p, _ = c.Posterior([]int{0, 1})
	// 0.27·0.2 / (0.27·0.2 + 0.14·0.8) = 0.054 / 0.166.
	near(t, "P(guilty | e1, e2)", p[0], 0.054/0.166)
	if a := c.BestResponse(p); c.Actions[a].ID != "acquit" {
		t.Errorf("best response at %.3f = %s, want acquit", p[0], c.Actions[a].ID)
	}
	// Exactly at the threshold the tie goes to the sender.
	if a := c.BestResponse([]float64{0.5, 0.5}); c.Actions[a].ID != "convict" {
		t.Errorf("tie at 0.5 went to %s, want convict", c.Actions[a].ID)
	}
	c.Evidence[0].Likelihood = []float64{0, 0}
	if _, err := c.Posterior([]int{0}); err == nil {
		t.Error("impossible evidence: no error")
	}
}

// TestThreeStates: states A, B, C with prior 0.2, 0.3, 0.5; acting pays
// the receiver 1, 0, -1; holding 0. Optimal: recommend acting in A and B
// always and in C with probability x, obedience 0.2 - 0.5x >= 0, so x =
// 0.4 and the value is 0.2 + 0.3 + 0.5·0.4 = 0.7. Full disclosure: act in
// A and (tied, sender-preferred) in B: 0.5. No disclosure: 0.
func TestThreeStates(t *testing.T) {
	c := &Claim{
		ID: "three", Text: "It works.", States: []string{"A", "B", "C"}, Holds: []bool{true, true, false},
		Prior: []float64{0.2, 0.3, 0.5},
		Actions: []Action{
			{ID: "hold", Utility: []float64{0, 0, 0}},
			{ID: "act", Utility: []float64{1, 0, -1}, Sender: 1},
		},
		Evidence: []Evidence{{ID: "e1", Text: "a", Likelihood: []float64{0.9, 0.5, 0.1}}},
	}
	b, err := Optimum(c)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "optimal", b.Optimal, 0.7)
	near(t, "full", b.Full, 0.5)
	near(t, "none", b.Prior, 0)
	near(t, "π(act|C)", b.Signal[2][1], 0.4)
	// e1 held: posterior ∝ 0.18, 0.15, 0.05 → act (0.18 - 0.05 > 0); P(e1)
	// = 0.38. Pool all = pool best = 0.38.
	near(t, "pool all", b.PoolAll, 0.38)
	near(t, "pool best", b.PoolBest, 0.38)
	near(t, "belief in claim at prior", c.Belief(c.Prior), 0.5)
	p := c.Project(0.8)
	near(t, "projected A", p[0], 0.2*0.8/0.5)
	near(t, "projected C", p[2], 0.2)
}

// TestEnvelopeThreeActions: thresholds 0.3 (low→mid) and 0.7 (mid→high),
// sender values 0, 0.5, 1, prior 0.2: the hull through (0, 0) and (0.3,
// 0.5) gives 0.2/0.3·0.5 = 1/3 at the prior, and the linear program agrees
// (Optimum checks the two).
func TestEnvelopeThreeActions(t *testing.T) {
	c := &Claim{
		ID: "three-actions", Text: "x", States: []string{"good", "bad"}, Holds: []bool{true, false},
		Prior: []float64{0.2, 0.8},
		Actions: []Action{
			{ID: "low", Utility: []float64{0, 0}, Sender: 0},
			{ID: "mid", Utility: []float64{0.7, -0.3}, Sender: 0.5},
			{ID: "high", Utility: []float64{1, -1}, Sender: 1},
		},
	}
	near(t, "envelope", Envelope(c), 1.0/3)
	b, err := Optimum(c)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "optimal", b.Optimal, 1.0/3)
	// Full: 0.2·1 + 0.8·0.
	near(t, "full", b.Full, 0.2)
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Claim)
		want string
	}{
		{func(c *Claim) { c.Prior = []float64{0.3, 0.6} }, "prior: sums to 0.9"},
		{func(c *Claim) { c.Prior = []float64{0.3, 0.3, 0.4} }, "prior: 3 entries for 2 states"},
		{func(c *Claim) { c.Evidence[1].Likelihood = []float64{1.2, 0} }, "evidence[1].likelihood[0]: 1.2 not in [0, 1]"},
		{func(c *Claim) { c.Actions[0].Utility = []float64{0} }, "actions[0].utility: 1 entries for 2 states"},
		{func(c *Claim) { c.Holds = []bool{true, true} }, "holds"},
		{func(c *Claim) { c.Evidence[1].ID = "E1" }, "duplicate id"},
	} {
		c := prosecutor()
		tc.edit(c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want an error containing %q", err, tc.want)
		}
	}
	if err := prosecutor().Validate(); err != nil {
		t.Errorf("valid claim: %v", err)
	}
}

func TestLikert(t *testing.T) {
	for _, tc := range []struct {
		b    float64
		want int
	}{{0, 1}, {0.08, 1}, {0.09, 2}, {0.3, 3}, {0.5, 4}, {0.58, 4}, {0.59, 5}, {0.92, 7}, {1, 7}} {
		if got := Likert(tc.b); got != tc.want {
			t.Errorf("Likert(%g) = %d, want %d", tc.b, got, tc.want)
		}
	}
	near(t, "LikertBelief(5)", LikertBelief(5), 4.0/6)
}
