package planner

import (
	"fmt"
	"math"
	"math/rand/v2"

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
	if hidden < 0 || hidden > 4096 {
		return nil, fmt.Errorf("planner: hidden = %d, want 0..4096", hidden)
	}
	in := spec.Dim()
	p := &Policy{Spec: spec, Hidden: hidden}
	top := in
	if hidden > 0 {
		r := rand.New(rand.NewPCG(seed, 0x91a2))
		a := math.Sqrt(6 / float64(in+hidden))
		p.W1 = make([]float64, in*hidden)
		for i := range p.W1 {
			p.W1[i] = (2*r.Float64() - 1) * a
		}
		p.B1 = make([]float64, hidden)
		top = hidden
	}
	p.W2 = make([]float64, top*NumActions)
	p.B2 = make([]float64, NumActions)
	return p, nil
}

// Validate checks the spec and that every matrix has the size the spec
// and Hidden imply and holds finite values; the error names the field.
func (p *Policy) Validate() error {
	if err := p.Spec.Validate(); err != nil {
		return err
	}
	if p.Hidden < 0 || p.Hidden > 4096 {
		return fmt.Errorf("hidden = %d, want 0..4096", p.Hidden)
	}
	in := p.Spec.Dim()
	top := in
	want := map[string]int{"w1": 0, "b1": 0}
	if p.Hidden > 0 {
		want["w1"], want["b1"] = in*p.Hidden, p.Hidden
		top = p.Hidden
	}
	want["w2"], want["b2"] = top*NumActions, NumActions
	for _, f := range []struct {
		name string
		v    []float64
	}{{"w1", p.W1}, {"b1", p.B1}, {"w2", p.W2}, {"b2", p.B2}} {
		if len(f.v) != want[f.name] {
			return fmt.Errorf("%s has %d values, want %d", f.name, len(f.v), want[f.name])
		}
		for i, x := range f.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s[%d] = %v, want a finite value", f.name, i, x)
			}
		}
	}
	return nil
}

// Clone returns a deep copy of p.
func (p *Policy) Clone() *Policy {
	c := *p
	c.W1 = append([]float64(nil), p.W1...)
	c.B1 = append([]float64(nil), p.B1...)
	c.W2 = append([]float64(nil), p.W2...)
	c.B2 = append([]float64(nil), p.B2...)
	return &c
}

// LogProbs writes the log-probabilities (nats) of the NumActions actions
// for feature vector x (len Spec.Dim()) into dst[:0] and returns it: a
// numerically stable log-softmax of the logits. It allocates only when
// dst is too small, and is safe for concurrent use.
func (p *Policy) LogProbs(dst, x []float64) []float64 {
	dst = append(dst[:0], p.B2...)
	if p.Hidden > 0 {
		var buf [64]float64
		h := buf[:0]
		if p.Hidden > len(buf) {
			h = make([]float64, 0, p.Hidden)
		}
		h = append(h, p.B1...)
		for i, xi := range x {
			if xi == 0 {
				continue
			}
			row := p.W1[i*p.Hidden : (i+1)*p.Hidden]
			for j, w := range row {
				h[j] += xi * w
			}
		}
		for j := range h {
			h[j] = math.Tanh(h[j])
		}
		x = h
	}
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		row := p.W2[i*NumActions : (i+1)*NumActions]
		for a, w := range row {
			dst[a] += xi * w
		}
	}
	m := math.Inf(-1)
	for _, l := range dst {
		m = max(m, l)
	}
	s := 0.0
	for _, l := range dst {
		s += math.Exp(l - m)
	}
	lse := m + math.Log(s)
	for a := range dst {
		dst[a] -= lse
	}
	return dst
}
