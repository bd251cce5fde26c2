package policynet

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLogProbsHandComputed(t *testing.T) {
	// Linear: logits = x·W2 + b2 = [0, ln 3] -> probabilities 1/4, 3/4.
	lin := &Net{In: 2, Actions: 2, W2: []float64{1, 0, 0, 1}, B2: []float64{0, 0}}
	got := lin.LogProbs(nil, []float64{0, math.Log(3)})
	for a, want := range []float64{math.Log(0.25), math.Log(0.75)} {
		if math.Abs(got[a]-want) > 1e-12 {
			t.Errorf("linear logp[%d] = %v, want %v", a, got[a], want)
		}
	}
	// Hidden: h = tanh(atanh(0.5)) = 0.5, logits = [0, 2·0.5] = [0, 1].
	hid := &Net{In: 1, Hidden: 1, Actions: 2, W1: []float64{1}, B1: []float64{0}, W2: []float64{0, 2}, B2: []float64{0, 0}}
	got = hid.LogProbs(nil, []float64{math.Atanh(0.5)})
	lse := math.Log(1 + math.E)
	for a, want := range []float64{-lse, 1 - lse} {
		if math.Abs(got[a]-want) > 1e-12 {
			t.Errorf("hidden logp[%d] = %v, want %v", a, got[a], want)
		}
	}
}

func TestNewUniformValidClone(t *testing.T) {
	n := New(3, 4, 5, rand.New(rand.NewPCG(1, 2)))
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	a := math.Sqrt(6.0 / 7)
	for i, w := range n.W1 {
		if w == 0 || math.Abs(w) > a {
			t.Errorf("w1[%d] = %v, want nonzero in (-%v, %v)", i, w, a, a)
		}
	}
	for i, lp := range n.LogProbs(nil, []float64{1, -2, 0.5}) {
		if math.Abs(lp-math.Log(0.2)) > 1e-12 {
			t.Errorf("initial logp[%d] = %v, want ln 0.2", i, lp)
		}
	}
	c := n.Clone()
	c.W1[0]++
	if c.W1[0] == n.W1[0] {
		t.Error("Clone shares W1 with the original")
	}
	if lin := New(3, 0, 2, nil); lin.W1 != nil || len(lin.W2) != 6 {
		t.Errorf("linear New: w1 %v, len(w2) %d, want nil and 6", lin.W1, len(lin.W2))
	}
}

func TestValidateNamesField(t *testing.T) {
	n := New(2, 0, 2, nil)
	n.B2[1] = math.NaN()
	if err := n.Validate(); err == nil || err.Error() != "b2[1] = NaN, want a finite value" {
		t.Errorf("NaN bias: err = %v", err)
	}
	n = New(2, 3, 2, rand.New(rand.NewPCG(1, 2)))
	n.W2 = n.W2[:1]
	if err := n.Validate(); err == nil || err.Error() != "w2 has 1 values, want 6" {
		t.Errorf("short w2: err = %v", err)
	}
	if err := (&Net{In: 1, Actions: 1}).Validate(); err == nil || !strings.Contains(err.Error(), "actions >= 2") {
		t.Errorf("one action: err = %v", err)
	}
}
