package stats

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

// sigEqual reports whether got rounds to want at the given number of
// significant digits, i.e. |got - want| is at most half a unit in the last
// printed digit of want (plus 1e-9 relative slack for float noise).
func sigEqual(got, want float64, digits int) bool {
	if want == 0 {
		return got == 0
	}
	unit := math.Pow(10, math.Floor(math.Log10(math.Abs(want)))-float64(digits-1))
	return math.Abs(got-want) <= unit/2*(1+1e-9)
}

func TestMcNemarExactStatsmodels(t *testing.T) {
	// statsmodels stats/tests/test_nonparametric.py (test_mcnemar_exact):
	// tables [[a, b], [c, d]], discordant b and c; p printed to 7 digits
	// (4.434449e-06) or 6 (the others); we compare at the printed digits.
	cases := []struct {
		b, c   int
		want   float64
		digits int
	}{
		{121, 59, 4.434449e-06, 7},
		{70, 59, 0.378688, 6},
		{80, 59, 0.089452, 5},
		{30, 60, 0.002060, 4},
		{10, 30, 0.002221, 4},
		{10, 10, 1.0, 7},
	}
	for _, c := range cases {
		if got := McNemarExact(c.b, c.c); !sigEqual(got, c.want, c.digits) {
			t.Errorf("McNemarExact(%d, %d) = %.7g, want %v", c.b, c.c, got, c.want)
		}
	}
}

func TestMcNemarExactSeed000Table5(t *testing.T) {
	// Seed 000, Table 5: Probe-RPO's win/loss on full acceptance against
	// each prompted baseline and the McNemar p it reports (2 significant
	// digits): Haiku 40/8, GPT 43/10, Qwen3-14B 51/6, Llama 55/3.
	cases := []struct {
		win, loss int
		want      float64
	}{
		{40, 8, 3.3e-06},
		{43, 10, 5.6e-06},
		{51, 6, 5.7e-10},
		{55, 3, 2.3e-13},
	}
	for _, c := range cases {
		if got := McNemarExact(c.win, c.loss); !sigEqual(got, c.want, 2) {
			t.Errorf("McNemarExact(%d, %d) = %.3g, want %.2g", c.win, c.loss, got, c.want)
		}
	}
}

func TestMcNemarChi2Statsmodels(t *testing.T) {
	// statsmodels test_nonparametric.py (test_mcnemar_chisquare): table
	// [[101, 121], [59, 33]]: 20.67222 (p 5.450095e-06) with the
	// continuity correction, 21.35556 (p 3.815136e-06) without.
	chi, p := McNemarChi2(121, 59, true)
	if !sigEqual(chi, 20.67222, 7) || !sigEqual(p, 5.450095e-06, 7) {
		t.Errorf("corrected: chi2 %.7g p %.7g, want 20.67222, 5.450095e-06", chi, p)
	}
	chi, p = McNemarChi2(121, 59, false)
	if !sigEqual(chi, 21.35556, 7) || !sigEqual(p, 3.815136e-06, 7) {
		t.Errorf("uncorrected: chi2 %.7g p %.7g, want 21.35556, 3.815136e-06", chi, p)
	}
	// b+c = 0 and b = c (R's mcnemar.test: no correction when b = c).
	if chi, p := McNemarChi2(0, 0, true); chi != 0 || p != 1 {
		t.Errorf("McNemarChi2(0,0) = %v, %v; want 0, 1", chi, p)
	}
	if chi, p := McNemarChi2(7, 7, true); chi != 0 || p != 1 {
		t.Errorf("McNemarChi2(7,7,true) = %v, %v; want 0, 1", chi, p)
	}
	// (|3-1|-1)^2/4 = 0.25; P(chi2_1 > 0.25) = P(|Z| > 0.5) = 0.617075.
	if chi, p := McNemarChi2(3, 1, true); chi != 0.25 || !sigEqual(p, 0.6170751, 7) {
		t.Errorf("McNemarChi2(3,1,true) = %v, %v; want 0.25, 0.6170751", chi, p)
	}
}

