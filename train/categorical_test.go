package train

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/planner"
)

// logProbs is a plain-Go forward pass of a Weights network (the test's
// reference for the graph).
func logProbs(w Weights, in, hidden, actions int, x []float64) []float64 {
	h := x
	if hidden > 0 {
		h = make([]float64, hidden)
		for j := range hidden {
			s := w.B1[j]
			for i := range in {
				s += x[i] * w.W1[i*hidden+j]
			}
			h[j] = math.Tanh(s)
		}
	}
	out := make([]float64, actions)
	for a := range actions {
		s := w.B2[a]
		for i := range h {
			s += h[i] * w.W2[i*actions+a]
		}
		out[a] = s
	}
	m := slices.Max(out)
	z := 0.0
	for _, l := range out {
		z += math.Exp(l - m)
	}
	for a := range out {
		out[a] -= m + math.Log(z)
	}
	return out
}

func randWeights(r *rand.Rand, in, hidden, actions int) Weights {
	fill := func(n int, sd float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64() * sd
		}
		return v
	}
	if hidden == 0 {
		return Weights{W2: fill(in*actions, 0.5), B2: fill(actions, 0.2)}
	}
	return Weights{W1: fill(in*hidden, 0.4), B1: fill(hidden, 0.1), W2: fill(hidden*actions, 0.5), B2: fill(actions, 0.2)}
}

// TestOptimizerLossMatchesGRPO: for a 7-action network (the self-play
// user policy's size) the graph's loss terms equal grpo.Loss fed a
// plain-Go forward pass, to 1e-9, with the clip acting on both sides.
func TestOptimizerLossMatchesGRPO(t *testing.T) {
	const in, actions = 9, 7
	for _, hidden := range []int{0, 5} {
		r := rand.New(rand.NewPCG(3, uint64(hidden)))
		w := randWeights(r, in, hidden, actions)
		cfg := grpo.DefaultConfig()
		o, err := NewOptimizer(in, hidden, actions, w, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		var batch []Sample
		var ref []grpo.Sample
		shifts := []float64{-0.5, -0.1, 0, 0.1, 0.5}
		for n := range 23 {
			x := make([]float64, in)
			for i := range x {
				x[i] = r.Float64()
			}
			lp := logProbs(w, in, hidden, actions, x)
			a := r.IntN(actions)
			s := Sample{Features: x, Action: a, OldLogp: lp[a] + shifts[n%5], RefLogp: lp[a] - 0.3*r.Float64(), Adv: r.NormFloat64()}
			batch = append(batch, s)
			probs := make([]float64, actions)
			for k, l := range lp {
				probs[k] = math.Exp(l)
			}
			ref = append(ref, grpo.Sample{Logp: lp[a], OldLogp: s.OldLogp, RefLogp: s.RefLogp, Adv: s.Adv, Entropy: grpo.Entropy(probs)})
		}
		got, err := o.Loss(batch)
		if err != nil {
			t.Fatal(err)
		}
		want, err := grpo.Loss(ref, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if want.ClipFrac == 0 || want.KL == 0 {
			t.Fatalf("batch does not exercise the clip and KL: %+v", want)
		}
		for _, c := range [][2]float64{{got.Loss, want.Loss}, {got.Surrogate, want.Surrogate}, {got.KL, want.KL}, {got.Entropy, want.Entropy}, {got.ClipFrac, want.ClipFrac}} {
			if math.Abs(c[0]-c[1]) > 1e-9 {
				t.Errorf("hidden %d: graph %.12f, grpo %.12f", hidden, c[0], c[1])
			}
		}
		// The supervised loss is the mean negative log-likelihood.
		nll := 0.0
		for _, s := range batch {
			nll -= logProbs(w, in, hidden, actions, s.Features)[s.Action]
		}
		nll /= float64(len(batch))
		gotNLL, err := o.StepNLL(batch)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(gotNLL-nll) > 1e-9 {
			t.Errorf("hidden %d: NLL %.12f, want %.12f", hidden, gotNLL, nll)
		}
		after := Weights{W1: slices.Clone(w.W1), B1: slices.Clone(w.B1), W2: slices.Clone(w.W2), B2: slices.Clone(w.B2)}
		o.WeightsInto(after)
		nll2 := 0.0
		for _, s := range batch {
			nll2 -= logProbs(after, in, hidden, actions, s.Features)[s.Action]
		}
		if nll2/float64(len(batch)) >= nll {
			t.Errorf("hidden %d: an NLL step did not lower the NLL (%.6f -> %.6f)", hidden, nll, nll2/float64(len(batch)))
		}
	}
}

// TestOptimizerEqualsTrainerModel: on the planner's shape, Optimizer's
// steps are bit-identical to the trainer's own model (same graph, same
// Adam), and a state round trip through State/NewOptimizer continues
// exactly.
func TestOptimizerEqualsTrainerModel(t *testing.T) {
	p, batch := fixedBatch(t, 6)
	cfg := grpo.DefaultConfig()
	cfg.LearningRate = 1e-2
	m, err := newModel(p, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := p.Spec.Dim()
	o, err := NewOptimizer(in, 6, planner.NumActions, p.Weights(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := m.Step(batch); err != nil {
			t.Fatal(err)
		}
		if _, err := o.Step(batch); err != nil {
			t.Fatal(err)
		}
	}
	want := p.Clone()
	m.policyInto(want)
	got := p.Clone()
	o.WeightsInto(got.Weights())
	if !slices.Equal(got.W1, want.W1) || !slices.Equal(got.W2, want.W2) || !slices.Equal(got.B2, want.B2) {
		t.Fatal("Optimizer and the trainer's model differ after two steps")
	}
	if slices.Equal(got.W2, p.W2) {
		t.Fatal("no step was taken")
	}
	// Resume: a third step from restored state equals a third step here.
	st, err := o.State()
	if err != nil {
		t.Fatal(err)
	}
	o2, err := NewOptimizer(in, 6, planner.NumActions, got.Weights(), cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Step(batch); err != nil {
		t.Fatal(err)
	}
	if _, err := o2.Step(batch); err != nil {
		t.Fatal(err)
	}
	a, b := got.Clone(), got.Clone()
	o.WeightsInto(a.Weights())
	o2.WeightsInto(b.Weights())
	if !slices.Equal(a.W1, b.W1) || !slices.Equal(a.W2, b.W2) || !slices.Equal(a.B2, b.B2) {
		t.Fatal("a restored optimiser's step differs from the original's")
	}
	if _, err := NewOptimizer(in, 6, planner.NumActions, Weights{W2: got.W2}, cfg, nil); err == nil {
		t.Error("wrong weight sizes accepted")
	}
}
