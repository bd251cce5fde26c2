// Package grpo holds Probe-RPO's training math as plain float64 reference
// functions (the Probe-RPO paper's §3 Eq. 3): group-relative outcome advantages,
// process-supervised dense advantages from the probed belief, their
// combination A_{i,t} = A_out_i + λ·A_dense_{i,t}, dead-group analysis
// (Probe-RPO paper, Figure 7), and the per-turn PPO-clipped objective with a k3 KL
// penalty and an entropy bonus (Probe-RPO paper, Table 3).
//
// Key, Groups, Inputs and DeadTally are the one definition of a GRPO
// group (the rollouts of one scenario by one persuader against one
// persuadee at one step) and of its per-group statistics, shared by the
// trainer, the trajectory export, the Figure 7 analyses and the report.
//
// Each equation lives in exactly one function here. The trainer's
// autodiff graph, the trajectory exporter and the analyses call these or
// are tested against them, so the math has one reference.
package grpo

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("invalid grpo config")

// Config is every setting of a Probe-RPO training run. Defaults come from the
// Probe-RPO paper's Table 3 unless a field says otherwise; see DefaultConfig
// and docs/grpo.md.
type Config struct {
	// Lambda is λ in A_{i,t} = A_out_i + λ·A_dense_{i,t} (Probe-RPO paper,
	// Eq. 3), >= 0. λ = 0 is plain outcome GRPO. Default 0.5, the paper's
	// best checkpoint (Probe-RPO paper, Table 9).
	Lambda float64 `json:"lambda"`
	// G is the number of rollouts per scenario, i.e. the group size, >= 2.
	// Default 4 (Probe-RPO paper, Table 3).
	G int `json:"g"`
	// ScenariosPerStep is the number of scenarios (groups) per optimiser
	// step, >= 1. Default 16 (Probe-RPO paper, Table 3, "batch 16").
	ScenariosPerStep int `json:"scenarios_per_step"`
	// Epochs is the number of passes over the training scenarios, >= 1.
	// Default 2 (Probe-RPO paper, Table 3: 2 epochs = 182 steps on 1,468
	// scenarios).
	Epochs int `json:"epochs"`
	// LearningRate is the optimiser step size, > 0. Default 1e-5 (Probe-RPO
	// paper, Table 3, for a 4B LLM; a small planner may want more).
	LearningRate float64 `json:"learning_rate"`
	// KLBeta is β, the weight of the k3 KL penalty to the reference
	// (initial) policy, >= 0. Default 0.05 (Probe-RPO paper, Table 3).
	KLBeta float64 `json:"kl_beta"`
	// EntropyCoef weights the entropy bonus, >= 0. Default 0.01 (Probe-RPO
	// paper, Table 3).
	EntropyCoef float64 `json:"entropy_coef"`
	// ClipEps is ε of the PPO-clipped surrogate, in (0, 1).
	// Choice: 0.2, the PPO default (Schulman et al. 2017); the Probe-RPO paper does
	// not state it.
	ClipEps float64 `json:"clip_eps"`
	// Eps is ε in (x - mean)/(std + ε), >= 0; it bounds the advantage of a
	// near-tied group. Choice: 1e-6 (the Probe-RPO paper does not state it).
	Eps float64 `json:"eps"`
	// StrategyWeight is w_strategy in R_out = R_goal + w·R_strategy
	// (reward.Outcome), >= 0. Choice: 1 (the Probe-RPO paper does not state
	// it).
	StrategyWeight float64 `json:"strategy_weight"`
	// StdDDOF is the delta degrees of freedom of the group standard
	// deviation: 0 (population std, divide by n) or 1 (sample std, divide
	// by n-1), as numpy's ddof.
	// Choice: 1, the sample std, because that is what torch.std computes by
	// default and so what TRL's GRPOTrainer and verl's GRPO advantage use:
	// exported advantages then have the scale those trainers expect. Seed
	// 000 and DeepSeekMath §4.1 do not say. With G = 4 the two differ by a
	// factor sqrt(4/3) ≈ 1.155 in the advantage scale.
	StdDDOF int `json:"std_ddof"`
	// DenseMode is how the dense term A_dense is computed (DenseMode,
	// docs/grpo.md). Default DenseScaled, the unbiased form; DensePooled
	// is the length-biased DeepSeekMath form, DenseLengthOnly a control.
	DenseMode DenseMode `json:"dense_mode"`
	// SeparateThreshold is how far apart two rollouts' λ·A_dense at turn 1
	// must be for the dense term to count as separating a dead group
	// (GroupStats.Separated, the Probe-RPO paper's Figure 7), >= 0.
	// Choice: 0.1, a tenth of the outcome advantage's unit scale; the
	// paper gives no threshold, and continuous probe values always differ
	// by more than float rounding.
	SeparateThreshold float64 `json:"separate_threshold"`
	// Seed drives all of the run's randomness (scenario order, sampling).
	Seed uint64 `json:"seed"`
}