func TestMcNemarProperties(t *testing.T) {
	// Small hand case: b=0, c=3: 2 P(X <= 0), X ~ Bin(3, 1/2) = 2/8.
	if got := McNemarExact(0, 3); !near(got, 0.25, 1e-14) {
		t.Errorf("McNemarExact(0, 3) = %v, want 0.25", got)
	}
	if got := McNemarExact(0, 0); got != 1 {
		t.Errorf("McNemarExact(0, 0) = %v, want 1", got)
	}
	for b := 0; b <= 40; b++ {
		for c := 0; c <= 40; c++ {
			p, q := McNemarExact(b, c), McNemarExact(c, b)
			if p != q || !(p > 0 && p <= 1) {
				t.Fatalf("McNemarExact(%d,%d) = %v, (%d,%d) = %v: want equal, in (0,1]", b, c, p, c, b, q)
			}
			if b == c && p != 1 {
				t.Fatalf("McNemarExact(%d,%d) = %v, want 1", b, c, p)
			}
			x1, p1 := McNemarChi2(b, c, true)
			x2, p2 := McNemarChi2(c, b, true)
			if x1 != x2 || p1 != p2 {
				t.Fatalf("McNemarChi2 not symmetric at %d,%d", b, c)
			}
		}
	}
	if !math.IsNaN(McNemarExact(-1, 3)) {
		t.Error("negative count: want NaN")
	}
	// Large counts stay finite and exact-ish: b=c±1 near n=10^5 gives p~1.
	if p := McNemarExact(50000, 50001); !(p > 0.99 && p <= 1) {
		t.Errorf("McNemarExact(50000, 50001) = %v, want ~1", p)
	}
}

func TestMcNemarExactRational(t *testing.T) {
	// Against exact rational arithmetic: 2 sum_{i<=k} C(n,i) / 2^n, to
	// 1e-11 relative (Lgamma's error in the log of the top term; the
	// worst case here, 1/998 with p ~ 4e-298, is off by 1.4e-12).
	for _, bc := range [][2]int{{121, 59}, {40, 8}, {55, 3}, {60, 0}, {3, 1}, {500, 400}, {1, 998}} {
		n, k := bc[0]+bc[1], min(bc[0], bc[1])
		sum := new(big.Int)
		for i := 0; i <= k; i++ {
			sum.Add(sum, new(big.Int).Binomial(int64(n), int64(i)))
		}
		r := new(big.Rat).SetFrac(sum.Lsh(sum, 1), new(big.Int).Lsh(big.NewInt(1), uint(n)))
		want, _ := r.Float64()
		want = math.Min(want, 1)
		if got := McNemarExact(bc[0], bc[1]); math.Abs(got/want-1) > 1e-11 {
			t.Errorf("McNemarExact(%d, %d) = %.17g, exact %.17g", bc[0], bc[1], got, want)
		}
	}
}

var scipyD = []float64{6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75}

func TestWilcoxonExactScipy(t *testing.T) {
	// scipy stats/_morestats.py, wilcoxon docstring (Darwin's height
	// differences): two-sided statistic 24 (ranks of 48 and 67: 10 + 14),
	// exact p 0.041259765625 = 1352/32768; 'greater' statistic W+ = 96, p
	// 0.0206298828125.
	r, err := Wilcoxon(scipyD, WilcoxonOptions{})
	if err != nil || r.Statistic != 24 || math.Abs(r.P-0.041259765625) > 1e-15 || r.Method != "exact" || r.N != 15 || !math.IsNaN(r.Z) {
		t.Errorf("two-sided: %+v, %v; want statistic 24, p 0.041259765625, exact", r, err)
	}
	r, err = Wilcoxon(scipyD, WilcoxonOptions{Alternative: "greater"})
	if err != nil || r.Statistic != 96 || math.Abs(r.P-0.0206298828125) > 1e-15 {
		t.Errorf("greater: %+v, %v; want statistic 96, p 0.0206298828125", r, err)
	}
	// 'less' is the other tail: P(W+ <= 96) = 1 - P(W+ >= 97) = 1 - P(W+ <= 23).
	r, _ = Wilcoxon(scipyD, WilcoxonOptions{Alternative: "less"})
	if want := 1 - (0.0206298828125 - 1.0/32768*countSum(15, 24)); math.Abs(r.P-want) > 1e-12 || r.Statistic != 96 {
		t.Errorf("less: %+v, want p %v", r, want)
	}
}

// countSum counts the subsets of {1..n} whose sum is w, by brute force
// (independent of signedRankDist).
func countSum(n, w int) float64 {
	c := 0
	for m := 0; m < 1<<n; m++ {
		s := 0
		for r := 1; r <= n; r++ {
			if m&(1<<(r-1)) != 0 {
				s += r
			}
		}
		if s == w {
			c++
		}
	}
	return float64(c)
}

