// Package policynet is the small categorical policy network the planner
// (planner.Policy, over its 31 act sets) and MASP self-play's user side
// (selfplay.Net, over the reaction classes) both use: one tanh hidden
// layer (or none) and a log-softmax over any number of actions, with
// Glorot-uniform initialisation, validation, deep copy and a forward pass
// written once. Package train updates its weights (train.Weights is this
// package's Weights).
package policynet

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// MaxHidden is the largest hidden width New and Validate accept.
const MaxHidden = 4096

// Weights are the parameters of a Net: logits = W2·tanh(W1·x + b1) + b2
// (or W2·x + b2 when the hidden width is 0). W1 is In×Hidden and W2
// Hidden×Actions (In×Actions when linear), row-major; W1 and B1 are empty
// for a linear network.
type Weights struct {
	W1, B1, W2, B2 []float64
}

// Net is a categorical policy network, logits = W2·tanh(W1·x + b1) + b2
// (or W2·x + b2 when Hidden is 0), over Actions actions: W1 is In×Hidden,
// W2 Hidden×Actions (In×Actions when linear), row-major.
type Net struct {
	// In is the input width (len of the feature vector), Hidden the hidden
	// width (0 = linear), Actions the number of actions (>= 2).
	In      int `json:"in"`
	Hidden  int `json:"hidden"`
	Actions int `json:"actions"`
	// W1, B1, W2, B2 are the matrices described above (W1 and B1 empty
	// when linear).
	W1 []float64 `json:"w1,omitempty"`
	B1 []float64 `json:"b1,omitempty"`
	W2 []float64 `json:"w2"`
	B2 []float64 `json:"b2"`
}

// New returns a network whose first layer is drawn from r (Glorot
// uniform, U(-a, a) with a = sqrt(6/(In+Hidden)), In·Hidden draws in row
// order; biases 0; r is not read when hidden is 0) and whose output layer
// is zero, so the initial policy is uniform over the actions. The
// dimensions are not checked here (callers check them with their own
// error); Validate checks them.
func New(in, hidden, actions int, r *rand.Rand) *Net {
	n := &Net{In: in, Hidden: hidden, Actions: actions}
	top := in
	if hidden > 0 {
		a := math.Sqrt(6 / float64(in+hidden))
		n.W1 = make([]float64, in*hidden)
		for i := range n.W1 {
			n.W1[i] = (2*r.Float64() - 1) * a
		}
		n.B1 = make([]float64, hidden)
		top = hidden
	}
	n.W2 = make([]float64, top*actions)
	n.B2 = make([]float64, actions)
	return n
}

// Validate checks the dimensions (in >= 1, hidden 0..MaxHidden, actions
// >= 2) and that every matrix has its size and finite values; the error
// names the field ("w2 has 1 values, want 1085", "b1[3] = NaN, want a
// finite value").
func (n *Net) Validate() error {
	if n.In < 1 || n.Hidden < 0 || n.Hidden > MaxHidden || n.Actions < 2 {
		return fmt.Errorf("in %d, hidden %d, actions %d: want in >= 1, hidden 0..4096, actions >= 2", n.In, n.Hidden, n.Actions)
	}
	top := n.In
	w1, b1 := 0, 0
	if n.Hidden > 0 {
		w1, b1, top = n.In*n.Hidden, n.Hidden, n.Hidden
	}
	for _, f := range []struct {
		name string
		v    []float64
		want int
	}{{"w1", n.W1, w1}, {"b1", n.B1, b1}, {"w2", n.W2, top * n.Actions}, {"b2", n.B2, n.Actions}} {
		if len(f.v) != f.want {
			return fmt.Errorf("%s has %d values, want %d", f.name, len(f.v), f.want)
		}
		for i, x := range f.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return fmt.Errorf("%s[%d] = %v, want a finite value", f.name, i, x)
			}
		}
	}
	return nil
}

// Clone returns a deep copy of n.
func (n *Net) Clone() *Net {
	c := *n
	c.W1 = append([]float64(nil), n.W1...)
	c.B1 = append([]float64(nil), n.B1...)
	c.W2 = append([]float64(nil), n.W2...)
	c.B2 = append([]float64(nil), n.B2...)
	return &c
}

// Weights returns n's matrices (not copies), for train.Optimizer.
func (n *Net) Weights() Weights { return Weights{W1: n.W1, B1: n.B1, W2: n.W2, B2: n.B2} }

// LogProbs writes the log-probabilities (nats) of the Actions actions for
// x (len In) into dst[:0] and returns it: a numerically stable
// log-softmax of the logits. It allocates only when dst is too small or
// Hidden > 64, and is safe for concurrent use.
func (n *Net) LogProbs(dst, x []float64) []float64 {
	dst = append(dst[:0], n.B2...)
	if n.Hidden > 0 {
		var buf [64]float64
		h := buf[:0]
		if n.Hidden > len(buf) {
			h = make([]float64, 0, n.Hidden)
		}
		h = append(h, n.B1...)
		for i, xi := range x {
			if xi == 0 {
				continue
			}
			row := n.W1[i*n.Hidden : (i+1)*n.Hidden]
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
		row := n.W2[i*n.Actions : (i+1)*n.Actions]
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
