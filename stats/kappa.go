package stats

import (
	"fmt"
	"math"
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