func TestSignedRankDistBruteForce(t *testing.T) {
	for _, n := range []int{1, 3, 8, 12} {
		p := signedRankDist(n)
		total := 0.0
		for w := range p {
			want := countSum(n, w) / math.Pow(2, float64(n))
			if math.Abs(p[w]-want) > 1e-15 {
				t.Fatalf("n=%d: P(W+=%d) = %v, want %v", n, w, p[w], want)
			}
			total += p[w]
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("n=%d: total %v", n, total)
		}
	}
}

func TestWilcoxonApproxR(t *testing.T) {
	// scipy stats/tests/test_morestats.py (TestWilcoxon, values from R's
	// wilcox.test(x, y, paired=TRUE, exact=FALSE)): T = 34, p = 0.6948866
	// without and 0.7240817 with the continuity correction.
	x := []float64{120, 114, 181, 188, 180, 146, 121, 191, 132, 113, 127, 112}
	y := []float64{133, 143, 119, 189, 112, 199, 198, 113, 115, 121, 142, 187}
	r, err := WilcoxonPaired(x, y, WilcoxonOptions{Method: "approx"})
	if err != nil || r.Statistic != 34 || !sigEqual(r.P, 0.6948866, 7) || r.Method != "approx" {
		t.Errorf("uncorrected: %+v, %v; want T 34, p 0.6948866", r, err)
	}
	r, err = WilcoxonPaired(x, y, WilcoxonOptions{Method: "approx", Correction: true})
	if err != nil || r.Statistic != 34 || !sigEqual(r.P, 0.7240817, 7) {
		t.Errorf("corrected: %+v, %v; want T 34, p 0.7240817", r, err)
	}
	// W+ = 34 (the statistic is min(W+, W-) = W+ here, W- = 44), mu = 39,
	// sigma^2 = 12*13*25/24 = 162.5: Z = -5/sqrt(162.5) = -0.3922323.
	if !sigEqual(r.Z, -(5-0.5)/math.Sqrt(162.5), 9) {
		t.Errorf("corrected Z = %v, want %v", r.Z, -(5-0.5)/math.Sqrt(162.5))
	}
}

func TestWilcoxonSmallExact(t *testing.T) {
	// d = 1, 2, 3: W+ = 6, the maximum; P(W+ >= 6) = 1/8 (one subset of
	// 8), two-sided 2/8.
	d := []float64{1, 2, 3}
	for _, c := range []struct {
		alt  string
		stat float64
		p    float64
	}{{"two-sided", 0, 0.25}, {"greater", 6, 0.125}, {"less", 6, 1}} {
		r, err := Wilcoxon(d, WilcoxonOptions{Alternative: c.alt})
		if err != nil || r.Statistic != c.stat || r.P != c.p {
			t.Errorf("%s: %+v, %v; want statistic %v, p %v", c.alt, r, err, c.stat, c.p)
		}
	}
	// d = 1, 2, -3: W+ = 3 = W-, the null median: two-sided p = 1.
	if r, _ := Wilcoxon([]float64{1, 2, -3}, WilcoxonOptions{}); r.P != 1 || r.Statistic != 3 {
		t.Errorf("balanced: %+v, want statistic 3, p 1", r)
	}
}

