package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/persuarena/persuarena/grpo"
	"github.com/persuarena/persuarena/planner"
)

// fixedBatch is a batch on a random (non-uniform) policy whose sampling
// log-probabilities are shifted by ±0.1..0.5 nats, so that the PPO clip
// acts on both sides for positive and negative advantages.
func fixedBatch(t *testing.T, hidden int) (*planner.Policy, []Sample) {
	t.Helper()
	spec := planner.FeatureSpec{Version: planner.FeatureVersion, Tmax: 10, BowDims: 4}
	p, err := planner.NewPolicy(spec, hidden, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range p.W2 {
		p.W2[i] = r.NormFloat64() * 0.5
	}
	for i := range p.B2 {
		p.B2[i] = r.NormFloat64() * 0.2
	}
	ref := p.Clone()
	for i := range ref.B2 {
		ref.B2[i] += r.NormFloat64() * 0.3
	}
	var batch []Sample
	var lp []float64
	shifts := []float64{-0.5, -0.1, 0, 0.1, 0.5}
	for n := range 37 {
		x := make([]float64, spec.Dim())
		for i := range x {
			if r.IntN(3) == 0 {
				x[i] = r.Float64()
			}
		}
		a := r.IntN(planner.NumActions)
		lp = p.LogProbs(lp, x)
		old := lp[a] + shifts[n%len(shifts)]
		rl := ref.LogProbs(nil, x)[a]
		adv := r.NormFloat64()
		batch = append(batch, Sample{Features: x, Action: a, OldLogp: old, RefLogp: rl, Adv: adv})
	}
	return p, batch
}

// TestGraphLossMatchesGRPO computes the loss of a fixed batch with the
// GoMLX graph and with grpo.Loss (the reference functions, fed the
// planner's own log-probabilities and entropies) and compares every term.
func TestGraphLossMatchesGRPO(t *testing.T) {
	for _, hidden := range []int{0, 7} {
		p, batch := fixedBatch(t, hidden)
		cfg := grpo.DefaultConfig()
		m, err := newModel(p, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Loss(batch)
		if err != nil {
			t.Fatal(err)
		}
		ref := make([]grpo.Sample, len(batch))
		var lp []float64
		for i, s := range batch {
			lp = p.LogProbs(lp, s.Features)
			probs := make([]float64, len(lp))
			for a, l := range lp {
				probs[a] = math.Exp(l)
			}
			ref[i] = grpo.Sample{Logp: lp[s.Action], OldLogp: s.OldLogp, RefLogp: s.RefLogp, Adv: s.Adv, Entropy: grpo.Entropy(probs)}
		}
		want, err := grpo.Loss(ref, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if want.ClipFrac == 0 || want.ClipFrac == 1 || want.KL == 0 {
			t.Fatalf("batch does not exercise the clip and KL: %+v", want)
		}
		for _, c := range []struct {
			name      string
			got, want float64
		}{{"loss", got.Loss, want.Loss}, {"surrogate", got.Surrogate, want.Surrogate}, {"kl", got.KL, want.KL},
			{"entropy", got.Entropy, want.Entropy}, {"clip_frac", got.ClipFrac, want.ClipFrac}} {
			if math.Abs(c.got-c.want) > 1e-9 {
				t.Errorf("hidden %d: graph %s = %.12f, grpo %.12f", hidden, c.name, c.got, c.want)
			}
		}
	}
}

// TestAdamStepFollowsGradient checks the autodiff gradient against central
// finite differences of the graph loss: Adam's first step moves every
// parameter by lr·g/(|g|+1e-7) (bias-corrected moments equal g and g²),
// so each moved parameter must move by about lr against the sign of its
// finite-difference gradient.
func TestAdamStepFollowsGradient(t *testing.T) {
	p, batch := fixedBatch(t, 6)
	cfg := grpo.DefaultConfig()
	cfg.LearningRate = 1e-3
	lossAt := func(q *planner.Policy) float64 {
		m, err := newModel(q, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		lt, err := m.Loss(batch)
		if err != nil {
			t.Fatal(err)
		}
		return lt.Loss
	}
	m, err := newModel(p, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Step(batch); err != nil {
		t.Fatal(err)
	}
	after := p.Clone()
	m.policyInto(after)
	checked := 0
	params := []struct {
		name         string
		before, next []float64
	}{{"w1", p.W1, after.W1}, {"b1", p.B1, after.B1}, {"w2", p.W2, after.W2}, {"b2", p.B2, after.B2}}
	for _, pr := range params {
		for i := 0; i < len(pr.before); i += 1 + len(pr.before)/12 {
			const h = 1e-6
			q := p.Clone()
			qs := map[string][]float64{"w1": q.W1, "b1": q.B1, "w2": q.W2, "b2": q.B2}[pr.name]
			qs[i] += h
			up := lossAt(q)
			qs[i] -= 2 * h
			down := lossAt(q)
			g := (up - down) / (2 * h)
			step := pr.next[i] - pr.before[i]
			if math.Abs(g) < 1e-5 {
				continue // too flat for a reliable sign
			}
			want := -cfg.LearningRate * g / (math.Abs(g) + 1e-7)
			if math.Abs(step-want) > 1e-3*cfg.LearningRate {
				t.Errorf("%s[%d]: Adam step %.3g, want %.3g (finite-difference gradient %.4g)", pr.name, i, step, want, g)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d parameters checked", checked)
	}
}
