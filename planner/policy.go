package planner

import (
	"fmt"
	"math/rand/v2"

	"github.com/persuarena/persuarena/policynet"
	"github.com/persuarena/persuarena/tagger"
)

// NumActions is the size of the action space: the 31 non-empty subsets of
// the five acts.
//
// Choice: one softmax over every non-empty act set rather than five
// independent Bernoulli heads: the log-probability and entropy of a turn's
// choice are exact and cheap, combinations ("autonomy + commitment ask")
// get their own preference, and an empty turn can never be drawn.
const NumActions = 1<<tagger.NumActs - 1

// ActionSet returns the act set of action a in [0, NumActions): the set
// whose bit pattern is a+1 (bit i = tagger.Act i).
func ActionSet(a int) tagger.ActSet { return tagger.ActSet(a + 1) }

// ActionOf returns the action index of a non-empty act set, or -1.
func ActionOf(s tagger.ActSet) int {
	if s == 0 || s >= 1<<tagger.NumActs {
		return -1
	}
	return int(s) - 1
}

// Policy is the planner's network: logits = W2·tanh(W1·x + b1) + b2 over
// the NumActions act sets, or logits = W2·x + b2 when Hidden is 0, with x
// the FeatureSpec vector. Matrices are row-major float64 slices: W1 is
// In×Hidden (x·W1), W2 is Hidden×NumActions (or In×NumActions).
type Policy struct {
	// Spec is the feature layout the policy reads; In = Spec.Dim().
	Spec FeatureSpec `json:"spec"`
	// Hidden is the hidden layer width, >= 0 (0 = linear policy).
	Hidden int       `json:"hidden"`
	W1     []float64 `json:"w1,omitempty"`
	B1     []float64 `json:"b1,omitempty"`
	W2     []float64 `json:"w2"`
	B2     []float64 `json:"b2"`
}

// DefaultHidden is the default hidden width. Choice: 32 tanh units, enough
// for turn-by-reaction interactions of ~40 features and fast on 2 cores.
const DefaultHidden = 32

// NewPolicy returns a policy for spec with the given hidden width whose
// first layer is drawn from seed (Glorot uniform, U(-a, a) with a =
// sqrt(6/(In+Hidden)); biases 0) and whose output layer is zero, so the
// initial policy is uniform over the 31 act sets (the built-in random
// persuader's choice distribution). Errors: an invalid spec or hidden < 0.
func NewPolicy(spec FeatureSpec, hidden int, seed uint64) (*Policy, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if hidden < 0 || hidden > policynet.MaxHidden {
		return nil, fmt.Errorf("planner: hidden = %d, want 0..4096", hidden)
	}
	n := policynet.New(spec.Dim(), hidden, NumActions, rand.New(rand.NewPCG(seed, 0x91a2)))
	return &Policy{Spec: spec, Hidden: hidden, W1: n.W1, B1: n.B1, W2: n.W2, B2: n.B2}, nil
}

// net is p seen as a policynet.Net (sharing p's matrices).
func (p *Policy) net() policynet.Net {
	return policynet.Net{In: p.Spec.Dim(), Hidden: p.Hidden, Actions: NumActions, W1: p.W1, B1: p.B1, W2: p.W2, B2: p.B2}
}

// Validate checks the spec and that every matrix has the size the spec
// and Hidden imply and holds finite values; the error names the field.
func (p *Policy) Validate() error {
	if err := p.Spec.Validate(); err != nil {
		return err
	}
	if p.Hidden < 0 || p.Hidden > policynet.MaxHidden {
		return fmt.Errorf("hidden = %d, want 0..4096", p.Hidden)
	}
	n := p.net()
	return n.Validate()
}

// Clone returns a deep copy of p.
func (p *Policy) Clone() *Policy {
	n := p.net()
	c := n.Clone()
	return &Policy{Spec: p.Spec, Hidden: p.Hidden, W1: c.W1, B1: c.B1, W2: c.W2, B2: c.B2}
}

// Weights returns p's matrices (not copies), for train.Optimizer.
func (p *Policy) Weights() policynet.Weights {
	return policynet.Weights{W1: p.W1, B1: p.B1, W2: p.W2, B2: p.B2}
}

// LogProbs writes the log-probabilities (nats) of the NumActions actions
// for feature vector x (len Spec.Dim()) into dst[:0] and returns it: a
// numerically stable log-softmax of the logits (policynet.Net.LogProbs).
// It allocates only when dst is too small, and is safe for concurrent
// use.
func (p *Policy) LogProbs(dst, x []float64) []float64 {
	n := p.net()
	return n.LogProbs(dst, x)
}