func TestWilcoxonZeroMethods(t *testing.T) {
	// d = 0, 0, 1, -2, 3, 3, -4 (two zeros, one tie). Hand computation:
	//
	// pratt/zsplit rank all |d|: 0,0 -> 1.5,1.5; 1 -> 3; 2 -> 4; 3,3 ->
	// 5.5,5.5; 4 -> 7. N = 7.
	//   pratt:  W+ = 3+5.5+5.5 = 14, W- = 4+7 = 11 (zero ranks dropped).
	//           mu = 7*8/4 - 2*3/4 = 12.5;
	//           24 sigma^2 = 7*8*15 - 2*3*5 - (2^3-2)/2 = 840-30-3 = 807
	//           (the zeros form no tie group), sigma = 5.7987068;
	//           Z = 1.5/sigma = 0.2586784, p = 2 P(Z > 0.2586784) = 0.7958834.
	//   zsplit: W+ = 14 + 1.5 = 15.5, W- = 11 + 1.5 = 12.5 (sum 28).
	//           mu = 14; 24 sigma^2 = 840 - (6 + 6)/2 = 834 (zero group and
	//           the 3s), sigma = 5.8949131; Z = 0.2544567, p = 0.7991428.
	// wilcox drops the zeros: 1,-2,3,3,-4 ranked 1,2,3.5,3.5,5; N = 5,
	//           W+ = 8, W- = 7; mu = 7.5; 24 sigma^2 = 330 - 3 = 327,
	//           sigma = 3.6912058; Z = 0.1354571, p = 0.8922505.
	// (p from 2*0.5*erfc(Z/sqrt2), computed with Python's math.erfc.)
	// With zeros, auto uses the normal approximation.
	d := []float64{0, 0, 1, -2, 3, 3, -4}
	cases := []struct {
		zm         string
		stat, z, p float64
		n          int
	}{
		{"pratt", 11, 0.2586784, 0.7958834, 7},
		{"zsplit", 12.5, 0.2544567, 0.7991428, 7},
		{"wilcox", 7, 0.1354571, 0.8922505, 5},
		{"", 7, 0.1354571, 0.8922505, 5},
	}
	for _, c := range cases {
		r, err := Wilcoxon(d, WilcoxonOptions{ZeroMethod: c.zm})
		if err != nil || r.Statistic != c.stat || r.N != c.n || r.Method != "approx" ||
			!sigEqual(r.Z, c.z, 7) || !sigEqual(r.P, c.p, 7) {
			t.Errorf("%q: %+v, %v; want statistic %v, Z %v, p %v, N %d", c.zm, r, err, c.stat, c.z, c.p, c.n)
		}
	}
	// One-sided statistic is W+: 14 (pratt), 15.5 (zsplit).
	if r, _ := Wilcoxon(d, WilcoxonOptions{ZeroMethod: "pratt", Alternative: "greater"}); r.Statistic != 14 || !sigEqual(r.P, 0.7958834/2, 7) {
		t.Errorf("pratt greater: %+v, want W+ 14, p %v", r, 0.7958834/2)
	}
	if r, _ := Wilcoxon(d, WilcoxonOptions{ZeroMethod: "zsplit", Alternative: "less"}); r.Statistic != 15.5 || !sigEqual(r.P, 1-0.7991428/2, 7) {
		t.Errorf("zsplit less: %+v, want W+ 15.5, p %v", r, 1-0.7991428/2)
	}
}

func TestWilcoxonAutoRule(t *testing.T) {
	// Ties without zeros: approx. |d| = 1, 1, 2: ranks 1.5, 1.5, 3.
	if r, _ := Wilcoxon([]float64{1, -1, 2}, WilcoxonOptions{}); r.Method != "approx" {
		t.Errorf("ties: method %s, want approx", r.Method)
	}
	// n = 50 untied: exact; n = 51: approx.
	d := make([]float64, 51)
	for i := range d {
		d[i] = float64(i + 1)
		if i%3 == 0 {
			d[i] = -d[i]
		}
	}
	if r, _ := Wilcoxon(d[:50], WilcoxonOptions{}); r.Method != "exact" {
		t.Errorf("n=50: method %s, want exact", r.Method)
	}
	if r, _ := Wilcoxon(d, WilcoxonOptions{}); r.Method != "approx" {
		t.Errorf("n=51: method %s, want approx", r.Method)
	}
	// Forcing exact with ties rounds conservatively. d = 1, -1, 2: ranks
	// 1.5, 1.5, 3, so W+ = 4.5 and W- = 1.5. The n = 3 null puts 1/8 on each
	// subset sum of {1,2,3}: 0,1,2,3,3,4,5,6. P(W+ >= floor 4.5 = 4) = 3/8,
	// P(W+ <= ceil 4.5 = 5) = 7/8; two-sided p = 2 * 3/8 = 0.75.
	if r, _ := Wilcoxon([]float64{1, -1, 2}, WilcoxonOptions{Method: "exact"}); r.Method != "exact" || r.P != 0.75 || r.Statistic != 1.5 {
		t.Errorf("forced exact with ties: %+v, want p 0.75, statistic 1.5", r)
	}
}

