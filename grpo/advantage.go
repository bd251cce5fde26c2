package grpo

import (
	"errors"
	"fmt"
	"math"
)

// ErrReward is wrapped by the errors the advantage functions return for a
// reward they cannot use (an infinity) or groups of mismatched shape.
var ErrReward = errors.New("invalid reward")

// TieTolerance decides when a group's rewards count as all equal for
// normalisation: when every deviation from the group mean is at most
// TieTolerance·max(1, |mean|), the normalised values are exact zeros.
//
// Choice: the mean of equal floats can differ from them by rounding (the
// mean of three 0.1s is 0.10000000000000002); without the guard that
// residue divided by std + ε ≈ ε would give advantages of order 1e-11 /
// 1e-6 instead of 0. 1e-12 is far below any real reward difference
// (rewards are O(1); probes are read to about 1e-6).
const TieTolerance = 1e-12

// SeparateTolerance is how far two rollouts' dense advantages must differ
// at some turn for the dense term to separate them (GroupStats.Separated).
// Choice: 1e-12, the same scale as TieTolerance.
const SeparateTolerance = 1e-12

// normalize returns (x_i - mean)/(std + eps) for the n values of xs
// (SPEC §2, seed 000 Eq. 3, DeepSeekMath §4.1.2-4.1.3), where std uses
// n - ddof in its denominator. Values tied within TieTolerance give exact
// zeros, and so do fewer than two values. xs must be finite.
func normalize(xs []float64, eps float64, ddof int) []float64 {
	z := make([]float64, len(xs))
	n := len(xs)
	if n < 2 {
		return z
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(n)
	maxDev := 0.0
	for i, x := range xs {
		z[i] = x - mean
		maxDev = math.Max(maxDev, math.Abs(z[i]))
	}
	if maxDev <= TieTolerance*math.Max(1, math.Abs(mean)) {
		clear(z)
		return z
	}
	ss := 0.0
	for _, d := range z {
		ss += d * d
	}
	std := math.Sqrt(ss / float64(n-ddof))
	for i := range z {
		z[i] /= std + eps
	}
	return z
}

// OutcomeAdvantages returns the group-relative outcome advantage of each
// rollout of one group (one scenario's G rollouts):
//
//	A_out_i = (R_out_i - mean_G R_out) / (std_G R_out + ε)
//
// (SPEC §2, seed 000 Eq. 3 outcome term, DeepSeekMath §4.1.2), with ε =
// cfg.Eps and the std's ddof cfg.StdDDOF. The result has len(rOut)
// entries.
//
// A group whose rewards are all equal (within TieTolerance) gets exact
// zeros, and so does a group with fewer than two scored rollouts.
//
// Choice: a NaN R_out marks a failed episode (reward.GoalRewards.Goal
// returns NaN for decision.TermFailed). It is left out of the group's mean
// and std and gets advantage 0, so a failure neither rewards nor punishes
// the others; it is not an error.
//
// Errors: ErrReward (wrapped) for an infinite R_out; ErrConfig for
// cfg.Eps < 0 or non-finite, or cfg.StdDDOF not 0 or 1.
func OutcomeAdvantages(rOut []float64, cfg Config) ([]float64, error) {
	if err := cfg.checkNorm(); err != nil {
		return nil, err
	}
	vals := make([]float64, 0, len(rOut))
	for i, r := range rOut {
		if math.IsInf(r, 0) {
			return nil, fmt.Errorf("%w: R_out of rollout %d is %v", ErrReward, i, r)
		}
		if !math.IsNaN(r) {
			vals = append(vals, r)
		}
	}
	z := normalize(vals, cfg.Eps, cfg.StdDDOF)
	adv := make([]float64, len(rOut))
	j := 0
	for i, r := range rOut {
		if !math.IsNaN(r) {
			adv[i] = z[j]
			j++
		}
	}
	return adv, nil
}

// DenseAdvantages returns the process-supervised dense advantage of every
// persuader turn of one group (SPEC §2, seed 000 Eq. 3 dense term,
// DeepSeekMath §4.1.3). dense[i][t] is r_t = B_t - B_{t-1} of rollout i's
// persuader turn t+1 (0-based index t), NaN when the probe read-out is
// missing. All non-missing dense rewards of the group are normalised
// together, r~ = (r - mean)/(std + ε), and
//
//	A_dense_{i,t} = Σ_{t' >= t} r~_{i,t'}
//
// The result has dense's shape (rows of different lengths are fine).
//
// Choice: a missing r_t is left out of the group statistics and adds 0 to
// the sums; the turn still gets the sum of its later turns' r~. All-equal
// dense rewards (within TieTolerance), or non-missing rewards from fewer
// than two rollouts, give exact zeros: a group-relative term needs at
// least two rollouts to compare.
//
// Errors: ErrReward (wrapped) for an infinite r_t; ErrConfig as in
// OutcomeAdvantages.
func DenseAdvantages(dense [][]float64, cfg Config) ([][]float64, error) {
	if err := cfg.checkNorm(); err != nil {
		return nil, err
	}
	var vals []float64
	rollouts := 0
	for i, row := range dense {
		has := false
		for t, r := range row {
			if math.IsInf(r, 0) {
				return nil, fmt.Errorf("%w: dense reward of rollout %d turn %d is %v", ErrReward, i, t+1, r)
			}
			if !math.IsNaN(r) {
				vals = append(vals, r)
				has = true
			}
		}
		if has {
			rollouts++
		}
	}
	adv := make([][]float64, len(dense))
	for i, row := range dense {
		adv[i] = make([]float64, len(row))
	}
	if rollouts < 2 {
		return adv, nil
	}
	z := normalize(vals, cfg.Eps, cfg.StdDDOF)
	j := 0
	for i, row := range dense {
		for t, r := range row {
			if !math.IsNaN(r) {
				adv[i][t] = z[j]
				j++
			}
		}
		// Reverse cumulative sum: turn t collects r~ of turns >= t.
		acc := 0.0
		for t := len(row) - 1; t >= 0; t-- {
			acc += adv[i][t]
			adv[i][t] = acc
		}
	}
	return adv, nil
}

// Combine returns A_{i,t} = A_out_i + λ·A_dense_{i,t} (SPEC §2, seed 000
// Eq. 3), with aDense's shape. With λ = 0 every A_{i,t} is A_out_i itself,
// bit for bit (nothing is added, so a NaN or -0 in aDense cannot leak in):
// plain outcome GRPO.
//
// It panics when len(aOut) != len(aDense), a programming error.
func Combine(aOut []float64, aDense [][]float64, lambda float64) [][]float64 {
	if len(aOut) != len(aDense) {
		panic(fmt.Sprintf("grpo.Combine: %d outcome advantages for %d rollouts", len(aOut), len(aDense)))
	}
	adv := make([][]float64, len(aDense))
	for i, row := range aDense {
		adv[i] = make([]float64, len(row))
		for t, d := range row {
			if lambda == 0 {
				adv[i][t] = aOut[i]
			} else {
				adv[i][t] = aOut[i] + lambda*d
			}
		}
	}
	return adv
}

// GroupStats describes one group for seed 000 Figure 7.
type GroupStats struct {
	// Scored counts the rollouts with a non-NaN R_out.
	Scored int
	// Dead is true when the group has at least two scored rollouts and
	// all their R_out are exactly equal (float ==), so the outcome
	// advantage is zero (Figure 7a-b).
	Dead bool
	// Separated is true when the group is dead and the dense advantage
	// still tells its scored rollouts apart: for some pair i, j and turn
	// t, |A_dense_{i,t} - A_dense_{j,t}| > SeparateTolerance, where a turn
	// beyond a rollout's length counts as A_dense = 0 (Figure 7b).
	//
	// Choice: padding with 0 means rollouts of different lengths are
	// separated only when the longer one's extra turns carry a non-zero
	// dense advantage; rollouts whose A_dense is all zero give no
	// gradient whatever their lengths. Separated does not depend on λ: at
	// λ = 0 it says what the dense term would have separated.
	Separated bool
	// MeanAbsOut is the mean of |A_out_i| and MeanAbsDense the mean of
	// |λ·A_dense_{i,t}|, both over every turn (i, t) of the scored
	// rollouts: the two terms' contributions to A_{i,t} (Figure 7c). 0
	// when there is no such turn.
	MeanAbsOut, MeanAbsDense float64
}

// Parts is one group's advantages term by term, as AnalyzeParts returns
// them. Rows follow the group's rollouts; Dense and A have the dense
// rewards' shape.
type Parts struct {
	// Out is A_out_i (OutcomeAdvantages).
	Out []float64
	// Dense is A_dense_{i,t} (DenseAdvantages over the scored rollouts;
	// all 0 for a failed rollout), unscaled by λ.
	Dense [][]float64
	// A is A_{i,t} = A_out_i + λ·A_dense_{i,t} (Combine).
	A [][]float64
	// Stats describes the group.
	Stats GroupStats
}

// Analyze computes one group's advantages A_{i,t} and its GroupStats; it
// is AnalyzeParts without the separate terms. rOut[i] is rollout i's
// R_out (NaN for a failed episode) and dense[i] its per-turn dense
// rewards (NaN = missing), as in DenseAdvantages.
//
// Errors: as AnalyzeParts.
func Analyze(rOut []float64, dense [][]float64, cfg Config) ([][]float64, GroupStats, error) {
	p, err := AnalyzeParts(rOut, dense, cfg)
	return p.A, p.Stats, err
}

// AnalyzeParts computes one group's advantages with OutcomeAdvantages,
// DenseAdvantages and Combine (λ = cfg.Lambda; SPEC §2, seed 000 Eq. 3)
// and its GroupStats (seed 000 Figure 7). Arguments as in Analyze.
//
// Choice: a rollout with NaN R_out (failed) is left out entirely: its
// dense rewards do not enter the group's statistics and every one of its
// turns gets advantage 0.
//
// Errors: ErrReward (wrapped) when len(rOut) != len(dense) or a reward is
// infinite; ErrConfig for a bad cfg.Eps, cfg.StdDDOF or cfg.Lambda
// (negative or non-finite).
func AnalyzeParts(rOut []float64, dense [][]float64, cfg Config) (Parts, error) {
	var p Parts
	if len(rOut) != len(dense) {
		return p, fmt.Errorf("%w: %d outcome rewards for %d rollouts", ErrReward, len(rOut), len(dense))
	}
	if math.IsNaN(cfg.Lambda) || math.IsInf(cfg.Lambda, 0) || cfg.Lambda < 0 {
		return p, fmt.Errorf("%w: lambda = %v, want a finite value >= 0", ErrConfig, cfg.Lambda)
	}
	aOut, err := OutcomeAdvantages(rOut, cfg)
	if err != nil {
		return p, err
	}
	masked := make([][]float64, len(dense))
	for i, row := range dense {
		if math.IsNaN(rOut[i]) {
			masked[i] = make([]float64, len(row))
			for t := range row {
				masked[i][t] = math.NaN()
			}
			continue
		}
		masked[i] = row
	}
	aDense, err := DenseAdvantages(masked, cfg)
	if err != nil {
		return p, err
	}
	p = Parts{Out: aOut, Dense: aDense, A: Combine(aOut, aDense, cfg.Lambda)}

	st := &p.Stats
	first := -1
	st.Dead = true
	turns := 0
	for i, r := range rOut {
		if math.IsNaN(r) {
			continue
		}
		st.Scored++
		if first < 0 {
			first = i
		} else if r != rOut[first] {
			st.Dead = false
		}
		for t := range aDense[i] {
			st.MeanAbsOut += math.Abs(aOut[i])
			if cfg.Lambda != 0 {
				st.MeanAbsDense += math.Abs(cfg.Lambda * aDense[i][t])
			}
			turns++
		}
	}
	if st.Scored < 2 {
		st.Dead = false
	}
	if turns > 0 {
		st.MeanAbsOut /= float64(turns)
		st.MeanAbsDense /= float64(turns)
	}
	if st.Dead {
		st.Separated = separated(rOut, aDense)
	}
	return p, nil
}

// separated reports whether two scored rollouts' dense advantages differ
// by more than SeparateTolerance at some turn, padding with zeros.
func separated(rOut []float64, aDense [][]float64) bool {
	first := -1
	for i, r := range rOut {
		if math.IsNaN(r) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		a, b := aDense[first], aDense[i]
		for t := range max(len(a), len(b)) {
			var x, y float64
			if t < len(a) {
				x = a[t]
			}
			if t < len(b) {
				y = b[t]
			}
			if math.Abs(x-y) > SeparateTolerance {
				return true
			}
		}
	}
	return false
}
