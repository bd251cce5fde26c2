package grpo

import (
	"errors"
	"fmt"
	"math"
)

// ClippedSurrogate returns the PPO-clipped surrogate of one turn (or
// token), to be maximised:
//
//	min(ρ·A, clip(ρ, 1-ε, 1+ε)·A),  ρ = exp(logp - oldLogp)
//
// (Schulman et al. 2017 Eq. 7; DeepSeekMath §4.1.1 Eq. 3; Probe-RPO paper, §3).
// logp is the log-probability of the taken action under the policy being
// optimised, oldLogp under the policy that sampled it (nats); adv is
// A_{i,t}; clipEps is ε (Config.ClipEps). With A > 0 the ratio is capped
// at 1+ε; with A < 0 it is floored at 1-ε; the other side is unclipped.
func ClippedSurrogate(logp, oldLogp, adv, clipEps float64) float64 {
	ratio := math.Exp(logp - oldLogp)
	clipped := min(max(ratio, 1-clipEps), 1+clipEps)
	return min(ratio*adv, clipped*adv)
}

// KL3 returns Schulman's k3 estimator of KL(π_θ ‖ π_ref) from one sample
// drawn from π_θ:
//
//	exp(refLogp - logp) - (refLogp - logp) - 1
//
// unbiased and always >= 0 (Schulman 2020, "Approximating KL divergence";
// DeepSeekMath §4.1.1 Eq. 4; the Probe-RPO paper's Table 3 KL term). logp and
// refLogp are the sampled action's log-probabilities (nats) under the
// policy and the reference (initial) policy.
func KL3(logp, refLogp float64) float64 {
	d := refLogp - logp
	return math.Exp(d) - d - 1
}

// Entropy returns the Shannon entropy -Σ p ln p (nats) of a probability
// distribution, the bonus weighted by Config.EntropyCoef (Probe-RPO paper,
// Table 3). Entries equal to 0 contribute 0 (the limit of p ln p); probs
// should sum to 1. A negative or NaN entry gives NaN, so the error surfaces.
func Entropy(probs []float64) float64 {
	h := 0.0
	for _, p := range probs {
		switch {
		case p > 0:
			h -= p * math.Log(p)
		case p == 0:
		default:
			return math.NaN()
		}
	}
	return h
}

// Sample is one persuader turn (or token) of a training batch: what the
// objective needs to score it.
type Sample struct {
	// Logp, OldLogp and RefLogp are the taken action's log-probabilities
	// (nats) under the current, sampling and reference policies.
	Logp, OldLogp, RefLogp float64
	// Adv is the advantage A_{i,t} (Analyze / Combine).
	Adv float64
	// Entropy is the policy's entropy at this decision (nats), e.g.
	// Entropy(probs) of its action distribution.
	Entropy float64
}

// LossTerms is Loss's result: the loss and its parts, each a mean over
// the batch's samples.
type LossTerms struct {
	// Loss is the value to minimise (see Loss).
	Loss float64
	// Surrogate, KL and Entropy are the batch means of ClippedSurrogate,
	// KL3 and Sample.Entropy.
	Surrogate, KL, Entropy float64
	// ClipFrac is the share of samples whose surrogate took the clipped
	// branch (strictly below the unclipped one), in [0, 1].
	ClipFrac float64
	// N is the number of samples.
	N int
}

// ErrEmptyBatch is returned by Loss for a batch without samples.
var ErrEmptyBatch = errors.New("grpo: empty batch")

// Loss returns the Probe-RPO training loss of a batch, to be minimised:
//
//	L = -(1/N) Σ_n [ surrogate_n - β·KL3_n + c·H_n ]
//
// with surrogate_n = ClippedSurrogate(Logp, OldLogp, Adv, cfg.ClipEps),
// KL3_n = KL3(Logp, RefLogp), H_n = Sample.Entropy, β = cfg.KLBeta and c =
// cfg.EntropyCoef (Probe-RPO paper, Table 3; DeepSeekMath §4.1.1 Eq. 3 with the
// KL inside the objective rather than in the reward).
//
// Choice: one mean over all samples (turns) of the batch, so every turn
// weighs the same. DeepSeekMath averages over each output's tokens first
// and then over the group, which gives turns of short episodes more
// weight; the flat mean avoids that length bias (as Dr. GRPO, Liu et al.
// 2025, argues).
//
// Errors: ErrEmptyBatch for no samples; ErrConfig (wrapped) for a
// ClipEps outside (0, 1) or a negative or non-finite KLBeta/EntropyCoef;
// ErrReward (wrapped) naming the first sample whose loss is not finite.
func Loss(batch []Sample, cfg Config) (LossTerms, error) {
	var lt LossTerms
	if len(batch) == 0 {
		return lt, ErrEmptyBatch
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !finite(cfg.ClipEps) || cfg.ClipEps <= 0 || cfg.ClipEps >= 1:
		return lt, fmt.Errorf("%w: clip_eps = %v, want a value in (0, 1)", ErrConfig, cfg.ClipEps)
	case !finite(cfg.KLBeta) || cfg.KLBeta < 0:
		return lt, fmt.Errorf("%w: kl_beta = %v, want a finite value >= 0", ErrConfig, cfg.KLBeta)
	case !finite(cfg.EntropyCoef) || cfg.EntropyCoef < 0:
		return lt, fmt.Errorf("%w: entropy_coef = %v, want a finite value >= 0", ErrConfig, cfg.EntropyCoef)
	}
	clipped := 0
	for n, s := range batch {
		surr := ClippedSurrogate(s.Logp, s.OldLogp, s.Adv, cfg.ClipEps)
		kl := KL3(s.Logp, s.RefLogp)
		obj := surr - cfg.KLBeta*kl + cfg.EntropyCoef*s.Entropy
		if !finite(obj) {
			return LossTerms{}, fmt.Errorf("%w: sample %d gives a non-finite objective (surrogate %v, KL %v, entropy %v)",
				ErrReward, n, surr, kl, s.Entropy)
		}
		if surr < math.Exp(s.Logp-s.OldLogp)*s.Adv {
			clipped++
		}
		lt.Surrogate += surr
		lt.KL += kl
		lt.Entropy += s.Entropy
		lt.Loss -= obj
	}
	n := float64(len(batch))
	lt.N = len(batch)
	lt.Loss /= n
	lt.Surrogate /= n
	lt.KL /= n
	lt.Entropy /= n
	lt.ClipFrac = float64(clipped) / n
	return lt, nil
}
