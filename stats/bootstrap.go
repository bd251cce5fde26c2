package stats

import (
	"fmt"
	"math"
	"math/bits"
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
	return percentileCI(replicates(n, stat, resamples, seed), level)
}

// replicates returns the finite values of stat over resamples bootstrap
// resamples of 0..n-1 (n draws with replacement each, from a PCG seeded
// with seed), in draw order; NaN replicates are dropped. idx is reused
// between calls, so stat must not keep it.
func replicates(n int, stat func(idx []int) float64, resamples int, seed uint64) []float64 {
	return replicatesMany(n, []func([]int) float64{stat}, resamples, seed)[0]
}

// replicatesMany is replicates for several statistics on the same
// resamples: one draw of idx per resample serves every statistic, so
// replicatesMany(n, {s1, s2}, B, seed) = {replicates(n, s1, B, seed),
// replicates(n, s2, B, seed)} at the cost of one stream of draws.
//
// Large jobs (n × resamples >= pipelineDraws) draw in one goroutine and
// evaluate in another, so that the two halves of the work run on two
// cores; the resamples and their order are the same either way.
func replicatesMany(n int, stats []func(idx []int) float64, resamples int, seed uint64) [][]float64 {
	d := drawer{newPCG(seed)}
	reps := make([][]float64, len(stats))
	for k := range reps {
		reps[k] = make([]float64, 0, resamples)
	}
	eval := func(idx []int) {
		for k, stat := range stats {
			if v := stat(idx); !math.IsNaN(v) {
				reps[k] = append(reps[k], v)
			}
		}
	}
	if n*resamples < pipelineDraws {
		idx := make([]int, n)
		for range resamples {
			d.fill(idx, n)
			eval(idx)
		}
		return reps
	}
	const buffers = 4
	free, full := make(chan []int, buffers), make(chan []int, buffers)
	for range buffers {
		free <- make([]int, n)
	}
	go func() {
		for range resamples {
			idx := <-free
			d.fill(idx, n)
			full <- idx
		}
		close(full)
	}()
	for idx := range full {
		eval(idx)
		free <- idx
	}
	return reps
}

// pipelineDraws is the job size (draws) from which replicatesMany draws
// and evaluates concurrently.
const pipelineDraws = 1 << 20

// newPCG is newRand's generator without the rand.Rand wrapper.
func newPCG(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x9e3779b97f4a7c15) }

// drawer draws indices exactly as newRand(seed).IntN does (math/rand/v2's
// Rand.IntN on a 64-bit platform, which a 32-bit one reproduces: a mask
// for a power of two, else Lemire's multiply-and-reject), calling the PCG
// directly instead of through the rand.Source interface. A test checks
// the sequences are equal.
type drawer struct{ p *rand.PCG }

