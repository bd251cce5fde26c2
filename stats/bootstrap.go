package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// newRand returns the PCG generator used for all resampling, seeded with
// seed and a fixed stream constant so that equal seeds give equal draws.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// BootstrapCI returns a percentile-bootstrap confidence interval (Efron &
// Tibshirani 1993, ch. 13) for a statistic of a sample of size n. Each of
// resamples replicates draws n indices uniformly with replacement from
// 0..n-1 and evaluates stat on them; lo and hi are the (1-level)/2 and
// (1+level)/2 quantiles of the replicates (Quantile, linear interpolation).
// level is the coverage, e.g. 0.95.
//
// stat may return NaN to mark a resample on which the statistic is
// undefined; such replicates are skipped. If n <= 0, resamples <= 0, level
// is outside (0, 1) or no replicate is finite, lo and hi are NaN. The
// draws come from a PCG seeded with seed: same seed, same interval.
func BootstrapCI(n int, stat func(idx []int) float64, resamples int, level float64, seed uint64) (lo, hi float64) {
	if n <= 0 || resamples <= 0 || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN()
	}
	r := newRand(seed)
	idx := make([]int, n)
	reps := make([]float64, 0, resamples)
	for range resamples {
		for i := range idx {
			idx[i] = r.IntN(n)
		}
		if v := stat(idx); !math.IsNaN(v) {
			reps = append(reps, v)
		}
	}
	return percentileCI(reps, level)
}

// percentileCI sorts reps and returns its (1-level)/2 and (1+level)/2
// quantiles, or NaNs when reps is empty.
func percentileCI(reps []float64, level float64) (lo, hi float64) {
	if len(reps) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(reps)
	a := (1 - level) / 2
	return Quantile(reps, a), Quantile(reps, 1-a)
}

// Quantile returns the q-quantile (q in [0, 1]) of sorted (ascending, no
// NaN) by linear interpolation between order statistics: with h = (n-1) q,
// x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]). This is Hyndman
// & Fan (1996) definition 7, the default of R's quantile and NumPy's
// percentile. It returns NaN for an empty slice.
func Quantile(sorted []float64, q float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	q = math.Min(math.Max(q, 0), 1)
	h := float64(n-1) * q
	i := int(math.Floor(h))
	if i >= n-1 {
		return sorted[n-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// AUCCI returns a percentile-bootstrap confidence interval for AUC(scores,
// labels) at coverage level (e.g. 0.95) from resamples replicates.
//
// Choice: the bootstrap is stratified, as pROC's ci.auc does by default
// (Robin et al. 2011): each replicate resamples the positives and the
// negatives separately, with replacement, keeping both class sizes. The
// AUC is a statistic conditional on the two class sizes, and stratifying
// means no replicate ever lacks a class, so none has to be skipped.
//
// Errors are those of AUC (length mismatch, NaN score, ErrEmptyClass).
// resamples <= 0 or level outside (0, 1) give NaN bounds and no error.
// Same seed, same interval.
func AUCCI(scores []float64, labels []bool, resamples int, level float64, seed uint64) (lo, hi float64, err error) {
	if _, err := AUC(scores, labels); err != nil {
		return math.NaN(), math.NaN(), err
	}
	if resamples <= 0 || !(level > 0 && level < 1) {
		return math.NaN(), math.NaN(), nil
	}
	var pos, neg []int
	for i, l := range labels {
		if l {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	r := newRand(seed)
	idx := make([]int, len(scores))
	reps := make([]float64, 0, resamples)
	for range resamples {
		k := 0
		for range pos {
			idx[k] = pos[r.IntN(len(pos))]
			k++
		}
		for range neg {
			idx[k] = neg[r.IntN(len(neg))]
			k++
		}
		a, err := aucIdx(scores, labels, idx)
		if err != nil { // cannot happen: both classes are kept
			return math.NaN(), math.NaN(), fmt.Errorf("stats: AUCCI: %w", err)
		}
		reps = append(reps, a)
	}
	lo, hi = percentileCI(reps, level)
	return lo, hi, nil
}
