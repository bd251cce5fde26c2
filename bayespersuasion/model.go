package bayespersuasion

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Action is one receiver action of a Claim.
type Action struct {
	// ID is a short key, unique within the claim, e.g. "act".
	ID string `json:"id"`
	// Text says what the action is, e.g. "switch to a standing desk".
	Text string `json:"text"`
	// Utility is the receiver's utility u_R(a, state), one per state, in
	// the claim's own units (only differences matter).
	Utility []float64 `json:"utility"`
	// Sender is the sender's value v_S(a) of the action, the same in every
	// state, unless SenderByState is set.
	Sender float64 `json:"sender"`
	// SenderByState, when not empty, is v_S(a, state), one per state, and
	// replaces Sender.
	SenderByState []float64 `json:"sender_by_state,omitempty"`
}

// Evidence is one verifiable evidence item of a claim's pool.
type Evidence struct {
	// ID is a short key, unique within the claim, e.g. "e1"; a persuader
	// discloses the item by naming it (or by quoting Text).
	ID string `json:"id"`
	// Text is the item's content in words.
	Text string `json:"text"`
	// Likelihood is P(the item holds | state), one per state, each in
	// [0, 1]. Items are independent given the state.
	Likelihood []float64 `json:"likelihood"`
}

// Claim is one Bayesian-persuasion scenario: a statement whose truth
// depends on a hidden state, the receiver's decision about it and the
// sender's evidence pool.
type Claim struct {
	ID     string `json:"id"`
	Domain string `json:"domain"`
	// Text is the claim the sender argues for, e.g. "A standing desk
	// reduces back pain for office workers."
	Text string `json:"claim"`
	// Background sets the scene for both sides (public).
	Background string `json:"background,omitempty"`
	// States names the world states, e.g. ["true", "false"]; at least 2.
	States []string `json:"states"`
	// Holds[s] says whether the claim is true in state s; the receiver's
	// belief in the claim is the posterior mass on those states.
	Holds []bool `json:"holds"`
	// Prior is the common prior over States: each > 0, summing to 1.
	Prior    []float64  `json:"prior"`
	Actions  []Action   `json:"actions"`
	Evidence []Evidence `json:"evidence"`
}

// MaxEvidence is the largest evidence pool a Claim may have: the pool
// benchmark enumerates its subsets (2^12 of them).
const MaxEvidence = 12

// probTol is the tolerance for probabilities that must sum to 1.
const probTol = 1e-9