func TestWilcoxonSignFlip(t *testing.T) {
	x := []float64{0.5, -1.25, 2, 3.5, -0.75, 4, 1, 2.5, -3, 5.5, 0, 2, -0.5}
	neg := make([]float64, len(x))
	for i, v := range x {
		neg[i] = -v
	}
	for _, o := range []WilcoxonOptions{
		{}, {Correction: true}, {ZeroMethod: "pratt"}, {ZeroMethod: "zsplit", Correction: true},
		{Method: "exact"}, {Method: "approx"},
	} {
		a, err1 := Wilcoxon(x, o)
		b, err2 := Wilcoxon(neg, o)
		if err1 != nil || err2 != nil || a.Statistic != b.Statistic || math.Abs(a.P-b.P) > 1e-15 || a.Method != b.Method {
			t.Errorf("%+v: %+v vs flipped %+v (%v, %v)", o, a, b, err1, err2)
		}
		if a.Method == "approx" && math.Abs(a.Z+b.Z) > 1e-12 {
			t.Errorf("%+v: Z %v, flipped %v: want negated", o, a.Z, b.Z)
		}
	}
	// One-sided: greater on d equals less on -d.
	a, _ := Wilcoxon(scipyD, WilcoxonOptions{Alternative: "greater"})
	neg = make([]float64, len(scipyD))
	for i, v := range scipyD {
		neg[i] = -v
	}
	b, _ := Wilcoxon(neg, WilcoxonOptions{Alternative: "less"})
	if a.P != b.P {
		t.Errorf("greater(d) p %v != less(-d) p %v", a.P, b.P)
	}
}

func TestWilcoxonErrors(t *testing.T) {
	for _, o := range []WilcoxonOptions{{ZeroMethod: "drop"}, {Alternative: "two_sided"}, {Method: "asymptotic"}} {
		if _, err := Wilcoxon([]float64{1, 2}, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := Wilcoxon([]float64{1, math.NaN()}, WilcoxonOptions{}); err == nil {
		t.Error("NaN: no error")
	}
	for _, zm := range []string{"wilcox", "pratt", "zsplit"} {
		if _, err := Wilcoxon([]float64{0, 0, 0}, WilcoxonOptions{ZeroMethod: zm}); !errors.Is(err, ErrNoDifferences) {
			t.Errorf("%s all zeros: err %v, want ErrNoDifferences", zm, err)
		}
	}
	if _, err := Wilcoxon(nil, WilcoxonOptions{}); !errors.Is(err, ErrNoDifferences) {
		t.Errorf("empty: err %v, want ErrNoDifferences", err)
	}
	if _, err := WilcoxonPaired([]float64{1}, []float64{1, 2}, WilcoxonOptions{}); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := WilcoxonPaired([]float64{1, 2}, []float64{1, math.NaN()}, WilcoxonOptions{}); err == nil {
		t.Error("paired NaN: no error")
	}
}

// efronX is the sample of scipy's bootstrap tests against R's boot.
var efronX = []float64{10, 12, 12.5, 12.5, 13.9, 15, 21, 22, 23, 34, 50, 81, 89, 121, 134, 213}

func meanOf(x []float64) func(idx []int) float64 {
	return func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += x[i]
		}
		return s / float64(len(idx))
	}
}

func TestBootstrapAgainstR(t *testing.T) {
	// scipy stats/tests/test_resampling.py (test_bootstrap_against_R): 95%
	// intervals for the mean of efronX from R's boot.ci at 10^6 resamples:
	// basic (23.77, 79.12), percentile (28.86, 84.21), BCa (32.31, 91.43).
	//
	// Tolerance: we draw B = 200,000 resamples (~50 ms per method) and
	// accept rtol 0.015. The Monte Carlo error of an interval end falls as
	// 1/sqrt(B); over seeds 1..5 at this B the relative deviations from R
	// had a spread of about 0.5% (largest 0.78%), which includes the error
	// of R's own 10^6-resample values, so 0.015 is ~3 standard deviations.
	// The three methods differ by 10-20% at the lower end, so the test
	// still tells them apart. Seed 1 is the first seed tried.
	want := map[string][2]float64{
		"basic":      {23.77, 79.12},
		"percentile": {28.86, 84.21},
		"bca":        {32.31, 91.43},
	}
	for _, m := range []string{"basic", "percentile", "bca"} {
		ci, err := Bootstrap(len(efronX), meanOf(efronX), BootstrapOptions{Resamples: 200000, Method: m, Seed: 1})
		w := want[m]
		if err != nil || math.Abs(ci.Lo/w[0]-1) > 0.015 || math.Abs(ci.Hi/w[1]-1) > 0.015 {
			t.Errorf("%s: [%.3f, %.3f], %v; want [%v, %v] within rtol 0.015", m, ci.Lo, ci.Hi, err, w[0], w[1])
		}
		// Mean of efronX = 863.9/16 = 53.99375.
		if !near(ci.Estimate, 53.99375, 1e-12) || ci.Method != m || ci.Level != 0.95 || ci.Resamples != 200000 {
			t.Errorf("%s: CI fields %+v", m, ci)
		}
	}
}