// DefaultSeparateThreshold is Config.SeparateThreshold's default.
const DefaultSeparateThreshold = 0.1

// Upper bounds of the trainers' counts (Validate; the train and selfplay
// flags).
//
// Choice: far above any published setting (the Probe-RPO paper's G is 8,
// 4 scenarios per step, 2 epochs, 4 updates) so that no real run meets
// them, while a typo such as --g 9223372036854775807 or --updates 1e9 is
// refused before anything is allocated or trained.
const (
	// MaxG bounds the group size G (rollouts per scenario).
	MaxG = 4096
	// MaxScenariosPerStep bounds the groups of one step.
	MaxScenariosPerStep = 4096
	// MaxEpochs bounds the passes over the training scenarios.
	MaxEpochs = 10_000
	// MaxUpdates bounds the optimiser updates per step.
	MaxUpdates = 10_000
	// MaxSteps bounds a run's steps (a step cap, a checkpoint interval).
	MaxSteps = 1_000_000
)

// UnmarshalJSON decodes a Config; a field the JSON lacks keeps what
// configurations stored before it existed meant: dense_mode "pooled"
// (the only form then) and separate_threshold DefaultSeparateThreshold.
// So resuming an old checkpoint trains exactly as it did. Errors: those
// of encoding/json.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	p := plain(*c)
	p.DenseMode, p.SeparateThreshold = DensePooled, DefaultSeparateThreshold
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Config(p)
	return nil
}

// DefaultConfig returns the defaults documented on Config's fields: λ 0.5,
// G 4, 16 scenarios per step, 2 epochs, learning rate 1e-5, β 0.05,
// entropy 0.01, clip ε 0.2, ε 1e-6, w_strategy 1, sample std (ddof 1),
// dense mode DenseScaled, separation threshold 0.1, seed 0.
func DefaultConfig() Config {
	return Config{
		Lambda:            0.5,
		G:                 4,
		ScenariosPerStep:  16,
		Epochs:            2,
		LearningRate:      1e-5,
		KLBeta:            0.05,
		EntropyCoef:       0.01,
		ClipEps:           0.2,
		Eps:               1e-6,
		StrategyWeight:    1,
		StdDDOF:           1,
		DenseMode:         DenseScaled,
		SeparateThreshold: DefaultSeparateThreshold,
	}
}

// Validate checks every field's range (see Config) and returns an error
// wrapping ErrConfig that names the first bad field.
func (c Config) Validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%w: %s = %v, want %s", ErrConfig, field, v, want)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case !finite(c.Lambda) || c.Lambda < 0:
		return bad("lambda", c.Lambda, "a finite value >= 0")
	case c.G < 2 || c.G > MaxG:
		return bad("g", c.G, fmt.Sprintf("2..%d rollouts per scenario", MaxG))
	case c.ScenariosPerStep < 1 || c.ScenariosPerStep > MaxScenariosPerStep:
		return bad("scenarios_per_step", c.ScenariosPerStep, fmt.Sprintf("1..%d", MaxScenariosPerStep))
	case c.Epochs < 1 || c.Epochs > MaxEpochs:
		return bad("epochs", c.Epochs, fmt.Sprintf("1..%d", MaxEpochs))
	case !finite(c.LearningRate) || c.LearningRate <= 0:
		return bad("learning_rate", c.LearningRate, "a finite value > 0")
	case !finite(c.KLBeta) || c.KLBeta < 0:
		return bad("kl_beta", c.KLBeta, "a finite value >= 0")
	case !finite(c.EntropyCoef) || c.EntropyCoef < 0:
		return bad("entropy_coef", c.EntropyCoef, "a finite value >= 0")
	case !finite(c.ClipEps) || c.ClipEps <= 0 || c.ClipEps >= 1:
		return bad("clip_eps", c.ClipEps, "a value in (0, 1)")
	case !finite(c.StrategyWeight) || c.StrategyWeight < 0:
		return bad("strategy_weight", c.StrategyWeight, "a finite value >= 0")
	case !finite(c.SeparateThreshold) || c.SeparateThreshold < 0:
		return bad("separate_threshold", c.SeparateThreshold, "a finite value >= 0")
	}
	return c.checkNorm()
}

// checkNorm checks the fields the advantage functions read.
func (c Config) checkNorm() error {
	if math.IsNaN(c.Eps) || math.IsInf(c.Eps, 0) || c.Eps < 0 {
		return fmt.Errorf("%w: eps = %v, want a finite value >= 0", ErrConfig, c.Eps)
	}
	if c.StdDDOF != 0 && c.StdDDOF != 1 {
		return fmt.Errorf("%w: std_ddof = %d, want 0 or 1", ErrConfig, c.StdDDOF)
	}
	if !slices.Contains(DenseModes, c.DenseMode) {
		return fmt.Errorf("%w: dense_mode = %q, want one of %v", ErrConfig, c.DenseMode, DenseModes)
	}
	return nil
}