// fill sets idx[i] to successive draws from [0, n), n > 0.
func (d drawer) fill(idx []int, n int) {
	un := uint64(n)
	if un&(un-1) == 0 {
		for i := range idx {
			idx[i] = int(d.p.Uint64() & (un - 1))
		}
		return
	}
	for i := range idx {
		hi, lo := bits.Mul64(d.p.Uint64(), un)
		if lo < un {
			thresh := -un % un
			for lo < thresh {
				hi, lo = bits.Mul64(d.p.Uint64(), un)
			}
		}
		idx[i] = int(hi)
	}
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

// BootstrapOptions configures Bootstrap. The zero value means 10,000
// resamples, a 95% percentile interval and seed 0.
type BootstrapOptions struct {
	// Resamples is the number of bootstrap replicates B; 0 means 10,000.
	// The Monte Carlo error of an interval end shrinks as 1/sqrt(B).
	Resamples int
	// Level is the coverage in (0, 1); 0 means 0.95.
	Level float64
	// Method is "percentile" (default, also ""), "basic" or "bca".
	Method string
	// Seed seeds the PCG that draws the resamples: same seed, same CI.
	Seed uint64
}

// CI is a bootstrap confidence interval.
type CI struct {
	// Estimate is the statistic on the full sample (all indices once).
	Estimate float64
	// Lo and Hi bound the interval, Lo <= Hi.
	Lo, Hi float64
	// Method is the interval method used: "percentile", "basic" or "bca".
	Method string
	// Level is the coverage, e.g. 0.95.
	Level float64
	// Resamples is the number of finite replicates the interval was built
	// from (replicates on which stat returned NaN are skipped).
	Resamples int
}

// Bootstrap returns a nonparametric bootstrap confidence interval (Efron &
// Tibshirani 1993) for a statistic of a sample of size n. stat evaluates
// the statistic on the items at the given indices (an index may repeat;
// the slice is reused, so stat must not keep it) and may return NaN on a
// resample where the statistic is undefined; such replicates are skipped.
// For paired data, stat reads both samples at the same indices, so each
// resample keeps pairs together.
//
// With q(p) the p-quantile of the B replicates (Quantile, Hyndman & Fan
// definition 7), alpha = 1 - Level and theta the Estimate:
//
//	percentile: [q(alpha/2), q(1-alpha/2)]                        (ch. 13)
//	basic:      [2 theta - q(1-alpha/2), 2 theta - q(alpha/2)]    (Davison & Hinkley 1997, §5.2)
//	bca:        [q(a1), q(a2)], a_i = Phi(z0 + (z0+z_i)/(1 - a(z0+z_i)))  (ch. 14)
//
// with z_1 = Phi^-1(alpha/2), z_2 = Phi^-1(1-alpha/2), the bias
// correction z0 = Phi^-1(share of replicates below theta) and the
// acceleration a = sum (m - theta_(i))^3 / (6 (sum (m - theta_(i))^2)^1.5)
// from the jackknife values theta_(i) = stat(all indices but i) and their
// mean m (a = 0 when they are all equal or n = 1). These match
// scipy.stats.bootstrap's "percentile", "basic" and "BCa" methods.
//
// Choice: in z0 a replicate equal to theta counts one half (as scipy
// does), so statistics with a discrete bootstrap distribution, such as a
// difference of success shares, are not biased by their ties.
//
// Errors: n <= 0; Resamples < 0; Level outside (0, 1); unknown Method; a
// NaN Estimate; no finite replicate; for "bca", all replicates on one side
// of the Estimate (z0 infinite). Same seed, same interval; with the same
// seed the replicates are those of BootstrapCI.
func Bootstrap(n int, stat func(idx []int) float64, o BootstrapOptions) (CI, error) {
	cis, err := BootstrapMany(n, []func([]int) float64{stat}, o)
	if err != nil {
		return CI{}, err
	}
	return cis[0], nil
}

// BootstrapMany returns Bootstrap's interval for each of several
// statistics of one sample, all from the same resamples: cis[k] equals
// Bootstrap(n, stats[k], o) exactly (same seed, same draws), but the
// resamples are drawn once instead of len(stats) times, which is most of
// the cost on large samples. Errors are Bootstrap's, for the first
// statistic that has one, and no statistics.
func BootstrapMany(n int, stats []func(idx []int) float64, o BootstrapOptions) ([]CI, error) {
	if len(stats) == 0 {
		return nil, fmt.Errorf("stats: Bootstrap: no statistic")
	}
	B, level, method := o.Resamples, o.Level, o.Method
	if B == 0 {
		B = 10000
	}
	if level == 0 {
		level = 0.95
	}
	if method == "" {
		method = "percentile"
	}
	switch {
	case n <= 0:
		return nil, fmt.Errorf("stats: Bootstrap: sample size %d, want > 0", n)
	case B < 0:
		return nil, fmt.Errorf("stats: Bootstrap: Resamples %d, want >= 0", o.Resamples)
	case !(level > 0 && level < 1):
		return nil, fmt.Errorf("stats: Bootstrap: Level %v, want in (0, 1)", o.Level)
	case method != "percentile" && method != "basic" && method != "bca":
		return nil, fmt.Errorf("stats: Bootstrap: Method %q: want percentile, basic or bca", o.Method)
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	ests := make([]float64, len(stats))
	for k, stat := range stats {
		if ests[k] = stat(all); math.IsNaN(ests[k]) {
			return nil, fmt.Errorf("stats: Bootstrap: statistic is NaN on the full sample")
		}
	}
	reps := replicatesMany(n, stats, B, o.Seed)
	cis := make([]CI, len(stats))
	for k, stat := range stats {
		ci, err := bootstrapCI(n, stat, ests[k], reps[k], B, level, method)
		if err != nil {
			return nil, err
		}
		cis[k] = ci
	}
	return cis, nil
}

// bootstrapCI builds Bootstrap's interval from the replicates reps of
// stat, whose full-sample value is est.
func bootstrapCI(n int, stat func([]int) float64, est float64, reps []float64, B int, level float64, method string) (CI, error) {
	if len(reps) == 0 {
		return CI{}, fmt.Errorf("stats: Bootstrap: all %d replicates are NaN", B)
	}
	slices.Sort(reps)
	ci := CI{Estimate: est, Method: method, Level: level, Resamples: len(reps)}
	alpha := 1 - level
	switch method {
	case "percentile":
		ci.Lo, ci.Hi = Quantile(reps, alpha/2), Quantile(reps, 1-alpha/2)
	case "basic":
		ci.Lo, ci.Hi = 2*est-Quantile(reps, 1-alpha/2), 2*est-Quantile(reps, alpha/2)
	case "bca":
		below := 0.0
		for _, v := range reps {
			if v < est {
				below++
			} else if v == est {
				below += 0.5
			}
		}
		z0 := normQuantile(below / float64(len(reps)))
		if math.IsInf(z0, 0) {
			return CI{}, fmt.Errorf("stats: Bootstrap: bca undefined: all replicates lie on one side of the estimate %v", est)
		}
		a := jackknifeAccel(n, stat)
		adj := func(p float64) float64 {
			zp := z0 + normQuantile(p)
			return normCDF(z0 + zp/(1-a*zp))
		}
		ci.Lo, ci.Hi = Quantile(reps, adj(alpha/2)), Quantile(reps, adj(1-alpha/2))
	}
	return ci, nil
}

// jackknifeAccel returns the BCa acceleration from the leave-one-out
// values of stat (Efron & Tibshirani 1993, ch. 14); 0 when n < 2, when
// fewer than two leave-one-out values are finite, or when they are all
// equal. NaN leave-one-out values are skipped.
func jackknifeAccel(n int, stat func(idx []int) float64) float64 {
	if n < 2 {
		return 0
	}
	idx := make([]int, n-1)
	vals := make([]float64, 0, n)
	for i := range n {
		k := 0
		for j := range n {
			if j != i {
				idx[k] = j
				k++
			}
		}
		if v := stat(idx); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if len(vals) < 2 {
		return 0
	}
	m := 0.0
	for _, v := range vals {
		m += v
	}
	m /= float64(len(vals))
	var s2, s3 float64
	for _, v := range vals {
		d := m - v
		s2 += d * d
		s3 += d * d * d
	}
	if s2 == 0 {
		return 0
	}
	return s3 / (6 * math.Pow(s2, 1.5))
}

// PairedDiffCI returns a bootstrap confidence interval (see Bootstrap) for
// the mean paired difference mean(a[i] - b[i]), resampling pairs i: e.g.
// per-scenario R_goal of two persuaders on the same scenarios, or their
// full-acceptance indicators (0/1) for the acceptance-rate margin. The
// Estimate is the observed mean difference.
//
// Errors: len(a) != len(b); no pairs; a NaN value; and those of
// Bootstrap.
func PairedDiffCI(a, b []float64, o BootstrapOptions) (CI, error) {
	cis, err := PairedDiffCIs([][]float64{a}, [][]float64{b}, o)
	if err != nil {
		return CI{}, err
	}
	return cis[0], nil
}

// PairedDiffCIs returns PairedDiffCI(a[k], b[k], o) for every k, from one
// stream of resamples (BootstrapMany): the samples must all have the same
// pairs, so that resampling pair i keeps every a[k][i], b[k][i] together.
// The result equals the separate calls exactly (same seed, same draws) at
// the cost of one: 'persuarena compare' draws its acceptance-margin and
// R_goal-difference intervals so.
//
// Errors: no samples; len(a) != len(b); samples of different lengths; and
// those of PairedDiffCI.
func PairedDiffCIs(a, b [][]float64, o BootstrapOptions) ([]CI, error) {
	if len(a) == 0 || len(a) != len(b) {
		return nil, fmt.Errorf("stats: PairedDiffCI: %d and %d samples", len(a), len(b))
	}
	n := len(a[0])
	stats := make([]func([]int) float64, len(a))
	for k := range a {
		if len(a[k]) != len(b[k]) {
			return nil, fmt.Errorf("stats: PairedDiffCI: %d and %d values", len(a[k]), len(b[k]))
		}
		if len(a[k]) != n {
			return nil, fmt.Errorf("stats: PairedDiffCI: samples of %d and %d pairs", n, len(a[k]))
		}
		if n == 0 {
			return nil, fmt.Errorf("stats: PairedDiffCI: no pairs")
		}
		d := make([]float64, n)
		for i := range d {
			if math.IsNaN(a[k][i]) || math.IsNaN(b[k][i]) {
				return nil, fmt.Errorf("stats: PairedDiffCI: pair %d has a NaN", i)
			}
			d[i] = a[k][i] - b[k][i]
		}
		stats[k] = func(idx []int) float64 {
			s := 0.0
			for _, i := range idx {
				s += d[i]
			}
			return s / float64(len(idx))
		}
	}
	return BootstrapMany(n, stats, o)
}