func TestBootstrapSeedsAndMethods(t *testing.T) {
	o := BootstrapOptions{Resamples: 2000, Seed: 42}
	a, _ := Bootstrap(len(efronX), meanOf(efronX), o)
	b, _ := Bootstrap(len(efronX), meanOf(efronX), o)
	if a != b {
		t.Errorf("same seed: %+v vs %+v", a, b)
	}
	o.Seed = 43
	c, _ := Bootstrap(len(efronX), meanOf(efronX), o)
	if c.Lo == a.Lo && c.Hi == a.Hi {
		t.Errorf("different seed gave the same interval %+v", c)
	}
	// Percentile equals the legacy BootstrapCI on the same seed; basic is
	// its reflection about the estimate.
	lo, hi := BootstrapCI(len(efronX), meanOf(efronX), 2000, 0.95, 42)
	if a.Lo != lo || a.Hi != hi || a.Method != "percentile" {
		t.Errorf("percentile %+v != BootstrapCI [%v, %v]", a, lo, hi)
	}
	o.Seed, o.Method = 42, "basic"
	bs, _ := Bootstrap(len(efronX), meanOf(efronX), o)
	if !near(bs.Lo, 2*a.Estimate-a.Hi, 1e-12) || !near(bs.Hi, 2*a.Estimate-a.Lo, 1e-12) {
		t.Errorf("basic %+v is not percentile %+v reflected", bs, a)
	}
	// Defaults: 10,000 resamples, 95 %, percentile.
	d, err := Bootstrap(3, meanOf([]float64{1, 2, 3}), BootstrapOptions{})
	if err != nil || d.Resamples != 10000 || d.Level != 0.95 || d.Method != "percentile" || d.Estimate != 2 {
		t.Errorf("defaults: %+v, %v", d, err)
	}
}

func TestJackknifeAccel(t *testing.T) {
	// For the mean, a = sum (x-m)^3 / (6 (sum (x-m)^2)^1.5): x = 1, 2, 6,
	// m = 3, deviations -2, -1, 3: 18 / (6 * 14^1.5) = 0.05727027.
	if a := jackknifeAccel(3, meanOf([]float64{1, 2, 6})); !sigEqual(a, 0.05727027, 7) {
		t.Errorf("accel = %v, want 0.05727027", a)
	}
	if a := jackknifeAccel(1, meanOf([]float64{1})); a != 0 {
		t.Errorf("n=1 accel = %v, want 0", a)
	}
}

