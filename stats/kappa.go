package stats

import (
	"fmt"
	"math"
	"slices"
)

// Kappa returns Cohen's unweighted kappa (Cohen 1960) for two raters who
// labelled the same items, a[i] and b[i] being their labels for item i:
//
//	kappa = (p_o - p_e) / (1 - p_e)
//
// with p_o the observed share of agreement and p_e = sum_c pa(c) pb(c) the
// agreement expected from each rater's label frequencies. It is 1 for
// perfect agreement, 0 at chance level and negative below chance. It is NaN
// when p_e = 1 (both raters used one and the same label throughout), where
// kappa is undefined (sklearn's cohen_kappa_score also gives NaN).
//
// Errors: len(a) != len(b), or no items.
func Kappa[T comparable](a, b []T) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("stats: Kappa: %d and %d labels", len(a), len(b))
	}
	if len(a) == 0 {
		return 0, fmt.Errorf("stats: Kappa: no items")
	}
	n := float64(len(a))
	// Label counts in order of first appearance (not map order), so the
	// floating-point sum below is the same on every run.
	slot := map[T]int{}
	var ca, cb []float64
	at := func(c T) int {
		i, ok := slot[c]
		if !ok {
			i = len(ca)
			slot[c] = i
			ca, cb = append(ca, 0), append(cb, 0)
		}
		return i
	}
	agree := 0.0
	for i := range a {
		ca[at(a[i])]++
		cb[at(b[i])]++
		if a[i] == b[i] {
			agree++
		}
	}
	po := agree / n
	pe := 0.0
	for c := range ca {
		pe += ca[c] / n * cb[c] / n
	}
	if pe >= 1 {
		return math.NaN(), nil
	}
	return (po - pe) / (1 - pe), nil
}

// Weighting selects the disagreement weights of WeightedKappa.
type Weighting int

const (
	// Unweighted counts every disagreement fully: w_ij = 1 for i != j.
	Unweighted Weighting = iota
	// Linear weights a disagreement by the category distance |i - j|.
	Linear
	// Quadratic weights a disagreement by (i - j)^2.
	Quadratic
)

// String returns "unweighted", "linear" or "quadratic".
func (w Weighting) String() string {
	switch w {
	case Unweighted:
		return "unweighted"
	case Linear:
		return "linear"
	case Quadratic:
		return "quadratic"
	}
	return fmt.Sprintf("Weighting(%d)", int(w))
}

// WeightedKappa returns Cohen's weighted kappa (Cohen 1968) for two raters
// who gave ordinal integer labels a[i] and b[i] to the same items:
//
//	kappa_w = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij
//
// where O is the confusion matrix of counts, E_ij = rowsum_i colsum_j / n
// the counts expected from the raters' marginals, and w_ij the weight of
// the disagreement between the i-th and j-th category (w_ii = 0). The
// categories are the sorted union of the labels observed in a and b, and
// i, j are their positions in it, not the label values: labels {1, 5, 9}
// are 0, 1, 2 apart. This is scikit-learn's cohen_kappa_score(a, b,
// weights=None|"linear"|"quadratic"). Unweighted gives the same value as
// Kappa. It is at most 1 (perfect agreement), 0 at chance level and
// negative below it; NaN when sum w E = 0 (a single category in use).
//
// Errors: len(a) != len(b); no items; an unknown Weighting.
func WeightedKappa(a, b []int, w Weighting) (float64, error) {
	if err := checkKappa("WeightedKappa", a, b, w); err != nil {
		return 0, err
	}
	cats := append(slices.Clone(a), b...)
	slices.Sort(cats)
	return weightedKappa(a, b, slices.Compact(cats), w), nil
}

// WeightedKappaScale is WeightedKappa over the fixed ordinal scale lo, lo
// + 1, ..., hi rather than the labels observed: the disagreement weight of
// labels x and y is |x - y| (Linear) or (x - y)^2 (Quadratic) even when
// values between them were never used, as for 1..5 ratings or the
// lose < tie < win labels -1, 0, 1 of a pairwise preference (the
// PersuHMM paper's quadratic-weighted kappa between evaluators). It
// equals scikit-learn's cohen_kappa_score(a, b, labels=range(lo, hi+1),
// weights=...). NaN when sum w E = 0.
//
// Errors: len(a) != len(b); no items; lo > hi; a label outside [lo, hi];
// an unknown Weighting.
func WeightedKappaScale(a, b []int, lo, hi int, w Weighting) (float64, error) {
	if err := checkKappa("WeightedKappaScale", a, b, w); err != nil {
		return 0, err
	}
	if lo > hi {
		return 0, fmt.Errorf("stats: WeightedKappaScale: scale [%d, %d] is empty", lo, hi)
	}
	for i := range a {
		if a[i] < lo || a[i] > hi || b[i] < lo || b[i] > hi {
			return 0, fmt.Errorf("stats: WeightedKappaScale: item %d: labels %d, %d outside [%d, %d]", i, a[i], b[i], lo, hi)
		}
	}
	cats := make([]int, 0, hi-lo+1)
	for v := lo; v <= hi; v++ {
		cats = append(cats, v)
	}
	return weightedKappa(a, b, cats, w), nil
}

// checkKappa returns fn's error for unequal lengths, no items or an
// unknown weighting.
func checkKappa(fn string, a, b []int, w Weighting) error {
	switch {
	case len(a) != len(b):
		return fmt.Errorf("stats: %s: %d and %d labels", fn, len(a), len(b))
	case len(a) == 0:
		return fmt.Errorf("stats: %s: no items", fn)
	case w != Unweighted && w != Linear && w != Quadratic:
		return fmt.Errorf("stats: %s: unknown weighting %v", fn, w)
	}
	return nil
}

// weightedKappa is kappa_w of labels a, b (all in the sorted categories
// cats) with weights by position in cats.
func weightedKappa(a, b, cats []int, w Weighting) float64 {
	k := len(cats)
	pos := func(v int) int { i, _ := slices.BinarySearch(cats, v); return i }
	obs := make([]float64, k*k)
	row := make([]float64, k)
	col := make([]float64, k)
	for i := range a {
		r, c := pos(a[i]), pos(b[i])
		obs[r*k+c]++
		row[r]++
		col[c]++
	}
	n := float64(len(a))
	var num, den float64
	for i := range k {
		for j := range k {
			var wij float64
			d := float64(i - j)
			switch w {
			case Unweighted:
				if i != j {
					wij = 1
				}
			case Linear:
				wij = math.Abs(d)
			case Quadratic:
				wij = d * d
			}
			num += wij * obs[i*k+j]
			den += wij * row[i] * col[j] / n
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return 1 - num/den
}
