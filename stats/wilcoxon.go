package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrNoDifferences is returned (wrapped) by Wilcoxon and WilcoxonPaired
// when the input is empty or every difference is zero: the signed-rank
// test then has nothing to rank. A caller comparing two systems that tie
// on every item may report p = 1 for it.
var ErrNoDifferences = errors.New("stats: Wilcoxon: no nonzero differences")

// WilcoxonExactMaxN is the largest sample size for which Method "auto"
// uses the exact null distribution (scipy.stats.wilcoxon's threshold).
const WilcoxonExactMaxN = 50

// WilcoxonOptions selects the variant of the signed-rank test. The zero
// value is the default test: zeros dropped, two-sided, no continuity
// correction, method chosen automatically.
type WilcoxonOptions struct {
	// ZeroMethod says what to do with zero differences:
	//   "wilcox" (default, also ""): drop them before ranking (Wilcoxon 1945);
	//   "pratt": rank them with the rest, then drop their ranks (Pratt 1959),
	//            with the null mean and variance adjusted (Cureton 1967);
	//   "zsplit": rank them with the rest and give half of each zero's rank
	//            to W+ and half to W-.
	ZeroMethod string
	// Alternative is "two-sided" (default, also ""), "greater" (the
	// differences tend to be positive) or "less".
	Alternative string
	// Correction applies a continuity correction of 0.5 to W+ toward the
	// null mean in the normal approximation; ignored by the exact method.
	Correction bool
	// Method is "auto" (default, also ""), "exact" or "approx". "auto" uses
	// the exact null distribution when n <= WilcoxonExactMaxN and there are
	// no zeros and no ties among |d|, else the normal approximation.
	Method string
}

// WilcoxonResult is the outcome of a Wilcoxon signed-rank test.
type WilcoxonResult struct {
	// Statistic follows scipy.stats.wilcoxon: min(W+, W-) for the
	// two-sided test, W+ (the sum of the ranks of the positive
	// differences) for "greater" and "less". Range [0, N(N+1)/2].
	Statistic float64
	// P is the p-value in [0, 1].
	P float64
	// Z is the standardised W+, (W+ - mean)/sd after the continuity
	// correction, positive when positive differences dominate; NaN for the
	// exact method. (scipy reports -|Z| as zstatistic in the two-sided
	// case.)
	Z float64
	// N is the number of differences ranked: the nonzero ones for
	// "wilcox", all of them for "pratt" and "zsplit".
	N int
	// Method is the method actually used: "exact" or "approx".
	Method string
}

