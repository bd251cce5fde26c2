// Package masp brings MASP (MASP paper) to PersuArena: the system
// and user rewards built on BDI progress (package bdi), the rationality
// judge and rationality-constrained success, the task success judges of
// P4G, ESConv and CraigslistBargain with their label parsers, the
// closed-loop evaluation protocol with an eight-turn budget (Appendix C.2)
// against any episode.Persuadee, and the metrics SR@T, AT, RCSR@T,
// RCSR@t curves and worst-case figures over an ensemble of users, with
// paired bootstrap confidence intervals from package stats.
package masp

import (
	"github.com/persuarena/persuarena/bdi"
)

// Weights are MASP's reward weights and discount (MASP paper, Eq. 5, 15-16).
// All default to the released code's values.
type Weights struct {
	// Prog is w_prog, the weight of progress Delta s in both rewards
	// (released rewards.py RewardConfig.alpha_shape = 1.0).
	Prog float64
	// Inf is w_inf, the weight of the mentalization error ||z-hat - z||_A^2
	// in the system reward (alpha_ment = 0.25).
	Inf float64
	// Rat is w_rat, the weight of the rationality signal q in the user
	// reward (alpha_rat = 0.5).
	Rat float64
	// Gamma is the discount of the returns J_S and J_U (MASP paper, §3.1:
	// all reported self-play runs use 0.97).
	Gamma float64
	// KL is the coefficient of the KL term to the warm-start reference
	// inside the GRPO objective, not part of the rewards (MASP paper, Eq. 24;
	// released rl/grpo.py GRPOConfig.kl_coeff = 0.05).
	KL float64
}

// DefaultWeights are the released defaults: w_prog 1.0, w_inf 0.25,
// w_rat 0.5, gamma 0.97, KL 0.05 (Tecitomous/MASP-Proactive-Dialogue,
// src/masp/rl/rewards.py and rl/grpo.py; gamma from the MASP paper's §3.1).
var DefaultWeights = Weights{Prog: 1.0, Inf: 0.25, Rat: 0.5, Gamma: 0.97, KL: 0.05}

// SystemReward returns r_S = w_prog Delta s - w_inf ||zHat - z||_A^2
// (MASP paper, Eq. 15) for progress increment dS, the student
// estimate zHat and the teacher state z (both of length 3d + 3). A nil
// zHat drops the inference term (no student).
func SystemReward(dS float64, zHat, z []float64, d int, w Weights) float64 {
	r := w.Prog * dS
	if zHat != nil {
		r -= w.Inf * bdi.DistA(zHat, z, d)
	}
	return r
}

// UserReward returns r_U = -w_prog Delta s + w_rat q (MASP paper, Eq. 16) for
// progress increment dS and rationality signal q in {-1, 0, +1}.
func UserReward(dS float64, q int, w Weights) float64 {
	return -w.Prog*dS + w.Rat*float64(q)
}

// Discounted returns sum_t gamma^t r_t (MASP paper, Eq. 5), t from 0.
func Discounted(rs []float64, gamma float64) float64 {
	g, s := 1.0, 0.0
	for _, r := range rs {
		s += g * r
		g *= gamma
	}
	return s
}
