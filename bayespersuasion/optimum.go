package bayespersuasion

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// Benchmarks are a claim's exact reference values, all in the sender's
// units (Claim.Value), each an expectation over the prior.
type Benchmarks struct {
	// Prior is V(prior): the value with no information (no disclosure).
	Prior float64 `json:"prior"`
	// Optimal is the sender's best value over all signals: the concave
	// closure of V evaluated at the prior (Kamenica & Gentzkow 2011).
	Optimal float64 `json:"optimal"`
	// Full is the value of revealing the state: sum_s prior(s)·V(δ_s).
	Full float64 `json:"full"`
	// PoolAll is the expected value when the sender discloses every item
	// of its evidence pool that holds; PoolBest when it discloses, for each
	// realisation, the subset of holding items that the Bayesian receiver
	// (Receiver, which does not read anything into items left out) values
	// most. PoolBest may exceed Optimal: selective disclosure to a
	// receiver that ignores what is withheld is not a Bayes-plausible
	// signal.
	PoolAll  float64 `json:"pool_all"`
	PoolBest float64 `json:"pool_best"`
	// Signal is an optimal signal as action recommendations: Signal[s][a]
	// is the probability of recommending action a in state s; each
	// recommendation is obeyed by the receiver (sender-preferred ties).
	Signal [][]float64 `json:"signal"`
}

// OptimalGain is Optimal - Prior, the largest gain any sender can expect.
func (b Benchmarks) OptimalGain() float64 { return b.Optimal - b.Prior }

// Share returns gain / OptimalGain(), NaN when the optimal gain is below
// 1e-9 (the prior already gives the sender its best).
func (b Benchmarks) Share(gain float64) float64 {
	g := b.OptimalGain()
	if g < 1e-9 {
		return math.NaN()
	}
	return gain / g
}

// Optimum computes c's Benchmarks. The optimal value is the linear
// program over action-recommendation signals with obedience constraints
// (exact for finitely many actions: by the revelation principle a signal
// need say no more than which action to take); for two states it is
// computed a second time as the upper concave envelope of V over P(state
// 0) (Envelope) and the two must agree within 1e-7. Errors: an invalid
// claim (Validate); the simplex failing, or the two methods disagreeing.
func Optimum(c *Claim) (Benchmarks, error) {
	if err := c.Validate(); err != nil {
		return Benchmarks{}, err
	}
	b := Benchmarks{Prior: c.PriorValue()}
	for s, mu := range c.Prior {
		d := make([]float64, len(c.States))
		d[s] = 1
		b.Full += mu * c.Value(d)
	}
	opt, sig, err := RecommendationLP(c)
	if err != nil {
		return Benchmarks{}, err
	}
	b.Optimal, b.Signal = opt, sig
	if len(c.States) == 2 {
		env := Envelope(c)
		if math.Abs(env-opt) > 1e-7 {
			return Benchmarks{}, fmt.Errorf("bayes: claim %s: envelope %g and linear program %g disagree", c.ID, env, opt)
		}
		b.Optimal = env
	}
	b.PoolAll, b.PoolBest = poolValues(c)
	return b, nil
}

// Envelope returns the concave closure of V at the prior for a claim with
// exactly two states, over q = P(state 0). V is piecewise linear between
// the beliefs where the receiver's best response changes, and by the
// sender-preferred tie-break each piece lies below the values at its
// ends, so the closure is the upper concave hull of V at 0, 1 and those
// breakpoints: the largest chord between two of them over the prior. It
// panics when c does not have two states.
func Envelope(c *Claim) float64 {
	if len(c.States) != 2 {
		panic("bayes: Envelope needs two states")
	}
	qs := []float64{0, 1}
	for a := range c.Actions {
		for b := a + 1; b < len(c.Actions); b++ {
			// q·d0 + (1-q)·d1 = 0 with d_s = u(a,s) - u(b,s).
			d0 := c.Actions[a].Utility[0] - c.Actions[b].Utility[0]
			d1 := c.Actions[a].Utility[1] - c.Actions[b].Utility[1]
			if den := d0 - d1; den != 0 {
				if q := -d1 / den; q > 0 && q < 1 {
					qs = append(qs, q)
				}
			}
		}
	}
	slices.Sort(qs)
	vs := make([]float64, len(qs))
	for i, q := range qs {
		vs[i] = c.Value([]float64{q, 1 - q})
	}
	mu := c.Prior[0]
	best := math.Inf(-1)
	for i, qi := range qs {
		for j := i; j < len(qs); j++ {
			qj := qs[j]
			if qi > mu || qj < mu {
				continue
			}
			v := vs[i]
			if qj > qi {
				v = vs[i] + (vs[j]-vs[i])*(mu-qi)/(qj-qi)
			}
			best = math.Max(best, v)
		}
	}
	return best
}