// Validate reports the first problem of c as an error naming the claim
// and the field: a missing id or text, fewer than 2 states or 2 actions,
// sizes that disagree with States, a prior that is not positive or does
// not sum to 1 (within 1e-9), a likelihood outside [0, 1], duplicate ids,
// more than MaxEvidence items, a claim that holds in no state or in every
// state, or a non-finite number.
func (c *Claim) Validate() error {
	bad := func(field, format string, a ...any) error {
		return fmt.Errorf("bayes: claim %q: %s: %s", c.ID, field, fmt.Sprintf(format, a...))
	}
	if c.ID == "" {
		return bad("id", "missing")
	}
	if strings.TrimSpace(c.Text) == "" {
		return bad("claim", "missing")
	}
	n := len(c.States)
	if n < 2 {
		return bad("states", "%d states, want at least 2", n)
	}
	if len(c.Holds) != n {
		return bad("holds", "%d entries for %d states", len(c.Holds), n)
	}
	some, all := false, true
	for _, h := range c.Holds {
		some = some || h
		all = all && h
	}
	if !some || all {
		return bad("holds", "the claim must hold in some states and fail in others")
	}
	if len(c.Prior) != n {
		return bad("prior", "%d entries for %d states", len(c.Prior), n)
	}
	sum := 0.0
	for i, p := range c.Prior {
		if !(p > 0) || p > 1 || math.IsInf(p, 0) {
			return bad(fmt.Sprintf("prior[%d]", i), "%g not in (0, 1]", p)
		}
		sum += p
	}
	if math.Abs(sum-1) > probTol {
		return bad("prior", "sums to %.6g, want 1", sum)
	}
	if len(c.Actions) < 2 {
		return bad("actions", "%d actions, want at least 2", len(c.Actions))
	}
	ids := map[string]bool{}
	for i, a := range c.Actions {
		f := fmt.Sprintf("actions[%d]", i)
		if a.ID == "" || ids[a.ID] {
			return bad(f+".id", "missing or duplicate id %q", a.ID)
		}
		ids[a.ID] = true
		if len(a.Utility) != n {
			return bad(f+".utility", "%d entries for %d states", len(a.Utility), n)
		}
		if len(a.SenderByState) != 0 && len(a.SenderByState) != n {
			return bad(f+".sender_by_state", "%d entries for %d states", len(a.SenderByState), n)
		}
		for _, x := range append(append([]float64{a.Sender}, a.Utility...), a.SenderByState...) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return bad(f, "non-finite number %g", x)
			}
		}
	}
	if len(c.Evidence) > MaxEvidence {
		return bad("evidence", "%d items, at most %d", len(c.Evidence), MaxEvidence)
	}
	ids = map[string]bool{}
	for i, e := range c.Evidence {
		f := fmt.Sprintf("evidence[%d]", i)
		if e.ID == "" || ids[strings.ToLower(e.ID)] {
			return bad(f+".id", "missing or duplicate id %q", e.ID)
		}
		ids[strings.ToLower(e.ID)] = true
		if strings.TrimSpace(e.Text) == "" {
			return bad(f+".text", "missing")
		}
		if len(e.Likelihood) != n {
			return bad(f+".likelihood", "%d entries for %d states", len(e.Likelihood), n)
		}
		for j, l := range e.Likelihood {
			if !(l >= 0 && l <= 1) {
				return bad(fmt.Sprintf("%s.likelihood[%d]", f, j), "%g not in [0, 1]", l)
			}
		}
	}
	return nil
}

// SenderValue returns v_S(a, s) for action index a and state index s.
func (c *Claim) SenderValue(a, s int) float64 {
	if act := &c.Actions[a]; len(act.SenderByState) > 0 {
		return act.SenderByState[s]
	}
	return c.Actions[a].Sender
}

// expected returns sum_s p[s]·f(s).
func expected(p []float64, f func(s int) float64) float64 {
	v := 0.0
	for s, q := range p {
		if q != 0 {
			v += q * f(s)
		}
	}
	return v
}

// tieTol is the receiver-utility gap below which two actions are tied.
const tieTol = 1e-9

// BestResponse returns the index of the receiver's best action under the
// belief p (a distribution over c.States, len(c.States) entries).
//
// Choice: ties are broken in the sender's favour, as Kamenica & Gentzkow
// assume (the receiver, indifferent, takes the action the sender prefers;
// this makes the sender's value upper semicontinuous, so the optimum is
// attained): among actions within 1e-9 of the best expected utility, the
// one with the highest expected sender value under p, then the first in
// c.Actions order.
func (c *Claim) BestResponse(p []float64) int {
	best := math.Inf(-1)
	eu := make([]float64, len(c.Actions))
	for a := range c.Actions {
		eu[a] = expected(p, func(s int) float64 { return c.Actions[a].Utility[s] })
		best = math.Max(best, eu[a])
	}
	pick, pv := -1, math.Inf(-1)
	for a := range c.Actions {
		if eu[a] < best-tieTol {
			continue
		}
		if v := expected(p, func(s int) float64 { return c.SenderValue(a, s) }); v > pv {
			pick, pv = a, v
		}
	}
	return pick
}

// Value returns the sender's value V(p) = sum_s p[s]·v_S(a*(p), s) of the
// receiver's best response a*(p) to the belief p, valued under p itself
// (the Strategic Persuasion paper's expected action value).
func (c *Claim) Value(p []float64) float64 {
	a := c.BestResponse(p)
	return expected(p, func(s int) float64 { return c.SenderValue(a, s) })
}

