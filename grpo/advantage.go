package grpo

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/persuarena/persuarena/stats"
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

// moments returns the mean and std (n - ddof in the denominator) of xs,
// and whether xs are tied: fewer than two values, or every deviation from
// the mean at most TieTolerance·max(1, |mean|). xs must be finite.
func moments(xs []float64, ddof int) (mean, std float64, tied bool) {
	n := len(xs)
	if n < 2 {
		return 0, 0, true
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean = sum / float64(n)
	maxDev, ss := 0.0, 0.0
	for _, x := range xs {
		d := x - mean
		maxDev = math.Max(maxDev, math.Abs(d))
		ss += d * d
	}
	if maxDev <= TieTolerance*math.Max(1, math.Abs(mean)) {
		return mean, 0, true
	}
	return mean, math.Sqrt(ss / float64(n-ddof)), false
}

// normalize returns (x_i - mean)/(std + eps) for the n values of xs
// (Probe-RPO paper Eq. 3; DeepSeekMath §4.1.2-4.1.3), with moments' mean
// and std. Tied values (moments) give exact zeros. xs must be finite.
func normalize(xs []float64, eps float64, ddof int) []float64 {
	z := make([]float64, len(xs))
	mean, std, tied := moments(xs, ddof)
	if tied {
		return z
	}
	for i, x := range xs {
		z[i] = (x - mean) / (std + eps)
	}
	return z
}

// OutcomeAdvantages returns the group-relative outcome advantage of each
// rollout of one group (one scenario's G rollouts):
//
//	A_out_i = (R_out_i - mean_G R_out) / (std_G R_out + ε)
//
// (the Probe-RPO paper's Eq. 3 outcome term, DeepSeekMath §4.1.2), with ε =
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

// Combine returns A_{i,t} = A_out_i + λ·A_dense_{i,t} (Probe-RPO paper, Eq.
// 3), with aDense's shape. With λ = 0 every A_{i,t} is A_out_i itself, bit
// for bit (nothing is added, so a NaN or -0 in aDense cannot leak in): plain
// outcome GRPO.
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

// GroupStats describes one group for the Probe-RPO paper's Figure 7.
type GroupStats struct {
	// Scored counts the rollouts with a non-NaN R_out.
	Scored int
	// Dead is true when the group has at least two scored rollouts and
	// all their R_out are exactly equal (float ==), so the outcome
	// advantage is zero (Figure 7a-b).
	Dead bool
	// Separated is true when the group is dead and the weighted dense
	// term still tells its scored rollouts apart at the first turn: for
	// some pair i, j, |λ·A_dense_{i,1} - λ·A_dense_{j,1}| >
	// cfg.SeparateThreshold (Figure 7b). A rollout without turns counts
	// as A_dense = 0.
	//
	// Choice: the first turn, because A_dense_{i,1} is the whole
	// episode's dense credit in the reward-to-go modes and the turn every
	// rollout has; a threshold of 0.1 on the λ-weighted term (a tenth of
	// the outcome advantage's unit scale) because continuous probe values
	// always differ by more than float rounding, so a near-zero threshold
	// would call every dead group separated. At λ = 0 nothing is
	// separated: the dense term carries no weight.
	Separated bool
	// Mixed is true when the scored rollouts do not all have the same
	// number of turns.
	Mixed bool
	// LengthCorr is the Pearson correlation, across the scored rollouts,
	// between A_dense at turn 1 and the number of turns, in [-1, 1]; NaN
	// when fewer than two rollouts are scored or either side is constant.
	// Strongly negative values mean the dense term ranks rollouts by
	// shortness rather than by belief (the bias of DensePooled).
	LengthCorr float64
	// ShortestTop is true when the group is Mixed and the rollout with
	// the strictly highest A_dense at turn 1 has the fewest turns. A tie
	// for the top (within TieTolerance) gives false.
	ShortestTop bool
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
// DenseAdvantages and Combine (λ = cfg.Lambda; Probe-RPO paper, Eq. 3)
// and its GroupStats (Probe-RPO paper, Figure 7). Arguments as in Analyze.
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
	lengthStats(st, rOut, aDense, cfg)
	return p, nil
}

// firstTurn returns A_dense at turn 1 of each scored rollout (0 for a
// rollout without turns) and its number of turns.
func firstTurn(rOut []float64, aDense [][]float64) (a1, turns []float64) {
	for i, r := range rOut {
		if math.IsNaN(r) {
			continue
		}
		x := 0.0
		if len(aDense[i]) > 0 {
			x = aDense[i][0]
		}
		a1 = append(a1, x)
		turns = append(turns, float64(len(aDense[i])))
	}
	return a1, turns
}

// lengthStats fills st's Separated, Mixed, LengthCorr and ShortestTop
// (see GroupStats) from the group's dense advantages.
func lengthStats(st *GroupStats, rOut []float64, aDense [][]float64, cfg Config) {
	a1, turns := firstTurn(rOut, aDense)
	st.LengthCorr = math.NaN()
	if len(a1) < 2 {
		return
	}
	lo, hi := slices.Min(a1), slices.Max(a1)
	st.Separated = st.Dead && cfg.Lambda*(hi-lo) > cfg.SeparateThreshold
	minT, maxT := slices.Min(turns), slices.Max(turns)
	st.Mixed = minT != maxT
	st.LengthCorr = pearson(a1, turns)
	if st.Mixed {
		// Values within TieTolerance of the top tie with it.
		tol := TieTolerance * math.Max(1, math.Abs(hi))
		top, n := -1, 0
		for i, x := range a1 {
			if hi-x <= tol {
				top, n = i, n+1
			}
		}
		st.ShortestTop = n == 1 && turns[top] == minT
	}
}

// pearson is the sample correlation of x and y (equal lengths >= 2);
// NaN when either is constant within TieTolerance (moments), so rounding
// residue is never read as a correlation.
func pearson(x, y []float64) float64 {
	if _, _, tied := moments(x, 0); tied {
		return math.NaN()
	}
	if _, _, tied := moments(y, 0); tied {
		return math.NaN()
	}
	return stats.Pearson(x, y)
}