// Wilcoxon runs the Wilcoxon signed-rank test (Wilcoxon 1945) on paired
// differences d (e.g. per-scenario R_goal of system A minus system B) for
// the null hypothesis that d is symmetric about zero. |d| is ranked, ties
// getting their average rank; W+ is the rank sum of the positive
// differences, W- of the negative ones, W+ + W- = N(N+1)/2 (less the zero
// ranks under "pratt"). It follows recent scipy.stats.wilcoxon (the
// _wilcoxon.py implementation) for the statistic, zero handling and both
// p-value methods:
//
// Exact: W+ has the null distribution of the sum of a random subset of
// {1..N} (each rank signed + with probability 1/2), computed by dynamic
// programming in O(N^3); with ties or zeros (only when "exact" is forced)
// the statistic is rounded conservatively (up for the lower tail, down for
// the upper one), so the p-value is not exact there. Two-sided p =
// min(1, 2 min(P(W+ <= w), P(W+ >= w))).
//
// Approx: z = (W+ - mu)/sigma with mu = N(N+1)/4 and
//
//	sigma^2 = N(N+1)(2N+1)/24 - sum_ties (t^3 - t)/48
//
// over the groups of t tied |d| (under "pratt" the n0 zeros are removed:
// mu -= n0(n0+1)/4, sigma^2 -= n0(n0+1)(2n0+1)/24, and they form no tie
// group); with Correction, z moves by 0.5/sigma toward zero (two-sided) or
// against the alternative (one-sided). Two-sided p = 2 P(Z > |z|).
//
// Choice: "auto" picks exact when N <= 50 and there are no zeros and no
// ties, else approx. Recent scipy instead runs an exhaustive permutation
// test when there are ties or zeros and N <= 13; we use the normal
// approximation there, as R's wilcox.test does.
//
// Errors: a NaN difference; an unknown option string; ErrNoDifferences
// (wrapped) when d is empty or all zero.
func Wilcoxon(d []float64, o WilcoxonOptions) (WilcoxonResult, error) {
	zm, alt, method, err := o.check()
	if err != nil {
		return WilcoxonResult{}, err
	}
	for i, v := range d {
		if math.IsNaN(v) {
			return WilcoxonResult{}, fmt.Errorf("stats: Wilcoxon: difference %d is NaN", i)
		}
	}
	// Values to rank: all |d| (pratt, zsplit) or the nonzero ones (wilcox).
	type item struct {
		a    float64 // |d|
		sign int     // -1, 0, +1
	}
	items := make([]item, 0, len(d))
	nzero := 0
	for _, v := range d {
		s := 0
		switch {
		case v > 0:
			s = 1
		case v < 0:
			s = -1
		default:
			nzero++
			if zm == "wilcox" {
				continue
			}
		}
		items = append(items, item{math.Abs(v), s})
	}
	if nzero == len(d) { // empty, or nothing but zeros
		return WilcoxonResult{}, fmt.Errorf("%w (%d values, %d zeros)", ErrNoDifferences, len(d), nzero)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].a < items[j].a })
	n := len(items)
	// Average ranks over tie groups; W+, W-, zero rank sum and tie term.
	var wPlus, wMinus, wZero, tieSum float64
	ties := false
	for i := 0; i < n; {
		j := i
		for j < n && items[j].a == items[i].a {
			j++
		}
		rank := float64(i+1+j) / 2
		t := float64(j - i)
		isZero := items[i].a == 0
		if t > 1 && !(isZero && zm == "pratt") {
			tieSum += t*t*t - t
		}
		if t > 1 && !isZero {
			ties = true
		}
		for k := i; k < j; k++ {
			switch items[k].sign {
			case 1:
				wPlus += rank
			case -1:
				wMinus += rank
			default:
				wZero += rank
			}
		}
		i = j
	}
	if zm == "zsplit" {
		wPlus += wZero / 2
		wMinus += wZero / 2
	}
	if method == "auto" {
		method = "approx"
		if n <= WilcoxonExactMaxN && nzero == 0 && !ties {
			method = "exact"
		}
	}
	res := WilcoxonResult{N: n, Method: method, Statistic: wPlus}
	if alt == "two-sided" {
		res.Statistic = math.Min(wPlus, wMinus)
	}
	if method == "exact" {
		res.Z = math.NaN()
		dist := signedRankDist(n)
		lower := func(w float64) float64 { // P(W+ <= w)
			k := min(int(math.Ceil(w)), len(dist)-1)
			s := 0.0
			for _, p := range dist[:k+1] {
				s += p
			}
			return s
		}
		upper := func(w float64) float64 { // P(W+ >= w)
			k := max(int(math.Floor(w)), 0)
			s := 0.0
			for _, p := range dist[k:] {
				s += p
			}
			return s
		}
		switch alt {
		case "less":
			res.P = lower(wPlus)
		case "greater":
			res.P = upper(wPlus)
		default:
			res.P = math.Min(1, 2*math.Min(lower(wPlus), upper(wPlus)))
		}
		return res, nil
	}
	nf := float64(n)
	mu := nf * (nf + 1) / 4
	v24 := nf * (nf + 1) * (2*nf + 1) // 24 sigma^2 before corrections
	if zm == "pratt" {
		z0 := float64(nzero)
		mu -= z0 * (z0 + 1) / 4
		v24 -= z0 * (z0 + 1) * (2*z0 + 1)
	}
	sigma := math.Sqrt((v24 - tieSum/2) / 24)
	z := (wPlus - mu) / sigma
	if o.Correction {
		var sign float64
		switch alt {
		case "greater":
			sign = 1
		case "less":
			sign = -1
		default:
			sign = float64(cmpSign(z))
		}
		z -= sign * 0.5 / sigma
	}
	res.Z = z
	switch alt {
	case "less":
		res.P = normCDF(z)
	case "greater":
		res.P = normSF(z)
	default:
		res.P = math.Min(1, 2*normSF(math.Abs(z)))
	}
	return res, nil
}

// WilcoxonPaired runs Wilcoxon on the differences x[i] - y[i] of paired
// samples (same item i in both). Errors: len(x) != len(y), a NaN value,
// and those of Wilcoxon.
func WilcoxonPaired(x, y []float64, o WilcoxonOptions) (WilcoxonResult, error) {
	if len(x) != len(y) {
		return WilcoxonResult{}, fmt.Errorf("stats: WilcoxonPaired: %d and %d values", len(x), len(y))
	}
	d := make([]float64, len(x))
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			return WilcoxonResult{}, fmt.Errorf("stats: WilcoxonPaired: pair %d has a NaN", i)
		}
		d[i] = x[i] - y[i]
	}
	return Wilcoxon(d, o)
}

// check validates the options and fills in the defaults.
func (o WilcoxonOptions) check() (zero, alt, method string, err error) {
	zero, alt, method = o.ZeroMethod, o.Alternative, o.Method
	if zero == "" {
		zero = "wilcox"
	}
	if alt == "" {
		alt = "two-sided"
	}
	if method == "" {
		method = "auto"
	}
	switch {
	case zero != "wilcox" && zero != "pratt" && zero != "zsplit":
		err = fmt.Errorf("stats: Wilcoxon: ZeroMethod %q: want wilcox, pratt or zsplit", o.ZeroMethod)
	case alt != "two-sided" && alt != "greater" && alt != "less":
		err = fmt.Errorf("stats: Wilcoxon: Alternative %q: want two-sided, greater or less", o.Alternative)
	case method != "auto" && method != "exact" && method != "approx":
		err = fmt.Errorf("stats: Wilcoxon: Method %q: want auto, exact or approx", o.Method)
	}
	return zero, alt, method, err
}

func cmpSign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// signedRankDist returns the null distribution of W+ for n untied nonzero
// differences: P(W+ = w) for w = 0..n(n+1)/2, built by adding rank r with
// sign + or - (probability 1/2 each) for r = 1..n. Probabilities rather
// than counts keep it finite for any n (counts reach 2^n).
func signedRankDist(n int) []float64 {
	top := n * (n + 1) / 2
	p := make([]float64, top+1)
	p[0] = 1
	hi := 0
	for r := 1; r <= n; r++ {
		hi += r
		for w := hi; w >= 0; w-- {
			v := p[w] / 2
			if w >= r {
				v += p[w-r] / 2
			}
			p[w] = v
		}
	}
	return p
}