// RecommendationLP solves the sender's problem as a linear program over
// signals that recommend an action: variables π(a | s) ≥ 0 with sum_a π(a
// | s) = 1 for each state, obedience sum_s prior(s)·π(a | s)·(u(a, s) -
// u(a', s)) ≥ 0 for every pair a ≠ a', objective sum_s prior(s) sum_a π(a
// | s)·v_S(a, s). It returns the optimal value and the signal as
// signal[s][a] = π(a | s). Each obedience row has its own slack variable,
// so the equality system has full row rank. Errors: the simplex failing
// (wrapped).
func RecommendationLP(c *Claim) (float64, [][]float64, error) {
	nS, nA := len(c.States), len(c.Actions)
	nX := nA * nS
	nPairs := nA * (nA - 1)
	nVar := nX + nPairs
	rows := nS + nPairs
	A := mat.NewDense(rows, nVar, nil)
	b := make([]float64, rows)
	cost := make([]float64, nVar)
	x := func(a, s int) int { return a*nS + s }
	for s := range nS {
		for a := range nA {
			A.Set(s, x(a, s), 1)
			cost[x(a, s)] = -c.Prior[s] * c.SenderValue(a, s)
		}
		b[s] = 1
	}
	r := nS
	for a := range nA {
		for o := range nA {
			if o == a {
				continue
			}
			for s := range nS {
				A.Set(r, x(a, s), c.Prior[s]*(c.Actions[o].Utility[s]-c.Actions[a].Utility[s]))
			}
			A.Set(r, nX+r-nS, 1)
			r++
		}
	}
	f, sol, err := lp.Simplex(cost, A, b, 1e-12, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("bayes: claim %s: recommendation linear program: %w", c.ID, err)
	}
	sig := make([][]float64, nS)
	for s := range nS {
		sig[s] = make([]float64, nA)
		for a := range nA {
			sig[s][a] = math.Max(0, sol[x(a, s)])
		}
	}
	return -f, sig, nil
}

// poolValues returns Benchmarks.PoolAll and PoolBest by enumerating every
// realisation of the evidence pool (2^n subsets, n ≤ MaxEvidence).
func poolValues(c *Claim) (all, best float64) {
	n := len(c.Evidence)
	val := subsetValues(c)
	// top[m] = max over submasks of m of val: built by removing one item.
	top := slices.Clone(val)
	for m := 1; m < 1<<n; m++ {
		for i := range n {
			if m&(1<<i) != 0 {
				top[m] = math.Max(top[m], top[m&^(1<<i)])
			}
		}
	}
	for s, mu := range c.Prior {
		for m := 0; m < 1<<n; m++ {
			pr := RealisationProb(c, m, s)
			if pr == 0 {
				continue
			}
			all += mu * pr * val[m]
			best += mu * pr * top[m]
		}
	}
	return all, best
}

// subsetValues returns V(posterior after the items of mask) for every
// mask of c.Evidence; -Inf for masks impossible in every state.
func subsetValues(c *Claim) []float64 {
	n := len(c.Evidence)
	val := make([]float64, 1<<n)
	items := make([]int, 0, n)
	for m := range val {
		items = items[:0]
		for i := range n {
			if m&(1<<i) != 0 {
				items = append(items, i)
			}
		}
		p, err := c.Posterior(items)
		if err != nil {
			val[m] = math.Inf(-1)
			continue
		}
		val[m] = c.Value(p)
	}
	return val
}

// RealisationProb returns P(exactly the items of mask hold | state s):
// prod over items in mask of P(e|s) times prod over the others of 1 -
// P(e|s). Bit i of mask is c.Evidence[i].
func RealisationProb(c *Claim, mask, s int) float64 {
	pr := 1.0
	for i, e := range c.Evidence {
		if mask&(1<<i) != 0 {
			pr *= e.Likelihood[s]
		} else {
			pr *= 1 - e.Likelihood[s]
		}
	}
	return pr
}