// PriorValue is Value(c.Prior): what the sender gets with no information.
func (c *Claim) PriorValue() float64 { return c.Value(c.Prior) }

// ErrImpossible is returned (wrapped) by Posterior when the disclosed
// evidence has probability 0 in every state.
var ErrImpossible = errors.New("evidence impossible in every state")

// Posterior returns the receiver's posterior over c.States after it
// learns that the evidence items of indices items hold: p(s) ∝ prior(s) ·
// prod_i P(e_i | s) (Bayes' rule; items independent given the state). An
// index outside c.Evidence panics. Errors: ErrImpossible when the
// product is 0 in every state.
func (c *Claim) Posterior(items []int) ([]float64, error) {
	return c.PosteriorFrom(c.Prior, items)
}

// PosteriorFrom is Posterior starting from belief p instead of the prior.
func (c *Claim) PosteriorFrom(p []float64, items []int) ([]float64, error) {
	q := append([]float64(nil), p...)
	sum := 0.0
	for s := range q {
		for _, i := range items {
			q[s] *= c.Evidence[i].Likelihood[s]
		}
		sum += q[s]
	}
	if !(sum > 0) {
		return nil, fmt.Errorf("bayes: claim %s: %w", c.ID, ErrImpossible)
	}
	for s := range q {
		q[s] /= sum
	}
	return q, nil
}

// Belief returns P(claim holds) under p: the mass of the states where
// c.Holds is true, in [0, 1].
func (c *Claim) Belief(p []float64) float64 {
	return expected(p, func(s int) float64 {
		if c.Holds[s] {
			return 1
		}
		return 0
	})
}

// Project returns the belief over states that puts mass b on the claim
// holding and keeps the prior's proportions within the states where it
// holds and within those where it fails. It reads a receiver that states
// only how much it believes the claim (an LLM's probe or Likert answer)
// as a posterior. b is clamped to [0, 1].
//
// Choice: proportional projection. An LLM receiver reports one number;
// spreading it over states in the prior's proportions is the least
// informative posterior with that belief in the claim.
func (c *Claim) Project(b float64) []float64 {
	b = math.Min(math.Max(b, 0), 1)
	var in, out float64
	for s, h := range c.Holds {
		if h {
			in += c.Prior[s]
		} else {
			out += c.Prior[s]
		}
	}
	p := make([]float64, len(c.Prior))
	for s, h := range c.Holds {
		if h {
			p[s] = c.Prior[s] * b / in
		} else {
			p[s] = c.Prior[s] * (1 - b) / out
		}
	}
	return p
}

// Likert maps a belief in the claim b ∈ [0, 1] to the 7-point agreement
// scale: 1 + round(6b), so 1 = strongly disagree (b < 1/12), 4 = neither
// (b in [5/12, 7/12)), 7 = strongly agree (b ≥ 11/12). LikertBelief is its
// inverse on the scale points.
//
// Choice: equal-width bins centred on the points (L-1)/6, the Strategic
// Persuasion paper's Likert ratings read as evenly spaced beliefs.
func Likert(b float64) int {
	b = math.Min(math.Max(b, 0), 1)
	return 1 + int(math.Floor(6*b+0.5))
}

// LikertBelief maps a Likert point L in 1..7 to the belief (L-1)/6 in
// [0, 1]; points outside 1..7 are clamped.
func LikertBelief(l int) float64 {
	l = min(max(l, 1), 7)
	return float64(l-1) / 6
}

// SenderAction returns the index of the sender-preferred action: the one
// with the highest expected sender value under the prior (first on ties).
// The Bayesian receiver's "accept" is taking this action.
func (c *Claim) SenderAction() int {
	pick, pv := 0, math.Inf(-1)
	for a := range c.Actions {
		if v := expected(c.Prior, func(s int) float64 { return c.SenderValue(a, s) }); v > pv {
			pick, pv = a, v
		}
	}
	return pick
}