func TestBootstrapErrors(t *testing.T) {
	m := meanOf(efronX)
	n := len(efronX)
	for _, o := range []BootstrapOptions{{Resamples: -1}, {Level: 1}, {Level: -0.5}, {Method: "BCa"}} {
		if _, err := Bootstrap(n, m, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if _, err := Bootstrap(0, m, BootstrapOptions{}); err == nil {
		t.Error("n = 0: no error")
	}
	if _, err := Bootstrap(3, func([]int) float64 { return math.NaN() }, BootstrapOptions{}); err == nil {
		t.Error("NaN estimate: no error")
	}
	// Finite on the full sample, NaN on every resample with a repeat.
	distinctOnly := func(idx []int) float64 {
		seen := map[int]bool{}
		for _, i := range idx {
			if seen[i] {
				return math.NaN()
			}
			seen[i] = true
		}
		return 1
	}
	if _, err := Bootstrap(20, distinctOnly, BootstrapOptions{Resamples: 100}); err == nil {
		t.Error("all-NaN replicates: no error")
	}
	// BCa with every replicate below the estimate: the number of distinct
	// indices is 20 on the full sample and (almost surely) fewer on every
	// resample, so z0 = +Inf.
	distinct := func(idx []int) float64 {
		seen := map[int]bool{}
		for _, i := range idx {
			seen[i] = true
		}
		return float64(len(seen))
	}
	if _, err := Bootstrap(20, distinct, BootstrapOptions{Resamples: 200, Method: "bca"}); err == nil {
		t.Error("bca with z0 infinite: no error")
	}
}

func TestPairedDiffCI(t *testing.T) {
	// a = b + 1 on every pair: every resample's mean difference is exactly
	// 1, for every method (bca: z0 = 0 as all replicates tie the estimate,
	// a = 0 as the jackknife values are equal). An unpaired resampling of
	// a and b would spread widely.
	b := []float64{3, -1, 1, -3, 3, 1, -1, 3, -3, 1}
	a := make([]float64, len(b))
	for i := range b {
		a[i] = b[i] + 1
	}
	for _, m := range []string{"percentile", "basic", "bca"} {
		ci, err := PairedDiffCI(a, b, BootstrapOptions{Resamples: 500, Method: m, Seed: 9})
		if err != nil || ci.Estimate != 1 || ci.Lo != 1 || ci.Hi != 1 {
			t.Errorf("%s: %+v, %v; want [1, 1]", m, ci, err)
		}
	}
	// Equals Bootstrap on the differences with the same seed.
	x := []float64{3, 1, 1, -1, 3, -3, 1, 1, 3, -1, 1, 3}
	y := []float64{1, 1, -1, -1, 1, -3, -1, 1, 1, 1, -1, -1}
	d := make([]float64, len(x))
	for i := range x {
		d[i] = x[i] - y[i]
	}
	o := BootstrapOptions{Resamples: 3000, Method: "bca", Seed: 5}
	got, err1 := PairedDiffCI(x, y, o)
	want, err2 := Bootstrap(len(d), meanOf(d), o)
	if err1 != nil || err2 != nil || got != want {
		t.Errorf("PairedDiffCI %+v (%v) != Bootstrap on d %+v (%v)", got, err1, want, err2)
	}
	// mean(d) = 14/12; the interval brackets it.
	if !near(got.Estimate, 14.0/12, 1e-12) || !(got.Lo < got.Estimate && got.Estimate < got.Hi) {
		t.Errorf("estimate/interval: %+v", got)
	}
	if _, err := PairedDiffCI([]float64{1}, []float64{1, 2}, o); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := PairedDiffCI(nil, nil, o); err == nil {
		t.Error("empty: no error")
	}
	if _, err := PairedDiffCI([]float64{1, math.NaN()}, []float64{1, 2}, o); err == nil {
		t.Error("NaN: no error")
	}
}

// rep returns k copies of v appended to s.
func rep(s []int, v, k int) []int {
	for range k {
		s = append(s, v)
	}
	return s
}

func TestWeightedKappaSklearn(t *testing.T) {
	// scikit-learn metrics/tests/test_classification.py
	// (test_cohen_kappa), checked there to 3 or 4 decimals.
	y1 := rep(rep(nil, 0, 40), 1, 60)
	y2 := rep(rep(rep(rep(nil, 0, 20), 1, 20), 0, 10), 1, 50)
	if k, err := WeightedKappa(y1, y2, Unweighted); err != nil || !near(k, 0.348, 5e-4) {
		t.Errorf("binary: %v, %v; want 0.348", k, err)
	}
	y1 = rep(rep(rep(nil, 0, 46), 1, 44), 2, 10)
	y2 = rep(rep(rep(nil, 0, 52), 1, 32), 2, 16)
	if k, err := WeightedKappa(y1, y2, Unweighted); err != nil || !near(k, 0.8013, 5e-5) {
		t.Errorf("3 classes: %v, %v; want 0.8013", k, err)
	}
	y2 = rep(rep(rep(nil, 0, 50), 1, 40), 2, 10)
	for _, c := range []struct {
		w    Weighting
		want float64
	}{{Unweighted, 0.9315}, {Linear, 0.9412}, {Quadratic, 0.9541}} {
		if k, err := WeightedKappa(y1, y2, c.w); err != nil || !near(k, c.want, 5e-5) {
			t.Errorf("%v: %v, %v; want %v", c.w, k, err, c.want)
		}
	}
	// Unweighted equals Kappa; labels count by position, not value.
	k0, _ := Kappa(y1, y2)
	k1, _ := WeightedKappa(y1, y2, Unweighted)
	if !near(k0, k1, 1e-12) {
		t.Errorf("WeightedKappa unweighted %v != Kappa %v", k1, k0)
	}
	relabel := func(s []int) []int {
		out := make([]int, len(s))
		for i, v := range s {
			out[i] = []int{-7, 5, 90}[v]
		}
		return out
	}
	if k, _ := WeightedKappa(relabel(y1), relabel(y2), Quadratic); !near(k, 0.9541, 5e-5) {
		t.Errorf("relabelled quadratic %v, want 0.9541", k)
	}
}

func TestWeightedKappaEdges(t *testing.T) {
	if k, _ := WeightedKappa([]int{2, 2}, []int{2, 2}, Linear); !math.IsNaN(k) {
		t.Errorf("single category: %v, want NaN", k)
	}
	if _, err := WeightedKappa([]int{1}, []int{1, 2}, Linear); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := WeightedKappa(nil, nil, Linear); err == nil {
		t.Error("empty: no error")
	}
	if _, err := WeightedKappa([]int{1, 2}, []int{2, 1}, Weighting(7)); err == nil {
		t.Error("unknown weighting: no error")
	}
	// 2x2 hand case: a = 0,0,1,1 b = 0,1,1,1. O = [[1,1],[0,2]], rows
	// (2,2), cols (1,3), E = [[0.5,1.5],[0.5,1.5]]. Linear and unweighted
	// agree for two categories: 1 - 1/(1.5+0.5) = 0.5; quadratic too.
	for _, w := range []Weighting{Unweighted, Linear, Quadratic} {
		if k, _ := WeightedKappa([]int{0, 0, 1, 1}, []int{0, 1, 1, 1}, w); !near(k, 0.5, 1e-12) {
			t.Errorf("%v: %v, want 0.5", w, k)
		}
	}
}

func TestWeightedKappaScaleByHand(t *testing.T) {
	// Two judges' pairwise labels lose < tie < win as -1, 0, 1 on 10
	// items, rows judge A, columns judge B:
	//
	//	        lose tie win | row
	//	lose      3   1   0  |  4
	//	tie       1   2   1  |  4
	//	win       1   0   1  |  2
	//	col       5   3   2  | 10
	//
	// Quadratic weights w_ij = (i - j)^2: 0 on the diagonal, 1 one step
	// apart, 4 for lose vs win. sum w O = 1 + 1 + 1 + 4*1 = 7.
	// E_ij = row_i col_j / 10: row lose [2.0 1.2 0.8], tie [2.0 1.2 0.8],
	// win [1.0 0.6 0.4]; sum w E = 1.2 + 4*0.8 + 2.0 + 0.8 + 4*1.0 + 0.6
	// = 11.8. kappa_w = 1 - 7/11.8 = 24/59 = 0.40678 (Cohen 1968).
	var a, b []int
	for _, c := range []struct{ x, y, n int }{{-1, -1, 3}, {-1, 0, 1}, {0, -1, 1}, {0, 0, 2}, {0, 1, 1}, {1, -1, 1}, {1, 1, 1}} {
		a, b = rep(a, c.x, c.n), rep(b, c.y, c.n)
	}
	for _, f := range []func() (float64, error){
		func() (float64, error) { return WeightedKappaScale(a, b, -1, 1, Quadratic) },
		func() (float64, error) { return WeightedKappa(a, b, Quadratic) }, // all three labels observed: the same
	} {
		if k, err := f(); err != nil || !near(k, 24.0/59, 1e-12) {
			t.Errorf("3x3 by hand: %v, %v; want 24/59", k, err)
		}
	}
	// 1..5 ratings a = 1, 2, 5 and b = 2, 1, 5: O has 1 at (1,2), (2,1),
	// (5,5); every marginal is 1, so E = 1/3 on the 3x3 block of {1, 2, 5}.
	// On the scale 1..5: sum w O = 1 + 1 = 2, sum w E = 2 (1 + 16 + 9)/3
	// = 52/3, kappa_w = 1 - 6/52 = 23/26. By observed position (1, 2, 5
	// as 0, 1, 2: weights 1, 4, 1) it would be 1 - 2/4 = 1/2.
	if k, err := WeightedKappaScale([]int{1, 2, 5}, []int{2, 1, 5}, 1, 5, Quadratic); err != nil || !near(k, 23.0/26, 1e-12) {
		t.Errorf("scale 1..5: %v, %v; want 23/26", k, err)
	}
	if k, _ := WeightedKappa([]int{1, 2, 5}, []int{2, 1, 5}, Quadratic); !near(k, 0.5, 1e-12) {
		t.Errorf("observed positions: %v, want 1/2", k)
	}
	if _, err := WeightedKappaScale([]int{1, 6}, []int{1, 2}, 1, 5, Quadratic); err == nil || !strings.Contains(err.Error(), "item 1: labels 6, 2 outside [1, 5]") {
		t.Errorf("out of scale: %v", err)
	}
	if _, err := WeightedKappaScale([]int{1}, []int{1}, 2, 1, Quadratic); err == nil {
		t.Error("empty scale: no error")
	}
	if k, _ := WeightedKappaScale([]int{3, 3}, []int{3, 3}, 1, 5, Quadratic); !math.IsNaN(k) {
		t.Errorf("one label throughout: %v, want NaN", k)
	}
}
