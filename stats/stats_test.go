package stats

import (
	"errors"
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestAUC(t *testing.T) {
	cases := []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		// sklearn roc_auc_score([0,0,1,1],[0.1,0.4,0.35,0.8]) = 0.75: of the
		// 4 positive/negative pairs only (0.35 vs 0.4) is ordered wrongly.
		{"sklearn doc example", []float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true}, 0.75},
		// pairs: 2>1 (1), 2=2 (1/2), 3>1 (1), 3>2 (1) -> 3.5/4.
		{"one tie", []float64{1, 2, 2, 3}, []bool{false, true, false, true}, 0.875},
		{"all tied", []float64{0.5, 0.5, 0.5, 0.5}, []bool{true, false, true, false}, 0.5},
		{"reversed", []float64{3, 2, 1}, []bool{false, true, true}, 0},
		{"perfect", []float64{0.9, 0.1, 0.8}, []bool{true, false, true}, 1},
	}
	for _, c := range cases {
		got, err := AUC(c.scores, c.labels)
		if err != nil || !near(got, c.want, 1e-12) {
			t.Errorf("%s: AUC = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

func TestAUCErrors(t *testing.T) {
	if _, err := AUC([]float64{1, 2}, []bool{true, true}); !errors.Is(err, ErrEmptyClass) {
		t.Errorf("no negatives: err = %v, want ErrEmptyClass", err)
	}
	if _, err := AUC([]float64{1}, []bool{true, false}); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := AUC([]float64{math.NaN(), 1}, []bool{true, false}); err == nil {
		t.Error("NaN score: no error")
	}
	if _, _, err := AUCCI([]float64{1, 2}, []bool{false, false}, 100, 0.95, 1); !errors.Is(err, ErrEmptyClass) {
		t.Errorf("AUCCI no positives: err = %v", err)
	}
}

func TestQuantile(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	// numpy.percentile([1,2,3,4], [0,25,50,97.5,100]) = 1, 1.75, 2.5, 3.925, 4
	for _, c := range []struct{ q, want float64 }{{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.975, 3.925}, {1, 4}} {
		if got := Quantile(x, c.q); !near(got, c.want, 1e-12) {
			t.Errorf("Quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("Quantile(empty) not NaN")
	}
}

func TestBootstrapCI(t *testing.T) {
	x := []float64{0, 1}
	mean := func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += x[i]
		}
		return s / float64(len(idx))
	}
	// Replicate means of two draws are 0, 1/2, 1 with probabilities 1/4,
	// 1/2, 1/4, so with 10,000 replicates the 2.5% and 97.5% quantiles are
	// exactly 0 and 1 (P(fewer than 250 zeros) is astronomically small).
	lo, hi := BootstrapCI(2, mean, 10000, 0.95, 7)
	if lo != 0 || hi != 1 {
		t.Errorf("BootstrapCI mean{0,1} = [%v, %v], want [0, 1]", lo, hi)
	}
	// A 40% interval of the same: quantiles 0.30 and 0.70 fall well inside the
	// block of 1/2 values (which spans quantiles ~0.25 to ~0.75).
	lo, hi = BootstrapCI(2, mean, 10000, 0.4, 7)
	if lo != 0.5 || hi != 0.5 {
		t.Errorf("BootstrapCI 40%% = [%v, %v], want [0.5, 0.5]", lo, hi)
	}
	// Same seed, same interval; NaN replicates skipped; bad input NaN.
	x = []float64{0.3, 1.2, 2.2, 0.1, 5, 3.3, 0.7}
	a1, b1 := BootstrapCI(len(x), mean, 500, 0.9, 42)
	a2, b2 := BootstrapCI(len(x), mean, 500, 0.9, 42)
	if a1 != a2 || b1 != b2 || !(a1 < b1) {
		t.Errorf("not reproducible or empty: [%v,%v] vs [%v,%v]", a1, b1, a2, b2)
	}
	if lo, _ := BootstrapCI(3, func([]int) float64 { return math.NaN() }, 10, 0.95, 1); !math.IsNaN(lo) {
		t.Error("all-NaN replicates: want NaN")
	}
	if lo, _ := BootstrapCI(0, mean, 10, 0.95, 1); !math.IsNaN(lo) {
		t.Error("n = 0: want NaN")
	}
}

func TestAUCCI(t *testing.T) {
	// Perfect separation survives every stratified resample: [1, 1].
	lo, hi, err := AUCCI([]float64{0.9, 0.8, 0.1, 0.2, 0.3}, []bool{true, true, false, false, false}, 1000, 0.95, 3)
	if err != nil || lo != 1 || hi != 1 {
		t.Errorf("separable: [%v, %v], %v; want [1, 1]", lo, hi, err)
	}
	scores := []float64{0.1, 0.4, 0.35, 0.8, 0.5, 0.2, 0.7, 0.65, 0.3, 0.9}
	labels := []bool{false, false, true, true, false, false, true, false, true, true}
	a, _ := AUC(scores, labels)
	lo1, hi1, _ := AUCCI(scores, labels, 2000, 0.95, 11)
	lo2, hi2, _ := AUCCI(scores, labels, 2000, 0.95, 11)
	if lo1 != lo2 || hi1 != hi2 {
		t.Error("AUCCI not reproducible with the same seed")
	}
	if !(lo1 < a && a < hi1 && lo1 >= 0 && hi1 <= 1) {
		t.Errorf("AUCCI [%v, %v] does not bracket AUC %v inside [0,1]", lo1, hi1, a)
	}
}

func TestWilson(t *testing.T) {
	// 8/10 at 95%: [0.4902, 0.9433] (Wilson 1927; e.g. statsmodels
	// proportion_confint(8, 10, method="wilson")).
	lo, hi := Wilson(8, 10, Z95)
	if !near(lo, 0.4902, 5e-5) || !near(hi, 0.9433, 5e-5) {
		t.Errorf("Wilson(8,10) = [%v, %v], want [0.4902, 0.9433]", lo, hi)
	}
	// 0/10: lo = 0, hi = (z²/n)/(1+z²/n) = 0.384146/1.384146 = 0.27753.
	lo, hi = Wilson(0, 10, Z95)
	if lo != 0 || !near(hi, 0.27753, 5e-5) {
		t.Errorf("Wilson(0,10) = [%v, %v], want [0, 0.27753]", lo, hi)
	}
	if lo, hi := Wilson(0, 0, Z95); lo != 0 || hi != 1 {
		t.Errorf("Wilson(0,0) = [%v, %v], want [0, 1]", lo, hi)
	}
}

func TestKappa(t *testing.T) {
	// Textbook 2x2 table: yes/yes 20, yes/no 5, no/yes 10, no/no 15 (n=50).
	// p_o = 35/50 = 0.7; p_e = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = 0.4.
	var a, b []bool
	add := func(x, y bool, k int) {
		for range k {
			a, b = append(a, x), append(b, y)
		}
	}
	add(true, true, 20)
	add(true, false, 5)
	add(false, true, 10)
	add(false, false, 15)
	if k, err := Kappa(a, b); err != nil || !near(k, 0.4, 1e-12) {
		t.Errorf("Kappa = %v, %v; want 0.4", k, err)
	}
	if k, _ := Kappa([]int{1, 2, 3}, []int{1, 2, 3}); k != 1 {
		t.Errorf("perfect agreement kappa = %v, want 1", k)
	}
	// Disagreeing everywhere on a balanced binary task: p_o 0, p_e 0.5 -> -1.
	if k, _ := Kappa([]int{1, 0}, []int{0, 1}); !near(k, -1, 1e-12) {
		t.Errorf("total disagreement kappa = %v, want -1", k)
	}
	if k, _ := Kappa([]int{1, 1}, []int{1, 1}); !math.IsNaN(k) {
		t.Errorf("single shared label kappa = %v, want NaN", k)
	}
	if _, err := Kappa([]int{1}, []int{1, 2}); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := Kappa([]int{}, []int{}); err == nil {
		t.Error("empty: no error")
	}
}

func TestStratifiedAUC(t *testing.T) {
	// Stratum a: scores 1 (neg), 2 (pos), 3 (neg): pairs 2>1 (1), 2<3 (0)
	// -> U 1 of 2. Stratum b: 10 (pos), 10 (neg), 5 (neg): 10=10 (1/2),
	// 10>5 (1) -> U 1.5 of 2. Stratum c has positives only: no pair.
	// Pooled: (1 + 1.5) / 4 = 0.625. The plain AUC ranks b's scores above
	// a's and counts cross pairs too: positives 2, 10, 99 against
	// negatives 1, 3, 10, 5 give (1+0+0+0) + (1+1+0.5+1) + 4 = 8.5 of 12.
	scores := []float64{1, 2, 3, 10, 10, 5, 99}
	labels := []bool{false, true, false, true, false, false, true}
	strata := []string{"a", "a", "a", "b", "b", "b", "c"}
	got, err := StratifiedAUC(scores, labels, strata)
	if err != nil || !near(got, 0.625, 1e-12) {
		t.Errorf("StratifiedAUC = %v, %v; want 0.625", got, err)
	}
	if plain, _ := AUC(scores, labels); !near(plain, 8.5/12, 1e-12) {
		t.Errorf("AUC = %v, want %v", plain, 8.5/12)
	}
	// One stratum is the plain AUC.
	one := []string{"x", "x", "x", "x", "x", "x", "x"}
	if got, _ := StratifiedAUC(scores, labels, one); !near(got, 8.5/12, 1e-12) {
		t.Errorf("one stratum = %v, want %v", got, 8.5/12)
	}
	// A score that only ranks the strata scores 1/2, where the plain AUC
	// credits it: a = {0+, 0-, 0-}, b = {1+, 1+, 1-} pool to 6/9.
	so, sl, ss := []float64{0, 0, 0, 1, 1, 1}, []bool{true, false, false, true, true, false}, []string{"a", "a", "a", "b", "b", "b"}
	if got, _ := StratifiedAUC(so, sl, ss); got != 0.5 {
		t.Errorf("strata-only score = %v, want 0.5", got)
	}
	if plain, _ := AUC(so, sl); !near(plain, 6.0/9, 1e-12) {
		t.Errorf("strata-only score, plain AUC = %v, want 6/9", plain)
	}
	if _, err := StratifiedAUC([]float64{1, 2}, []bool{true, false}, []string{"a", "b"}); !errors.Is(err, ErrEmptyClass) {
		t.Errorf("no within-stratum pair: err = %v", err)
	}
	if _, err := StratifiedAUC([]float64{1}, []bool{true}, nil); err == nil {
		t.Error("length mismatch: no error")
	}
	if _, err := StratifiedAUC([]float64{math.NaN(), 1}, []bool{true, false}, []string{"a", "a"}); err == nil {
		t.Error("NaN: no error")
	}
}
